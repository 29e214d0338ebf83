package dev.gdasync.libmp.shmem;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A PE of the launcher-driven shmem tests (one process each): {@code exercise ITERATIONS} checks heap agreement,
 * {put 64 KiB; fence; p(flag, i)} and {putSignal 64 KiB} ordering on a ring, and n × k fetch-adds between processes,
 * printing one "OK" line per check; {@code victim K} has PE K killed while the others wait for a word only it would
 * write, and they print how their wait ended.
 */
public final class ShmemProcessMain {
    private static final int PAYLOAD = 64 * 1024;
    private static final int ADDS = 500;

    private ShmemProcessMain() {
    }

    /**
     * @param args {@code exercise ITERATIONS} or {@code victim K}
     * @throws Exception a failure, which makes the PE exit non-zero
     */
    public static void main(String[] args) throws Exception {
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(Duration.ofSeconds(60));
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot, cfg);
             Shmem shmem = Shmem.init(mp, 4L << 20)) {
            if (args[0].equals("victim")) {
                victim(shmem, Integer.parseInt(args[1]));
                return;
            }
            heapAgreement(shmem);
            ordering(shmem, Integer.parseInt(args[1]));
            atomics(shmem);
        }
    }

    /** Every PE's blocks have the same offsets: each PE sends its offsets to PE 0, which compares them. */
    private static void heapAgreement(Shmem shmem) {
        int n = shmem.nPes();
        int me = shmem.myPe();
        long[] sizes = {8, 100, 4096, 1, 70_000, 64, 12_345};
        MemorySegment table = shmem.calloc((long) n * sizes.length, 8);
        MemorySegment[] blocks = new MemorySegment[sizes.length];
        long[] offsets = new long[sizes.length];
        for (int b = 0; b < sizes.length; b++) {
            blocks[b] = shmem.malloc(sizes[b]);
            offsets[b] = blocks[b].address() - table.address();
        }
        shmem.free(blocks[1]);
        shmem.free(blocks[4]);
        MemorySegment again = shmem.malloc(90);
        offsets[1] = again.address() - table.address();
        shmem.put(table.asSlice(8L * sizes.length * me), MemorySegment.ofArray(offsets), 0);
        shmem.barrierAll();
        if (me == 0) {
            for (int p = 0; p < n; p++) {
                for (int b = 0; b < sizes.length; b++) {
                    long theirs = table.getAtIndex(JAVA_LONG, (long) p * sizes.length + b);
                    if (theirs != offsets[b]) {
                        throw new AssertionError("PE " + p + "'s block " + b + " is at " + theirs + ", PE 0's at " + offsets[b]);
                    }
                }
            }
            System.out.println("OK heap offsets agree on " + n + " PEs: " + Arrays.toString(offsets));
        }
        shmem.barrierAll();
    }

    /** {put; fence; p(flag)} then {putSignal} to the next PE; each PE checks every payload from the previous one. */
    private static void ordering(Shmem shmem, int iterations) {
        int n = shmem.nPes();
        int me = shmem.myPe();
        int next = (me + 1) % n;
        int prev = (me + n - 1) % n;
        MemorySegment data = shmem.calloc(PAYLOAD / 8, 8);
        MemorySegment flag = shmem.calloc(1, 8);
        MemorySegment ack = shmem.calloc(1, 8);
        long[] out = new long[PAYLOAD / 8];
        long[] want = new long[PAYLOAD / 8];
        long[] got = new long[PAYLOAD / 8];
        long mismatches = 0;
        for (int i = 1; i <= 2 * iterations; i++) {
            fill(out, i);
            if (i <= iterations) {
                shmem.putNbi(data, MemorySegment.ofArray(out), next);
                shmem.fence();
                shmem.pLong(flag, i, next);
            } else {
                shmem.putSignalNbi(data, MemorySegment.ofArray(out), flag, i, ShmemSignalOp.SET, next);
            }
            shmem.waitUntil(flag, ShmemCmp.EQ, i);
            fill(want, i);
            MemorySegment.copy(data, JAVA_LONG, 0, got, 0, got.length);
            if (!Arrays.equals(got, want)) {
                for (int k = 0; k < got.length; k++) {
                    mismatches += got[k] == want[k] ? 0 : 1;
                }
            }
            shmem.atomicAdd(ack, 1, prev);
            shmem.quiet();
            shmem.waitUntil(ack, ShmemCmp.GE, i);
        }
        if (mismatches != 0) {
            throw new AssertionError(mismatches + " payload words did not match their flag's iteration");
        }
        System.out.println("OK ordering: " + iterations + " put+fence+p and " + iterations + " putSignal of " + PAYLOAD
                + " bytes from PE " + prev + ", 0 mismatches");
        shmem.barrierAll();
    }

    private static void fill(long[] a, long i) {
        for (int k = 0; k < a.length; k++) {
            a[k] = i * 1_000_003L + k;
        }
    }

    /** n PEs × ADDS fetch-adds on PE 0's counter: n·ADDS in all, every old value exactly once. */
    private static void atomics(Shmem shmem) {
        int n = shmem.nPes();
        int me = shmem.myPe();
        MemorySegment counter = shmem.calloc(1, 8);
        MemorySegment olds = shmem.calloc((long) n * ADDS, 8);
        long[] mine = new long[ADDS];
        for (int i = 0; i < ADDS; i++) {
            mine[i] = shmem.atomicFetchAdd(counter, 1, 0);
        }
        shmem.put(olds.asSlice(8L * ADDS * me), MemorySegment.ofArray(mine), 0);
        shmem.barrierAll();
        if (me == 0) {
            long total = counter.get(JAVA_LONG, 0);
            Set<Long> seen = new HashSet<>();
            for (long j = 0; j < (long) n * ADDS; j++) {
                seen.add(olds.getAtIndex(JAVA_LONG, j));
            }
            boolean exact = seen.size() == n * ADDS && seen.stream().allMatch(v -> v >= 0 && v < (long) n * ADDS);
            if (total != (long) n * ADDS || !exact) {
                throw new AssertionError("counter " + total + ", " + seen.size() + " distinct old values");
            }
            System.out.println("OK atomics: " + n + " x " + ADDS + " fetch-adds gave " + total
                    + " and every old value 0.." + (total - 1) + " once");
        }
        shmem.barrierAll();
    }

    private static void victim(Shmem shmem, int victim) throws InterruptedException {
        MemorySegment flag = shmem.calloc(1, 8);
        shmem.barrierAll();
        System.out.println("ready " + ProcessHandle.current().pid());
        if (shmem.myPe() == victim) {
            Thread.sleep(120_000);
            return;
        }
        long start = System.nanoTime();
        try {
            shmem.waitUntil(flag, ShmemCmp.EQ, 1);
            System.out.println("the wait ended without an error");
        } catch (MpException e) {
            System.out.println("wait failed clearly after " + (System.nanoTime() - start) / 1_000_000 + " ms: "
                    + e.getClass().getSimpleName() + " (" + e.detail() + "): " + e.getMessage());
        }
        System.exit(1);
    }
}
