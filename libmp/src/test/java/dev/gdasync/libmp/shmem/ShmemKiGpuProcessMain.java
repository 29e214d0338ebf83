package dev.gdasync.libmp.shmem;

import dev.gdasync.ki.KiLaunch;
import dev.gdasync.ki.cuda.CudaKiExecutor;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.function.Function;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A PE of {@link ShmemKiGpuTest} (one process each, two PEs on one GPU): the shmem CUDA kernels launched by
 * {@link CudaKiExecutor} over launches {@link Shmem#kiPrepare} prepared for it, so the table, the state, this PE's
 * heap and staging and the peer's mapped heap are registered with the GPU. {@code ordering ROUNDS}: PE 0's blocks put
 * 4 KiB and flag it (put, fence, p; then put-with-signal), PE 1's blocks wait for the flag and count the bytes that
 * differ from the round's pattern ({@code gds_shmem_ordering}); {@code atomics K}: 2 blocks per PE, K fetch-adds each
 * on PE 0's counter ({@code gds_shmem_fetch_add}); {@code ops COUNT}: {@code gds_shmem_ops}' p, COUNT times, to the
 * other PE's word. One "OK" line per check.
 */
public final class ShmemKiGpuProcessMain {
    private static final int BLOCKS = 2;
    private static final int BYTES = 4096;
    /** Rounds per launch: a sender's round takes 2 slots toward the peer, so 2 blocks × 40 rounds × 2 = 160 slots. */
    private static final int ROUNDS_PER_LAUNCH = 40;
    private static final Duration JOIN = Duration.ofSeconds(120);

    private ShmemKiGpuProcessMain() {
    }

    /**
     * @param args {@code ordering ROUNDS}, {@code atomics K} or {@code ops COUNT}
     * @throws Exception a failure, which makes the PE exit non-zero
     */
    public static void main(String[] args) throws Exception {
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(Duration.ofSeconds(60));
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot, cfg);
             Shmem shmem = Shmem.init(mp, 4L << 20); CudaKiExecutor gpu = CudaKiExecutor.open(0)) {
            if (shmem.myPe() == 0) {
                System.out.println("shmem kernels on " + gpu.description());
            }
            int n = Integer.parseInt(args[1]);
            switch (args[0]) {
                case "ordering" -> ordering(shmem, gpu, n);
                case "atomics" -> atomics(shmem, gpu, n);
                case "ops" -> ops(shmem, gpu, n);
                default -> throw new IllegalArgumentException(args[0]);
            }
        }
    }

    /** Prepares a launch for the GPU, launches it, joins it and completes it. */
    private static void run(Shmem shmem, CudaKiExecutor gpu, int blocks, int slots, Function<ShmemKi, KiLaunch> launch) {
        ShmemKi ki = shmem.kiPrepare(gpu, blocks, slots, Duration.ofSeconds(60));
        try {
            launch.apply(ki).join(JOIN);
        } finally {
            ki.complete();
        }
    }

    private static void ordering(Shmem shmem, CudaKiExecutor gpu, int rounds) {
        int me = shmem.myPe();
        int peer = 1 - me;
        boolean sender = me == 0;
        MemorySegment data = shmem.calloc((long) BLOCKS * BYTES / 8, 8);
        MemorySegment flags = shmem.calloc(BLOCKS, 8);
        MemorySegment acks = shmem.calloc(BLOCKS, 8);
        MemorySegment mismatches = shmem.calloc(BLOCKS, 8);
        int launches = 0;
        for (boolean signal : new boolean[] {false, true}) {
            for (int from = 0; from < rounds; from += ROUNDS_PER_LAUNCH) {
                int count = Math.min(ROUNDS_PER_LAUNCH, rounds - from);
                // The kernel numbers rounds 1..count in every launch: flags and acks start again from 0.
                flags.fill((byte) 0);
                acks.fill((byte) 0);
                shmem.barrierAll();
                run(shmem, gpu, BLOCKS, 2 * BLOCKS * ROUNDS_PER_LAUNCH, ki -> gpu.shmemOrdering(ki.table(), ki.state(),
                        BLOCKS, data, flags, acks, BYTES, count, sender, signal, peer, mismatches));
                launches++;
                if (!sender) {
                    for (int b = 0; b < BLOCKS; b++) {
                        if (flags.getAtIndex(JAVA_LONG, b) != count) {
                            throw new AssertionError("block " + b + "'s flag is " + flags.getAtIndex(JAVA_LONG, b)
                                    + " after a launch of " + count + " rounds");
                        }
                    }
                }
                shmem.barrierAll();
            }
        }
        if (!sender) {
            long wrong = mismatches.getAtIndex(JAVA_LONG, 0) + mismatches.getAtIndex(JAVA_LONG, 1);
            if (wrong != 0) {
                throw new AssertionError(wrong + " bytes did not match their flag's round");
            }
            System.out.println("OK gpu ordering: " + BLOCKS + " blocks x " + rounds + " put+fence+p and " + rounds
                    + " putSignal of " + BYTES + " bytes from PE " + peer + " in " + launches + " launches, 0 mismatches");
        }
        shmem.barrierAll();
    }

    /** n PEs × 2 blocks × k fetch-adds on PE 0's counter: 2·n·k in all, every old value exactly once. */
    private static void atomics(Shmem shmem, CudaKiExecutor gpu, int k) {
        int n = shmem.nPes();
        int me = shmem.myPe();
        MemorySegment counter = shmem.calloc(1, 8);
        MemorySegment olds = shmem.calloc((long) BLOCKS * n * k, 8);
        MemorySegment mine = olds.asSlice(8L * BLOCKS * k * me, 8L * BLOCKS * k);
        shmem.barrierAll();
        run(shmem, gpu, BLOCKS, 1, ki -> gpu.shmemFetchAdd(ki.table(), ki.state(), BLOCKS, counter, k, 0, mine));
        if (me != 0) {
            shmem.put(mine, mine, 0);
        }
        shmem.barrierAll();
        if (me == 0) {
            long total = counter.get(JAVA_LONG, 0);
            boolean[] seen = new boolean[BLOCKS * n * k];
            for (int i = 0; i < seen.length; i++) {
                long v = olds.getAtIndex(JAVA_LONG, i);
                if (v < 0 || v >= seen.length || seen[(int) v]) {
                    throw new AssertionError("old value " + v + " is out of range or seen twice (olds[" + i + "])");
                }
                seen[(int) v] = true;
            }
            if (total != seen.length) {
                throw new AssertionError("the counter is " + total + ", not " + seen.length);
            }
            System.out.println("OK gpu atomics: " + n + " PEs x " + BLOCKS + " blocks x " + k + " fetch-adds gave " + total
                    + " and every old value 0.." + (total - 1) + " once");
        }
        shmem.barrierAll();
    }

    /** gds_shmem_ops' p: COUNT stores of 0..COUNT-1 to the other PE's word, in order: it ends at COUNT - 1. */
    private static void ops(Shmem shmem, CudaKiExecutor gpu, int count) {
        int me = shmem.myPe();
        MemorySegment word = shmem.calloc(1, 8);
        MemorySegment buf = shmem.calloc(1, 8);
        shmem.barrierAll();
        run(shmem, gpu, 1, count, ki -> gpu.shmemOps(ki.table(), ki.state(), 1, buf, buf, 8, word, count, 1 - me));
        shmem.barrierAll();
        long v = word.get(JAVA_LONG, 0);
        if (v != count - 1) {
            throw new AssertionError("the word the other PE's p wrote is " + v + ", not " + (count - 1));
        }
        System.out.println("OK gpu ops: " + count + " p from PE " + (1 - me) + " ended at " + v);
        shmem.barrierAll();
    }
}
