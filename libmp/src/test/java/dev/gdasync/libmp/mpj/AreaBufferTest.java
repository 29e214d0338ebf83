package dev.gdasync.libmp.mpj;

import mpjbuf.Buffer;
import mpjbuf.NIOBuffer;
import mpjbuf.Type;
import org.junit.jupiter.api.Test;
import xdev.XDevException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link AreaBuffer}, through MPJ's own {@link Buffer} as its pack and unpack use it: large writes of arrays are copied
 * when the send writes them out (not at the pack), every other write keeps its order, a reader lent the memory waits
 * for each piece and gets exactly what was packed, and a reader whose writer never finishes fails naming it.
 */
class AreaBufferTest {
    private static final int CAPACITY = 1 << 20;

    /** Waits that never fail, with a long timeout. */
    private static final AreaBuffer.Waits HEALTHY = waits(() -> null, TimeUnit.SECONDS.toNanos(30));

    private static AreaBuffer.Waits waits(java.util.function.Supplier<String> failure, long timeoutNanos) {
        return new AreaBuffer.Waits() {
            @Override
            public String failure() {
                return failure.get();
            }

            @Override
            public long timeoutNanos() {
                return timeoutNanos;
            }
        };
    }

    private static MemorySegment block(Arena arena) {
        return arena.allocate(AreaBuffer.blockBytes(CAPACITY), 64);
    }

    private static MemorySegment word(MemorySegment block) {
        return block.asSlice(AreaBuffer.wordAt(CAPACITY), AreaBuffer.WORD_BYTES);
    }

    @Test
    void aLargeArrayIsCopiedWhenTheSendWritesItOutNotAtThePack() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment block = block(arena);
            AreaBuffer raw = new AreaBuffer(CAPACITY, block, 4096);
            Buffer out = new Buffer(raw, 0, CAPACITY);
            int[] ints = new int[50_000];
            java.util.Arrays.fill(ints, 7);
            out.putSectionHeader(Type.INT);
            out.write(ints, 0, ints.length);
            out.commit();
            assertTrue(raw.hasRemembered());
            int headerBytes = out.getSize() - ints.length * 4;
            assertEquals(0, block.get(ValueLayout.JAVA_INT_UNALIGNED, headerBytes), "not copied at the pack");
            // MPI lets the send read the array until it returns: what it holds then is what goes.
            ints[0] = 42;
            ints[ints.length - 1] = 43;
            assertEquals(4096, raw.startTelling(), "the written word's offset, for the request to send");
            assertEquals(headerBytes, word(block).get(ValueLayout.JAVA_LONG, 0), "the header is final before the copy");
            raw.writeOutTelling();
            assertFalse(raw.hasRemembered());
            assertEquals(AreaBuffer.ALL_WRITTEN, word(block).get(ValueLayout.JAVA_LONG, 0));
            int[] got = new int[ints.length];
            Buffer in = new Buffer(new NIOBuffer(CAPACITY, block.asSlice(0, CAPACITY).asByteBuffer()), 0, CAPACITY);
            in.setSize(out.getSize());
            in.commit();
            assertEquals(Type.INT, in.getSectionHeader());
            assertEquals(ints.length, in.getSectionSize());
            in.read(got, 0, got.length);
            assertArrayEquals(ints, got);
        }
    }

    @Test
    void aReaderTakesEveryPieceAsItLandsAndGetsExactlyWhatWasPacked() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment block = block(arena);
            AreaBuffer raw = new AreaBuffer(CAPACITY, block, 0);
            Buffer out = new Buffer(raw, 0, CAPACITY);
            byte[] bytes = new byte[100_003];
            double[] doubles = new double[40_001];
            long[] small = {1, -2, 3};
            for (int k = 0; k < bytes.length; k++) {
                bytes[k] = (byte) (k * 31 + 5);
            }
            for (int k = 0; k < doubles.length; k++) {
                doubles[k] = k * 0.5 - 17;
            }
            out.putSectionHeader(Type.BYTE);
            out.write(bytes, 0, bytes.length);
            out.putSectionHeader(Type.LONG);
            out.write(small, 0, small.length); // small: written at once, between two remembered writes
            out.putSectionHeader(Type.DOUBLE);
            out.write(doubles, 1, doubles.length - 1);
            out.commit();
            int size = out.getSize();

            // The receiver's buffer is lent the sender's memory while the sender still writes it.
            AreaBuffer lent = new AreaBuffer(CAPACITY, block, 0);
            lent.lendWriting(word(block), 3, HEALTHY);
            CompletableFuture<Object[]> reader = CompletableFuture.supplyAsync(() -> {
                try {
                    Buffer in = new Buffer(lent, 0, CAPACITY);
                    in.setSize(size);
                    in.commit();
                    assertEquals(Type.BYTE, in.getSectionHeader());
                    byte[] b = new byte[in.getSectionSize()];
                    in.read(b, 0, b.length);
                    assertEquals(Type.LONG, in.getSectionHeader());
                    long[] l = new long[in.getSectionSize()];
                    in.read(l, 0, l.length);
                    assertEquals(Type.DOUBLE, in.getSectionHeader());
                    double[] d = new double[in.getSectionSize()];
                    in.read(d, 0, d.length);
                    return new Object[] {b, l, d};
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            Thread.sleep(50);
            assertFalse(reader.isDone(), "the reader waits while nothing is told");
            raw.startTelling();
            raw.writeOutTelling();
            Object[] got = reader.get(30, TimeUnit.SECONDS);
            assertArrayEquals(bytes, (byte[]) got[0]);
            assertArrayEquals(small, (long[]) got[1]);
            assertArrayEquals(java.util.Arrays.copyOfRange(doubles, 1, doubles.length), (double[]) got[2]);
        }
    }

    @Test
    void aWriteOverARememberedOneComesAfterItAndAReadOfTheSendersBufferSeesBoth() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment block = block(arena);
            AreaBuffer raw = new AreaBuffer(CAPACITY, block, 0);
            byte[] bytes = new byte[64 * 1024];
            java.util.Arrays.fill(bytes, (byte) 1);
            raw.write(bytes, 0, bytes.length, 100);
            assertTrue(raw.hasRemembered());
            raw.putByte(9, 200); // (the value, then where) inside the remembered write: it goes first, then this
            assertFalse(raw.hasRemembered());
            assertEquals(9, block.get(ValueLayout.JAVA_BYTE, 200));
            assertEquals(1, block.get(ValueLayout.JAVA_BYTE, 201));

            raw.write(bytes, 0, bytes.length, 100_000);
            raw.putInt(5, 40); // outside it: nothing copied yet
            assertTrue(raw.hasRemembered());
            assertEquals(1, raw.getByte(100_000)); // a read of the sender's own buffer copies first
            assertFalse(raw.hasRemembered());

            raw.write(bytes, 0, bytes.length, 200_000);
            raw.discard(); // MPJ freed the buffer without sending it: nothing is copied later
            assertFalse(raw.hasRemembered());
            assertEquals(0, block.get(ValueLayout.JAVA_BYTE, 200_000));
        }
    }

    @Test
    void badWritesAreMadeAtOnceSoMpjSeesItsOwnError() {
        try (Arena arena = Arena.ofConfined()) {
            AreaBuffer raw = new AreaBuffer(CAPACITY, block(arena), 0);
            byte[] bytes = new byte[64 * 1024];
            assertThrows(RuntimeException.class, () -> raw.write(bytes, 0, bytes.length, CAPACITY - 10));
            assertThrows(RuntimeException.class, () -> raw.write(bytes, 10, bytes.length, 0));
            assertFalse(raw.hasRemembered());
        }
    }

    @Test
    void aReaderWhoseWriterNeverFinishesFailsNamingIt() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment block = block(arena);
            word(block).set(ValueLayout.JAVA_LONG, 0, 8); // the header told, the rest never
            AtomicReference<String> failure = new AtomicReference<>();
            AreaBuffer lent = new AreaBuffer(CAPACITY, block, 0);
            lent.lendWriting(word(block), 2, waits(failure::get, TimeUnit.SECONDS.toNanos(30)));
            assertEquals(0, lent.getByte(4), "what was told is read at once");
            CompletableFuture<Void> reader = CompletableFuture.runAsync(
                    () -> lent.read(new byte[1000], 0, 1000, 8, false));
            Thread.sleep(50);
            assertFalse(reader.isDone());
            failure.set("rank 2's process is gone");
            Exception e = assertThrows(Exception.class, () -> reader.get(10, TimeUnit.SECONDS));
            assertEquals("rank 2's message was still being written when the job failed: rank 2's process is gone",
                    e.getCause().getMessage());

            AreaBuffer late = new AreaBuffer(CAPACITY, block, 0);
            late.lendWriting(word(block), 5, waits(() -> null, TimeUnit.MILLISECONDS.toNanos(100)));
            XDevException t = assertThrows(XDevException.class,
                    () -> late.read(new int[10], 0, 10, 8, false));
            assertTrue(t.getMessage().startsWith("rank 5 did not write its message within 100 ms (8 of "),
                    t.getMessage());
        }
    }
}
