package dev.gdasync.libmp.ga;

import dev.gdasync.libmp.MpRegistration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link GlobalArrays#create} between thread ranks: calls the ranks disagree on, sizes past a long and a block a rank
 * cannot allocate are refused on every rank, quickly, with nothing allocated or in flight, and the next create works.
 */
@Timeout(300)
class GlobalArrayCreateTest {
    /** Generous: a refusal is one exchange and a barrier, well under a second; a rank left waiting takes 20 s or more. */
    private static final long QUICK_NANOS = 10_000_000_000L;

    @TempDir
    Path base;

    @Test
    void ranksThatDisagreeAreAllRefusedAndStayInStep() throws Exception {
        GaRanks.run(2, base, ga -> {
            int me = ga.rank();
            int peer = 1 - me;
            GaType[] types = {GaType.INT, GaType.DOUBLE};
            Distribution eight = Distribution.even(2, 8);
            refused(IllegalArgumentException.class, disagreement(1, "t", me, call(1, types[peer], eight),
                    call(1, types[me], eight), "the type"), () -> ga.create("t", types[me], eight));
            ga.sync(); // nothing was left in flight, and both ranks are at the same collective
            Distribution[] lengths = {eight, Distribution.even(2, 16)};
            refused(IllegalArgumentException.class, disagreement(2, "d", me, call(2, GaType.DOUBLE, lengths[peer]),
                    call(2, GaType.DOUBLE, lengths[me]), "the dimensions"),
                    () -> ga.create("d", GaType.DOUBLE, lengths[me]));
            ga.sync();
            Distribution[] cuts = {Distribution.irregular(2, new int[] {8}, new int[][] {{0, 3}}),
                    Distribution.irregular(2, new int[] {8}, new int[][] {{0, 5}})};
            refused(IllegalArgumentException.class, disagreement(3, "s", me, call(3, GaType.LONG, cuts[peer]),
                    call(3, GaType.LONG, cuts[me]), "the block starts"), () -> ga.create("s", GaType.LONG, cuts[me]));
            String[] names = {"x", "y"};
            Distribution plane = Distribution.even(2, 2, 4);
            refused(IllegalArgumentException.class, disagreement(4, names[me], me, call(4, GaType.FLOAT, plane),
                    call(4, GaType.FLOAT, plane), "the name"), () -> ga.create(names[me], GaType.FLOAT, plane));
            Distribution[] ndims = {Distribution.even(2, 4, 4), Distribution.even(2, 4, 4, 1)};
            refused(IllegalArgumentException.class, disagreement(5, "n", me, call(5, GaType.INT, ndims[peer]),
                    call(5, GaType.INT, ndims[me]), "the dimensions"),
                    () -> ga.create("n", GaType.INT, ndims[me]));
            // Ranks that agree on a wrong argument are refused alike, after the exchange.
            refused(IllegalArgumentException.class, "the distribution is for 3 ranks, the job has 2",
                    () -> ga.create("r", GaType.INT, Distribution.even(3, 6)));
            refused(IllegalArgumentException.class, "name must not be blank",
                    () -> ga.create(" ", GaType.INT, Distribution.even(2, 6)));
            putGetAndAccumulatePeersLastElement(ga);
        });
    }

    @Test
    void sizesPastALongAreRefusedBeforeAnythingIsAllocated() throws Exception {
        GaRanks.run(2, base, ga -> {
            // 2^62 elements: the element count is a long, the bytes of a block (2^64) are not. They once wrapped to 0,
            // and a put of the peer's last element then landed on its accumulate lock word.
            Distribution huge = Distribution.even(2, 1 << 30, 1 << 30, 4);
            GaPatch first = huge.block(0);
            ga.sync();
            List<Path> before = files(base);
            refused(IllegalArgumentException.class, "GlobalArrays.create of array 'huge' (DOUBLE [1073741824, 1073741824, 4]):"
                    + " rank 0's block " + GlobalArrays.patch(first.lo(), first.hi()) + " has " + first.elements()
                    + " elements of 8 bytes, more bytes than a long holds; nothing was created",
                    () -> ga.create("huge", GaType.DOUBLE, huge));
            ga.sync();
            assertEquals(before, files(base), "no shared memory was made");
            // Leading dimensions whose buffer extent passes a long: refused before anything moves.
            GlobalArray cube = ga.create("cube", GaType.DOUBLE, Distribution.even(2, 4, 4, 4));
            int[] lo = {0, 0, 0};
            int[] hi = {3, 3, 3};
            int[] ld = {Integer.MAX_VALUE, Integer.MAX_VALUE};
            MemorySegment buf = MemorySegment.ofArray(new double[64]);
            for (Executable e : List.<Executable>of(() -> cube.put(lo, hi, buf, ld), () -> cube.get(lo, hi, buf, ld),
                    () -> cube.acc(lo, hi, buf, ld, 1.0), () -> cube.nbGet(lo, hi, buf, ld))) {
                refused(IllegalArgumentException.class, "the patch [0, 0, 0]..[3, 3, 3] with ld [2147483647, 2147483647]"
                        + " spans more than Long.MAX_VALUE bytes of the buffer: no buffer is that large", e);
            }
            ga.sync();
            MemorySegment all = MemorySegment.ofArray(new double[64]);
            cube.get(lo, hi, all, null);
            assertTrue(Arrays.stream(all.toArray(JAVA_DOUBLE)).allMatch(v -> v == 0), "nothing was written");
            cube.destroy();
            putGetAndAccumulatePeersLastElement(ga);
        });
    }

    @Test
    void aRankThatCannotAllocateItsBlockFailsEveryRanksCreate() throws Exception {
        GaRanks.run(2, base, ga -> {
            // Rank 0 holds one row (8 MiB), rank 1 the rest: 2^54 bytes, more than any file system has free.
            Distribution lopsided = Distribution.irregular(2, new int[] {Integer.MAX_VALUE, 1 << 20}, new int[][] {{0, 1}, {0}});
            long rank1Bytes = 8 + (Integer.MAX_VALUE - 1L) * (1 << 20) * 8;
            ga.sync();
            List<Path> before = files(base);
            if (ga.rank() == 0) {
                refused(IllegalStateException.class, "GlobalArrays.create of array 'vast': rank 1 could not allocate its "
                        + "block's window of " + rank1Bytes + " bytes (its own exception says why); nothing was created",
                        () -> ga.create("vast", GaType.LONG, lopsided));
            } else {
                UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> ga.create("vast", GaType.LONG, lopsided));
                assertTrue(e.getMessage().contains("free"), e.getMessage());
            }
            ga.sync();
            assertEquals(before, files(base), "rank 0 freed its block again");
            putGetAndAccumulatePeersLastElement(ga);
        });
    }

    @Test
    void aRankThatCannotRegisterItsWindowFailsEveryRanksCreate() throws Exception {
        GaRanks.run(2, base, ga -> {
            // The first create also makes the agreement's window: once with the table full, once after it.
            refusedWhileRank1IsFull(ga, "first");
            ga.create("first", GaType.LONG, Distribution.even(2, 8)).destroy();
            refusedWhileRank1IsFull(ga, "unregistered");
        });
    }

    /** Rank 1 fills its NIC's registration table, both ranks' create fails at once, rank 1 empties it again. */
    private void refusedWhileRank1IsFull(GlobalArrays ga, String name) throws IOException {
        ga.sync();
        List<Path> before = files(base);
        ga.sync(); // every rank listed the files before any allocates
        List<MpRegistration> fillers = new ArrayList<>();
        MemorySegment small = ga.mp().allocate(8);
        if (ga.rank() == 1) {
            // Fill this rank's NIC registration table, so that its block's window cannot be registered.
            try {
                while (true) {
                    fillers.add(ga.mp().register(small));
                }
            } catch (IllegalStateException full) {
                assertTrue(full.getMessage().contains("is full"), full.getMessage());
            }
        }
        Distribution even = Distribution.even(2, 64);
        if (ga.rank() == 0) {
            refused(IllegalStateException.class, "GlobalArrays.create of array '" + name + "': rank 1 could not "
                    + "register its window (its own exception says why); nothing was created",
                    () -> ga.create(name, GaType.DOUBLE, even));
        } else {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> ga.create(name, GaType.DOUBLE, even));
            assertTrue(e.getMessage().contains("is full"), e.getMessage());
            fillers.forEach(r -> ga.mp().deregister(r));
        }
        ga.mp().free(small);
        ga.sync();
        assertEquals(before, files(base), "both ranks freed their blocks again");
        putGetAndAccumulatePeersLastElement(ga);
    }

    @Test
    void dimensionsPastALongAreRefusedWhenTheDistributionIsMade() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Distribution.even(2, Integer.MAX_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE));
        assertEquals("dims [2147483647, 2147483647, 2147483647] make more than Long.MAX_VALUE (9223372036854775807) "
                + "elements: an array's element count is a long", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Distribution.irregular(1,
                new int[] {Integer.MAX_VALUE, Integer.MAX_VALUE, 3}, new int[][] {{0}, {0}, {0}}));
        assertTrue(e.getMessage().startsWith("dims [2147483647, 2147483647, 3] make more than Long.MAX_VALUE"), e.getMessage());
        // The largest count that is a long is fine.
        assertEquals((long) Integer.MAX_VALUE * Integer.MAX_VALUE * 2,
                Distribution.even(1, Integer.MAX_VALUE, Integer.MAX_VALUE, 2).elements());
    }

    /**
     * After refusals: a create the ranks agree on works; each rank puts into the peer's last element (next to nothing
     * else of the peer's window but its end), gets the array through a non-blocking get into confined memory it then
     * closes, and both accumulate into both last elements (their lock words were never written).
     */
    private static void putGetAndAccumulatePeersLastElement(GlobalArrays ga) {
        int me = ga.rank();
        int peer = 1 - me;
        GlobalArray a = ga.create("good", GaType.DOUBLE, Distribution.even(2, 8));
        int peersLast = a.distribution(peer).hi(0);
        a.put(new int[] {peersLast}, new int[] {peersLast}, MemorySegment.ofArray(new double[] {10 + me}), null);
        ga.sync();
        double[] expected = {0, 0, 0, 11, 0, 0, 0, 10};
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment got = arena.allocate(JAVA_DOUBLE, 8);
            ga.nbWait(a.nbGet(new int[] {0}, new int[] {7}, got, null));
            assertArrayEquals(expected, got.toArray(JAVA_DOUBLE));
        }
        ga.sync();
        for (int last : new int[] {3, 7}) {
            a.acc(new int[] {last}, new int[] {last}, MemorySegment.ofArray(new double[] {1}), null, 1.0);
        }
        ga.sync();
        MemorySegment after = MemorySegment.ofArray(new double[8]);
        a.get(new int[] {0}, new int[] {7}, after, null);
        assertArrayEquals(new double[] {0, 0, 0, 13, 0, 0, 0, 12}, after.toArray(JAVA_DOUBLE));
        ga.sync();
        a.destroy();
    }

    private static String call(int n, GaType type, Distribution d) {
        return "create #" + n + " with " + type + " " + Arrays.toString(d.dims()) + " over 2 ranks (grid "
                + Arrays.toString(d.grid()) + ")";
    }

    private static String disagreement(int n, String name, int me, String theirs, String mine, String what) {
        return "GlobalArrays.create #" + n + " of array '" + name + "': rank " + (1 - me) + " called " + theirs + ", rank "
                + me + " called " + mine + ": the ranks disagree on " + what + "; every rank creates each array with the "
                + "same name, type and distribution, in the same order. Nothing was created";
    }

    /** Asserts the exact failure, and that it came quickly (no rank waited for a peer that would never come). */
    private static void refused(Class<? extends Throwable> type, String message, Executable call) {
        long start = System.nanoTime();
        Throwable t = assertThrows(type, call);
        long took = System.nanoTime() - start;
        assertEquals(message, t.getMessage());
        assertTrue(took < QUICK_NANOS, "refused after " + took / 1_000_000 + " ms");
    }

    private static List<Path> files(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).sorted().toList();
        }
    }
}
