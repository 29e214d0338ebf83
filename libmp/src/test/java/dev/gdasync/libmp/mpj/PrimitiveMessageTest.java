package dev.gdasync.libmp.mpj;

import mpjbuf.Buffer;
import mpjbuf.NIOBuffer;
import mpjbuf.Type;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link PrimitiveMessage}: a stream send's packing is MPJ's (MPJ's own buffer reads it back as a receive's handler
 * does), its size bound holds, and bad buffers are refused with precise messages.
 */
class PrimitiveMessageTest {

    @Test
    void mpjsBufferReadsBackWhatItPacked() throws Exception {
        int[] ints = new int[20];
        for (int k = 0; k < ints.length; k++) {
            ints[k] = k * 7919 - 3;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment slot = arena.allocate(4096, 8);
            PrimitiveMessage m = PrimitiveMessage.of("t", "MPI.INT", ints, 2, 15);
            PrimitiveMessage.Packed p = m.packInto(slot, "t");
            assertEquals(Type.INT.getCode(), p.type());
            assertEquals(15, p.elements());
            assertTrue(p.length() <= m.packedBytes(), p.length() + " > " + m.packedBytes());
            // What a receive's handler does with the bytes the device wrote into its buffer.
            Buffer in = new Buffer(new NIOBuffer(4096, slot.asByteBuffer()), 0, 4096);
            in.setSize(p.length());
            in.commit();
            assertEquals(Type.INT, in.getSectionHeader());
            assertEquals(15, in.getSectionSize());
            int[] got = new int[15];
            in.read(got, 0, 15);
            int[] want = new int[15];
            System.arraycopy(ints, 2, want, 0, 15);
            assertArrayEquals(want, got);
        }
    }

    @Test
    void everyPrimitiveTypeFitsItsBound() {
        Object[] arrays = {new byte[33], new char[33], new short[33], new boolean[33], new int[33], new long[33],
                new float[33], new double[33]};
        String[] names = {"MPI.BYTE", "MPI.CHAR", "MPI.SHORT", "MPI.BOOLEAN", "MPI.INT", "MPI.LONG", "MPI.FLOAT",
                "MPI.DOUBLE"};
        try (Arena arena = Arena.ofConfined()) {
            for (int i = 0; i < names.length; i++) {
                for (int count : new int[] {0, 1, 7, 33}) {
                    PrimitiveMessage m = PrimitiveMessage.of("t", names[i], arrays[i], 0, count);
                    MemorySegment slot = arena.allocate(m.packedBytes(), 8);
                    PrimitiveMessage.Packed p = m.packInto(slot, "t");
                    assertEquals(count, p.elements(), names[i]);
                    assertTrue(p.length() <= m.packedBytes(), names[i] + " x" + count + ": " + p.length());
                }
            }
        }
    }

    @Test
    void badBuffersAreRefusedWithPreciseMessages() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PrimitiveMessage.of("isendOnStream", "MPI.DOUBLE", new float[4], 0, 1));
        assertEquals("isendOnStream: MPI.DOUBLE needs an array of type double[], got float[]", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> PrimitiveMessage.of("isendOnStream", "MPI.BYTE", "text", 0, 1));
        assertEquals("isendOnStream: MPI.BYTE needs an array of type byte[], got a java.lang.String", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> PrimitiveMessage.of("isendOnStream", "MPI.LONG", new long[4], 3, 2));
        assertEquals("isendOnStream: offset 3 and count 2 reach outside the long[] buffer of 4 elements", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> PrimitiveMessage.of("isendOnStream", "MPI.LONG", new long[4], -1, 2));
        assertEquals("isendOnStream: offset -1 and count 2 reach outside the long[] buffer of 4 elements", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PrimitiveMessage.of("isendOnStream", "MPI.INT", null, 0, 1));
        assertEquals("isendOnStream: the buffer is null", e.getMessage());
    }
}
