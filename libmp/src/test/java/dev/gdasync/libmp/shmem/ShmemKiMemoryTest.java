package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.ki.ShmemKiLayout;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.libmp.testutil.FuzzSeeds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A KI launch's own memory (1 to 64 blocks, 1 to 32 slots per PE) (staging, table, state) and how the state is cut up, over random launch shapes on 3 PEs
 * that are threads: the three allocations and the heap are disjoint; the state holds its header, one record per PE
 * and the blocks × PEs last-slot words one after the other, inside its allocation; each other PE gets its own range
 * of slots, the ranges disjoint and together exactly the table's entries; and every launch's memory is given back
 * (the next launch may take any shape). {@value #LAUNCHES} launches by default; {@code -Dgdasync.fuzz.sequences=N}
 * runs N times as many.
 */
@Timeout(300)
class ShmemKiMemoryTest {
    private static final int PES = 3;
    private static final int LAUNCHES = 12;

    @TempDir
    Path base;

    @Test
    void randomLaunchShapesGetDisjointMemoryAndSlots() throws Exception {
        long first = FuzzSeeds.seeds(1).findFirst().orElseThrow();
        long rounds = FuzzSeeds.seeds(1).count();
        ShmemRanks.run(PES, base, 1 << 16, shmem -> {
            // The same seed on every PE: kiPrepare is not collective, but the shapes stay alike anyway.
            SplittableRandom random = new SplittableRandom(first);
            int me = shmem.myPe();
            try (HostKiExecutor executor = HostKiExecutor.create("ki-memory-" + me)) {
                for (long launch = 0; launch < LAUNCHES * rounds; launch++) {
                    int blocks = random.nextInt(4) == 0 ? random.nextInt(1, 65) : random.nextInt(1, 5);
                    int slotsPerPe = random.nextInt(4) == 0 ? random.nextInt(1, 33) : random.nextInt(1, 5);
                    String shape = "seed=" + first + " launch " + launch + ": " + blocks + " blocks, " + slotsPerPe
                            + " slots per PE";
                    ShmemKi ki = shmem.kiPrepare(executor, blocks, slotsPerPe, Duration.ofSeconds(30));
                    try {
                        check(shmem, ki, blocks, slotsPerPe, shape);
                    } finally {
                        // A kernel that rings nothing: its last block releases the slots' completions.
                        executor.shmem(ki.table(), ki.state(), blocks, ctx -> { }).join();
                        ki.complete();
                    }
                }
            }
        });
    }

    private static void check(Shmem shmem, ShmemKi ki, int blocks, int slotsPerPe, String shape) {
        int n = shmem.nPes();
        int me = shmem.myPe();
        MemorySegment state = ki.state();
        MemorySegment table = ki.table().segment();
        long heap = state.get(JAVA_LONG, ShmemKiLayout.S_HEAP);
        long heapBytes = state.get(JAVA_LONG, ShmemKiLayout.S_HEAP_BYTES);
        long staging = state.get(JAVA_LONG, ShmemKiLayout.S_STAGING);
        int slots = (n - 1) * slotsPerPe;
        List<long[]> regions = new ArrayList<>();
        regions.add(new long[] {heap, heapBytes});
        regions.add(new long[] {state.address(), state.byteSize()});
        regions.add(new long[] {table.address(), table.byteSize()});
        regions.add(new long[] {staging, 8L * slots});
        assertDisjoint(regions, shape + ": heap, state, table and staging");
        assertEquals(table.address(), state.get(JAVA_LONG, ShmemKiLayout.S_TABLE), shape);

        // The state: header, PE records, last-slot words, in that order, inside the allocation.
        long header = ShmemKiLayout.STATE.byteSize();
        long pes = state.get(JAVA_LONG, ShmemKiLayout.S_PES) - state.address();
        long last = state.get(JAVA_LONG, ShmemKiLayout.S_LAST) - state.address();
        assertEquals(header, pes, shape + ": PE records start after the header");
        assertEquals(pes + n * ShmemKiLayout.PE.byteSize(), last, shape + ": last-slot words start after the records");
        assertTrue(last + 4L * n * blocks <= state.byteSize(), shape + ": last-slot words end past the state's "
                + state.byteSize() + " bytes");
        assertEquals(ShmemKiLayout.bytes(n, blocks), last + 4L * n * blocks, shape);

        // Slots: each other PE its own range; the ranges tile the table's entries.
        List<long[]> ranges = new ArrayList<>();
        long total = 0;
        for (int p = 0; p < n; p++) {
            long r = pes + p * ShmemKiLayout.PE.byteSize();
            int from = state.get(JAVA_INT, r + ShmemKiLayout.P_FIRST);
            int count = state.get(JAVA_INT, r + ShmemKiLayout.P_COUNT);
            assertEquals(p == me ? 0 : slotsPerPe, count, shape + ": slots of PE " + p);
            assertTrue(from >= 0 && from + count <= slots, shape + ": PE " + p + "'s slots [" + from + ", "
                    + (from + count) + ") are outside the " + slots + " entries");
            if (count > 0) {
                ranges.add(new long[] {from, count});
            }
            total += count;
        }
        assertDisjoint(ranges, shape + ": slot ranges");
        assertEquals(slots, total, shape);
        assertEquals(slots, ki.table().templateCount(), shape);
        assertEquals(slots, ki.table().waitCount(), shape);
    }

    private static void assertDisjoint(List<long[]> regions, String what) {
        List<long[]> sorted = new ArrayList<>(regions);
        sorted.sort((a, b) -> Long.compare(a[0], b[0]));
        for (int i = 1; i < sorted.size(); i++) {
            long[] a = sorted.get(i - 1);
            long[] b = sorted.get(i);
            if (a[0] + a[1] > b[0]) {
                fail(what + " overlap: [" + a[0] + ", +" + a[1] + ") and [" + b[0] + ", +" + b[1] + ")");
            }
        }
    }
}
