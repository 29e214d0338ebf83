package dev.gdasync.libmp.coll.reduce;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The built-in reducing collectives against a plain reference: 1…8 ranks (every type and operator at 3, SUM of
 * every type and every operator of int32 at the others), counts of 0, 1, odd, fewer than the ranks and large enough
 * for the ring; in place and out of place; floats bit-identical across ranks.
 */
class ReducingCollectivesTest {
    /** 0, 1, fewer than ranks, odd small (recursive doubling), odd large (ring: 8 B × 9001 > 64 KiB). */
    private static final long[] COUNTS = {0, 1, 3, 1001, 9001};

    @TempDir
    Path shm;

    /** Element i of rank r: small, so sums and 8-rank products are exact in every type. */
    static long value(int r, long i, ReduceOp op) {
        return op == ReduceOp.PROD ? 1 + (r + i) % 3 : (r * 7 + i * 13) % 23 - 11;
    }

    static long reduced(int n, long i, ReduceOp op) {
        long acc = value(0, i, op);
        for (int r = 1; r < n; r++) {
            long v = value(r, i, op);
            acc = switch (op) {
                case SUM -> acc + v;
                case PROD -> acc * v;
                case MAX -> Math.max(acc, v);
                case MIN -> Math.min(acc, v);
            };
        }
        return acc;
    }

    static void fill(MemorySegment m, DataType t, long count, int r, ReduceOp op, long from) {
        for (long i = 0; i < count; i++) {
            put(m, t, i, value(r, from + i, op));
        }
    }

    static void put(MemorySegment m, DataType t, long i, long v) {
        switch (t) {
            case INT32 -> m.setAtIndex(ValueLayout.JAVA_INT, i, (int) v);
            case INT64 -> m.setAtIndex(ValueLayout.JAVA_LONG, i, v);
            case FLOAT32 -> m.setAtIndex(ValueLayout.JAVA_FLOAT, i, v);
            case FLOAT64 -> m.setAtIndex(ValueLayout.JAVA_DOUBLE, i, v);
        }
    }

    static long get(MemorySegment m, DataType t, long i) {
        return switch (t) {
            case INT32 -> m.getAtIndex(ValueLayout.JAVA_INT, i);
            case INT64 -> m.getAtIndex(ValueLayout.JAVA_LONG, i);
            case FLOAT32 -> (long) m.getAtIndex(ValueLayout.JAVA_FLOAT, i);
            case FLOAT64 -> (long) m.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
        };
    }

    static void expect(String what, MemorySegment m, DataType t, long count, long from, int n, ReduceOp op) {
        for (long i = 0; i < count; i++) {
            long want = reduced(n, from + i, op);
            long got = get(m, t, i);
            if (want != got) {
                throw new AssertionError(what + " " + t + " " + op + " element " + i + ": want " + want + " got " + got);
            }
        }
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8})
    void allreduceReduceScatterAndReduceEqualTheReference(int n) throws Exception {
        ReduceRanks.run(n, shm, (coll, red) -> {
            Mp mp = coll.mp();
            int me = red.communicator().rank();
            long max = COUNTS[COUNTS.length - 1];
            MemorySegment a = mp.allocate(8 * max * n);
            MemorySegment b = mp.allocate(8 * max * n);
            MpRegistration ar = mp.register(a);
            MpRegistration br = mp.register(b);
            int k = 0;
            for (DataType t : DataType.values()) {
                for (ReduceOp op : ReduceOp.values()) {
                    // Every (type, operator) at 3 ranks; elsewhere SUM of every type and every operator of int32.
                    if (n != 3 && op != ReduceOp.SUM && t != DataType.INT32) {
                        continue;
                    }
                    for (long count : COUNTS) {
                        // The ring's large count for SUM and MIN of every type (the others' combine is the same code);
                        // in place every other case.
                        if (count == COUNTS[COUNTS.length - 1] && op != ReduceOp.SUM && op != ReduceOp.MIN) {
                            continue;
                        }
                        boolean inPlace = (k++ & 1) == 0;
                        fill(a, t, count, me, op, 0);
                        red.allreduce(a, ar, inPlace ? a : b, inPlace ? ar : br, count, t, op);
                        expect("allreduce" + (inPlace ? " in place" : ""), inPlace ? a : b, t, count, 0, n, op);

                        fill(a, t, count * n, me, op, 0);
                        long blk = count * t.bytes();
                        MemorySegment out = inPlace ? a.asSlice(me * blk) : b;
                        red.reduceScatter(a, ar, out, inPlace ? ar : br, count, t, op);
                        expect("reduceScatter", out, t, count, me * count, n, op);

                        int root = (int) (count % n);
                        fill(a, t, count, me, op, 0);
                        b.fill((byte) 0x5A);
                        red.reduce(a, ar, b, br, count, t, op, root);
                        if (me == root) {
                            expect("reduce to " + root, b, t, count, 0, n, op);
                        } else if (count > 0) {
                            assertEquals((byte) 0x5A, b.get(ValueLayout.JAVA_BYTE, 0), "reduce wrote a non-root");
                        }
                    }
                }
            }
        });
    }

    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 3, 5, 8})
    void allgatherBroadcastAlltoallMoveElements(int n) throws Exception {
        ReduceRanks.run(n, shm, (coll, red) -> {
            Mp mp = coll.mp();
            int me = red.communicator().rank();
            for (long count : COUNTS) {
                MemorySegment a = mp.allocate(Math.max(8, 8 * count * n));
                MemorySegment b = mp.allocate(Math.max(8, 8 * count * n));
                MpRegistration ar = mp.register(a);
                MpRegistration br = mp.register(b);
                for (long i = 0; i < count; i++) {
                    a.setAtIndex(ValueLayout.JAVA_LONG, i, me * 1_000_000L + i);
                }
                red.allgather(a, ar, b, br, count, DataType.INT64);
                // In place: our block already sits at rank · count of the output.
                MemorySegment.copy(a, 0, a, me * count * 8, count * 8);
                red.allgather(a.asSlice(me * count * 8, count * 8), ar, a, ar, count, DataType.INT64);
                for (int r = 0; r < n; r++) {
                    for (long i = 0; i < count; i++) {
                        assertEquals(r * 1_000_000L + i, b.getAtIndex(ValueLayout.JAVA_LONG, r * count + i));
                        assertEquals(r * 1_000_000L + i, a.getAtIndex(ValueLayout.JAVA_LONG, r * count + i));
                    }
                }
                int root = (int) (count % n);
                for (long i = 0; i < count; i++) {
                    b.setAtIndex(ValueLayout.JAVA_INT, i, me == root ? (int) (i * 3) : -1);
                }
                red.broadcast(b, br, count, DataType.INT32, root);
                for (long i = 0; i < count; i++) {
                    assertEquals((int) (i * 3), b.getAtIndex(ValueLayout.JAVA_INT, i));
                }
                for (int j = 0; j < n; j++) {
                    for (long i = 0; i < count; i++) {
                        a.setAtIndex(ValueLayout.JAVA_FLOAT, j * count + i, me * 100 + j + i * 0.5f);
                    }
                }
                red.alltoall(a, ar, b, br, count, DataType.FLOAT32);
                for (int r = 0; r < n; r++) {
                    for (long i = 0; i < count; i++) {
                        assertEquals(r * 100 + me + i * 0.5f, b.getAtIndex(ValueLayout.JAVA_FLOAT, r * count + i));
                    }
                }
                mp.deregister(ar);
                mp.deregister(br);
                mp.free(a);
                mp.free(b);
            }
        });
    }

    /** Random floats (sums inexact): every rank must hold the same bits, for both algorithms. */
    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {3, 4})
    void floatResultsAreBitIdenticalOnEveryRank(int n) throws Exception {
        ConcurrentHashMap<String, long[]> first = new ConcurrentHashMap<>();
        AtomicInteger compared = new AtomicInteger();
        ReduceRanks.run(n, shm, (coll, red) -> {
            Mp mp = coll.mp();
            int me = red.communicator().rank();
            for (long count : new long[] {17, 20_000}) {
                for (DataType t : new DataType[] {DataType.FLOAT32, DataType.FLOAT64}) {
                    MemorySegment a = mp.allocate(count * 8);
                    MpRegistration ar = mp.register(a);
                    Random rnd = new Random(me * 1000L + count);
                    for (long i = 0; i < count; i++) {
                        double v = (rnd.nextDouble() - 0.5) * Math.pow(10, rnd.nextInt(12) - 6);
                        if (t == DataType.FLOAT32) {
                            a.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) v);
                        } else {
                            a.setAtIndex(ValueLayout.JAVA_DOUBLE, i, v);
                        }
                    }
                    red.allreduce(a, ar, a, ar, count, t, ReduceOp.SUM);
                    long[] bits = new long[(int) count];
                    for (int i = 0; i < count; i++) {
                        bits[i] = t == DataType.FLOAT32 ? Float.floatToRawIntBits(a.getAtIndex(ValueLayout.JAVA_FLOAT, i))
                                : Double.doubleToRawLongBits(a.getAtIndex(ValueLayout.JAVA_DOUBLE, i));
                    }
                    long[] seen = first.putIfAbsent(t + "/" + count, bits);
                    if (seen != null) {
                        assertArrayEquals(seen, bits, "rank " + me + " " + t + " " + count + " differs from another rank");
                        compared.incrementAndGet();
                    }
                    mp.deregister(ar);
                    mp.free(a);
                }
            }
        });
        assertEquals(4 * (n - 1), compared.get());
    }

    @Test
    void badInputIsRefusedAndChangesNothing() throws Exception {
        ReduceRanks.run(2, shm, (coll, red) -> {
            Mp mp = coll.mp();
            MemorySegment a = mp.allocate(64);
            MemorySegment b = mp.allocate(64);
            MpRegistration ar = mp.register(a);
            MpRegistration br = mp.register(b);
            a.fill((byte) 1);
            b.fill((byte) 2);
            assertMessage(() -> red.allreduce(a, ar, b, br, 17, DataType.INT32, ReduceOp.SUM),
                    "allreduce: send holds 64 bytes but needs 17 INT32 = 68 bytes");
            assertMessage(() -> red.allreduce(a, ar, b, br, -1, DataType.INT32, ReduceOp.SUM),
                    "allreduce: count must be >= 0, got -1");
            assertMessage(() -> red.allreduce(a, ar, b, null, 1, DataType.INT32, ReduceOp.SUM),
                    "recvReg must not be null");
            assertMessage(() -> red.allreduce(a, ar, b, br, 1, null, ReduceOp.SUM), "type must not be null");
            assertMessage(() -> red.allreduce(a, br, b, br, 1, DataType.INT32, ReduceOp.SUM), "is not inside sendReg");
            assertMessage(() -> red.allreduce(a, ar, a.asSlice(8), ar, 4, DataType.INT32, ReduceOp.SUM),
                    "send and recv overlap without being the same buffer");
            assertMessage(() -> red.reduceScatter(a, ar, a.asSlice(4), ar, 4, DataType.INT32, ReduceOp.SUM),
                    "in place needs send + rank · recvCount (offset " + 16 * red.communicator().rank()
                            + " bytes), got offset 4");
            assertMessage(() -> red.reduce(a, ar, b, br, 1, DataType.INT32, ReduceOp.MAX, 2), "root 2 is outside");
            assertTrue(Arrays.equals(bytes(a, 1), a.toArray(ValueLayout.JAVA_BYTE)), "a changed");
            assertTrue(Arrays.equals(bytes(b, 2), b.toArray(ValueLayout.JAVA_BYTE)), "b changed");
            // The job is still in step: a real collective after the refusals.
            a.setAtIndex(ValueLayout.JAVA_INT, 0, 5);
            red.allreduce(a, ar, b, br, 1, DataType.INT32, ReduceOp.SUM);
            assertEquals(10, b.getAtIndex(ValueLayout.JAVA_INT, 0));
            red.close();
            assertMessage(() -> red.allreduce(a, ar, b, br, 1, DataType.INT32, ReduceOp.SUM), "are closed");
        });
    }

    private static byte[] bytes(MemorySegment m, int v) {
        byte[] x = new byte[(int) m.byteSize()];
        Arrays.fill(x, (byte) v);
        return x;
    }

    private static void assertMessage(org.junit.jupiter.api.function.Executable call, String part) {
        RuntimeException e = assertThrows(RuntimeException.class, call);
        assertTrue(e.getMessage() != null && e.getMessage().contains(part), "message '" + e.getMessage()
                + "' lacks '" + part + "'");
    }
}
