package dev.gdasync.libmp;

import dev.gdasync.gdsync.nic.MemoryRegion;

import java.lang.foreign.MemorySegment;

/**
 * Registered memory of an {@link Mp} (LibMP's {@code mp_reg_t}): buffers inside it may be sent,
 * received, put and got.
 */
public final class MpRegistration {
    final MpContext owner;
    final MemoryRegion region;
    private boolean released;

    MpRegistration(MpContext owner, MemoryRegion region) {
        this.owner = owner;
        this.region = region;
    }

    /** @return the registered memory */
    public MemorySegment segment() {
        return region.segment();
    }

    /** @return the key peers use to reach it */
    public long rkey() {
        return region.rkey();
    }

    /**
     * @return the local key: what a templated send's kernel writes as the local buffer's key (see
     * {@link MpKiExport#addTemplate})
     */
    public long lkey() {
        return region.lkey();
    }

    /** @return whether it is still registered */
    public boolean isValid() {
        return !released && region.isValid();
    }

    void release() {
        released = true;
    }

    /**
     * @param mp the Mp it is used with
     * @throws IllegalArgumentException if it is another Mp's
     */
    void checkOwner(MpContext mp) {
        if (owner != mp) {
            throw new IllegalArgumentException(this + " belongs to another Mp");
        }
    }

    /**
     * @param buf a buffer
     * @return whether the buffer lies inside this registration
     */
    boolean contains(MemorySegment buf) {
        long start = region.address();
        long a = buf.address();
        long n = buf.byteSize();
        return a >= start && n <= region.length() && a - start <= region.length() - n;
    }

    @Override
    public String toString() {
        return "MpRegistration{0x" + Long.toHexString(region.address()) + ", " + region.length() + " bytes"
                + (isValid() ? "" : ", deregistered") + "}";
    }
}
