package dev.gdasync.libmp.mpj;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A frame on its way to one peer: a message (its header and where its bytes are, the MPJ buffer's static section and
 * its dynamic section, copied into send slots fragment by fragment), a rendezvous message's request to send (its header
 * and its offset in this rank's rendezvous area, one fragment), or an acknowledgement. Guarded by the device's lock.
 */
final class Outbound {
    final int kind;
    final int context;
    final int tag;
    final int type;
    final int elements;
    final int flags;
    final long sequence;
    /** The static section (the MPJ buffer's memory from its offset, its size long), or an empty segment. */
    final MemorySegment staticBytes;
    final byte[] dynamicBytes;
    /** The MPJ request that completes once every byte is copied (or, when synchronous, acknowledged); null for an ACK. */
    final DeviceRequest request;
    /** For a {@link Frames#RTS}: the message's offset in this rank's rendezvous area, and its length; else -1, 0. */
    final long rdvOffset;
    final int rdvLength;
    /** For a {@link Frames#RTS} of a message in an extent of the area: the extent's address and key; else 0, 0. */
    final long extentAddress;
    final long extentKey;
    /**
     * For a {@link Frames#RTS} of a message still being written ({@link AreaBuffer}): its written word's offset, in the
     * same area or extent; else -1.
     */
    final long writtenAt;
    private long copied;
    private boolean headerSent;

    Outbound(int kind, int context, int tag, int type, int elements, int flags, long sequence, MemorySegment staticBytes,
             byte[] dynamicBytes, DeviceRequest request) {
        this(kind, context, tag, type, elements, flags, sequence, staticBytes, dynamicBytes, request, -1, 0, 0, 0, -1);
    }

    /**
     * A rendezvous message's request to send: the message waits in this rank's rendezvous area at {@code offset}, or
     * in an extent of it ({@code extentAddress} non-zero: then at {@code offset} of the extent, which peers map with
     * {@code extentKey}). {@code writtenAt}: where the message's written word is, when the sender still writes it
     * (-1: it is whole).
     */
    Outbound(int context, int tag, int type, int elements, int flags, long sequence, long offset, int length,
             long extentAddress, long extentKey, long writtenAt, DeviceRequest request) {
        this(Frames.RTS, context, tag, type, elements, flags, sequence, MemorySegment.ofArray(new byte[8]), NONE, request,
                offset, length, extentAddress, extentKey, writtenAt);
    }

    private Outbound(int kind, int context, int tag, int type, int elements, int flags, long sequence,
                     MemorySegment staticBytes, byte[] dynamicBytes, DeviceRequest request, long rdvOffset,
                     int rdvLength, long extentAddress, long extentKey, long writtenAt) {
        this.kind = kind;
        this.context = context;
        this.tag = tag;
        this.type = type;
        this.elements = elements;
        this.flags = flags;
        this.sequence = sequence;
        this.staticBytes = staticBytes;
        this.dynamicBytes = dynamicBytes == null ? NONE : dynamicBytes;
        this.request = request;
        this.rdvOffset = rdvOffset;
        this.rdvLength = rdvLength;
        this.extentAddress = extentAddress;
        this.extentKey = extentKey;
        this.writtenAt = writtenAt;
    }

    /** A header alone (an acknowledgement, a rendezvous message's FIN) echoing a message's sequence number. */
    static Outbound control(int kind, long sequence) {
        return new Outbound(kind, 0, 0, -1, 0, 0, sequence, EMPTY, null, null);
    }

    private static final byte[] NONE = new byte[0];
    private static final MemorySegment EMPTY = MemorySegment.ofArray(NONE);

    long total() {
        return staticBytes.byteSize() + dynamicBytes.length;
    }

    /** @return whether every fragment has been written into a send slot */
    boolean isCopied() {
        return headerSent && copied == total();
    }

    /**
     * Writes the next fragment into a send slot.
     *
     * @param slot the slot
     * @return the fragment's length
     */
    int nextFragment(MemorySegment slot) {
        long at = 0;
        if (!headerSent) {
            if (kind == Frames.RTS) {
                Frames.header(slot, kind, context, tag, rdvLength, 0, type, elements, flags, sequence);
                slot.set(ValueLayout.JAVA_LONG, Frames.RTS_OFFSET, rdvOffset);
                slot.set(ValueLayout.JAVA_LONG, Frames.RTS_EXTENT_ADDRESS, extentAddress);
                slot.set(ValueLayout.JAVA_LONG, Frames.RTS_EXTENT_KEY, extentKey);
                slot.set(ValueLayout.JAVA_LONG, Frames.RTS_WRITTEN, writtenAt);
                headerSent = true;
                copied = total();
                return Frames.RTS_LENGTH;
            }
            Frames.header(slot, kind, context, tag, (int) staticBytes.byteSize(), dynamicBytes.length, type, elements,
                    flags, sequence);
            headerSent = true;
            at = Frames.HEADER;
        }
        long room = slot.byteSize() - at;
        long n = Math.min(room, total() - copied);
        long done = 0;
        while (done < n) {
            if (copied < staticBytes.byteSize()) {
                long k = Math.min(n - done, staticBytes.byteSize() - copied);
                MemorySegment.copy(staticBytes, copied, slot, at + done, k);
                done += k;
                copied += k;
            } else {
                int from = (int) (copied - staticBytes.byteSize());
                int k = (int) Math.min(n - done, dynamicBytes.length - from);
                MemorySegment.copy(dynamicBytes, from, slot, ValueLayout.JAVA_BYTE, at + done, k);
                done += k;
                copied += k;
            }
        }
        return (int) (at + n);
    }
}
