package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.MpRegistration;

import java.lang.foreign.MemorySegment;

/**
 * The registration rule every collective checks of its buffers: this package's, {@code coll.reduce}'s and
 * {@code coll.msccl}'s.
 */
public final class RegisteredBuffers {
    private RegisteredBuffers() {
    }

    /**
     * @param name    the buffer's parameter name
     * @param buf     the buffer
     * @param regName the registration's parameter name
     * @param reg     the registration
     * @throws IllegalArgumentException if the registration is gone or does not contain the buffer
     */
    public static void requireInside(String name, MemorySegment buf, String regName, MpRegistration reg) {
        if (!reg.isValid()) {
            throw new IllegalArgumentException(regName + " " + reg + " is deregistered");
        }
        MemorySegment m = reg.segment();
        long a = buf.address() - m.address();
        if (a < 0 || buf.byteSize() > m.byteSize() || a > m.byteSize() - buf.byteSize()) {
            throw new IllegalArgumentException(name + " [0x" + Long.toHexString(buf.address()) + ", +" + buf.byteSize()
                    + ") is not inside " + regName + " " + reg + ": register it first");
        }
    }
}
