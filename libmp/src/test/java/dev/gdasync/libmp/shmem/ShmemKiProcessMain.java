package dev.gdasync.libmp.shmem;

import dev.gdasync.ki.KiException;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.ki.shmem.ShmemDevice;
import dev.gdasync.ki.shmem.ShmemKernel;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A PE of the KI-model shmem tests (one process each): the device API of {@code shmem.cuh} run by the host KI
 * executor's block threads over the templated slots {@link Shmem#kiPrepare} pre-filled. {@code ordering ROUNDS}: on a
 * ring, block 0 puts 64 KiB to the next PE and flags it (put, fence, p; then put-with-signal), block 1 waits for the
 * previous PE's flag and checks the payload; {@code atomics K}: 2 blocks per PE, K fetch-adds each on PE 0's counter;
 * {@code timeout}: a wait for a word nobody writes must end with a timeout error. One "OK" line per check.
 */
public final class ShmemKiProcessMain {
    private static final int PAYLOAD = 64 * 1024;
    /** Rounds per launch: a round uses 3 slots toward a PE at most (data, flag; ack), within the 256 slots. */
    private static final int ROUNDS_PER_LAUNCH = 80;
    private static final int EQ = ShmemDevice.CMP_EQ;
    private static final int GE = ShmemDevice.CMP_GE;

    private ShmemKiProcessMain() {
    }

    /**
     * @param args {@code ordering ROUNDS}, {@code atomics K} or {@code timeout}
     * @throws Exception a failure, which makes the PE exit non-zero
     */
    public static void main(String[] args) throws Exception {
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(Duration.ofSeconds(60));
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot, cfg);
             Shmem shmem = Shmem.init(mp, 4L << 20);
             HostKiExecutor executor = HostKiExecutor.create("shmem-ki-" + mp.rank(),
                     HostKiExecutor.Options.defaults().withAfterRing(mp::progressStoreRings))) {
            switch (args[0]) {
                case "ordering" -> ordering(shmem, executor, Integer.parseInt(args[1]));
                case "atomics" -> atomics(shmem, executor, Integer.parseInt(args[1]));
                case "timeout" -> timeout(shmem, executor);
                default -> throw new IllegalArgumentException(args[0]);
            }
        }
    }

    private static void run(Shmem shmem, HostKiExecutor executor, int blocks, int slots, Duration timeout,
                            ShmemKernel body) {
        ShmemKi ki = shmem.kiPrepare(executor, blocks, slots, timeout);
        try {
            executor.shmem(ki.table(), ki.state(), blocks, body).join(Duration.ofSeconds(120));
        } finally {
            ki.complete();
        }
    }

    private static void ordering(Shmem shmem, HostKiExecutor executor, int rounds) {
        int n = shmem.nPes();
        int me = shmem.myPe();
        int next = (me + 1) % n;
        int prev = (me + n - 1) % n;
        MemorySegment src = shmem.calloc(PAYLOAD / 8, 8);
        MemorySegment dest = shmem.calloc(PAYLOAD / 8, 8);
        MemorySegment flag = shmem.calloc(1, 8);
        MemorySegment ack = shmem.calloc(1, 8);
        shmem.barrierAll();
        AtomicLong mismatches = new AtomicLong();
        for (boolean signal : new boolean[] {false, true}) {
            for (int from = 0; from < rounds; from += ROUNDS_PER_LAUNCH) {
                // Rounds are numbered across launches and modes, so a flag never repeats a value.
                long base = (signal ? rounds : 0) + from + 1;
                int count = Math.min(ROUNDS_PER_LAUNCH, rounds - from);
                run(shmem, executor, 2, 3 * ROUNDS_PER_LAUNCH, Duration.ofSeconds(60), ctx -> {
                    for (long i = base; i < base + count; i++) {
                        if (ctx.block() == 0) {
                            fill(src, i);
                            if (signal) {
                                ctx.putSignalNbi(dest, src, flag, i, false, next);
                            } else {
                                ctx.putNbi(dest, src, next);
                                ctx.fence();
                                ctx.p(flag, i, next);
                            }
                            ctx.waitUntil(ack, GE, i); // the next PE checked round i: src and its dest are free
                        } else {
                            ctx.signalWaitUntil(flag, EQ, i);
                            for (int k = 0; k < PAYLOAD / 8; k++) {
                                if (dest.getAtIndex(JAVA_LONG, k) != i * 1_000_003L + k) {
                                    mismatches.incrementAndGet();
                                }
                            }
                            ctx.p(ack, i, prev);
                        }
                    }
                    ctx.quiet();
                });
            }
        }
        if (mismatches.get() != 0) {
            throw new AssertionError(mismatches.get() + " payload words did not match their flag's round");
        }
        System.out.println("OK ki ordering: " + rounds + " put+fence+p and " + rounds + " putSignal of " + PAYLOAD
                + " bytes from PE " + prev + ", 0 mismatches");
        shmem.barrierAll();
    }

    private static void fill(MemorySegment m, long i) {
        for (int k = 0; k < PAYLOAD / 8; k++) {
            m.setAtIndex(JAVA_LONG, k, i * 1_000_003L + k);
        }
    }

    /** n PEs × 2 blocks × k fetch-adds on PE 0's counter: 2·n·k in all, every old value exactly once. */
    private static void atomics(Shmem shmem, HostKiExecutor executor, int k) {
        int n = shmem.nPes();
        int me = shmem.myPe();
        MemorySegment counter = shmem.calloc(1, 8);
        MemorySegment olds = shmem.calloc(2L * n * k, 8);
        shmem.barrierAll();
        long[] mine = new long[2 * k];
        run(shmem, executor, 2, 1, Duration.ofSeconds(60), ctx -> {
            for (int i = 0; i < k; i++) {
                mine[ctx.block() * k + i] = ctx.atomicFetchAdd(counter, 1, 0);
            }
        });
        shmem.put(olds.asSlice(8L * 2 * k * me), MemorySegment.ofArray(mine), 0);
        shmem.barrierAll();
        if (me == 0) {
            long total = counter.get(JAVA_LONG, 0);
            boolean[] seen = new boolean[2 * n * k];
            for (int i = 0; i < 2 * n * k; i++) {
                long v = olds.getAtIndex(JAVA_LONG, i);
                if (v < 0 || v >= seen.length || seen[(int) v]) {
                    throw new AssertionError("old value " + v + " is out of range or seen twice");
                }
                seen[(int) v] = true;
            }
            if (total != 2L * n * k) {
                throw new AssertionError("the counter is " + total + ", not " + 2L * n * k);
            }
            System.out.println("OK ki atomics: " + n + " PEs x 2 blocks x " + k + " fetch-adds gave " + total
                    + " and every old value 0.." + (total - 1) + " once");
        }
        shmem.barrierAll();
    }

    /** A wait for a word nobody writes ends with the timeout error in the launch and in complete(). */
    private static void timeout(Shmem shmem, HostKiExecutor executor) {
        MemorySegment never = shmem.calloc(1, 8);
        shmem.barrierAll();
        ShmemKi ki = shmem.kiPrepare(executor, 1, 4, Duration.ofMillis(300));
        long t0 = System.nanoTime();
        String launch = "no error";
        try {
            executor.shmem(ki.table(), ki.state(), 1, ctx -> ctx.waitUntil(never, EQ, 42)).join(Duration.ofSeconds(60));
        } catch (KiException e) {
            launch = e.getMessage();
        }
        String completion = "no error";
        try {
            ki.complete();
        } catch (MpException e) {
            completion = e.getMessage();
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        if (!launch.contains("timed out waiting for the heap word") || !launch.contains("EQ 42")
                || !completion.contains("the shmem kernel failed")) {
            throw new AssertionError("expected a timeout error, got: launch '" + launch + "', complete '" + completion + "'");
        }
        System.out.printf("OK ki timeout: the wait ended with an error after %.0f ms: %s%n", ms, launch);
        shmem.barrierAll();
    }
}
