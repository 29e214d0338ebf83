package dev.gdasync.libmp.mpj;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A message that arrived (or is arriving) from one rank: its envelope and its bytes, written fragment by fragment
 * either straight into the buffer of the receive that matched it when its header arrived ({@link #bindTo}), or into
 * heap arrays of its own ({@link #assemble}) when no posted receive took it then. Guarded by the device's lock.
 */
final class Inbound {
    private static final byte[] NONE = new byte[0];
    final int source;
    final int context;
    final int tag;
    final int type;
    final int elements;
    final boolean sync;
    final long sequence;
    final int staticLength;
    final int dynamicLength;
    /** For a message a rank sent to itself synchronously: the sender's request, completed when it is matched. */
    final DeviceRequest localSender;
    /** The static section when the message is assembled on its own; null when bound to a receive. */
    byte[] staticBytes;
    byte[] dynamicBytes;
    /** For a rendezvous message: its offset in the sender's rendezvous area; -1 for a message that carries its bytes. */
    long rdvOffset = -1;
    /** For a rendezvous message in an extent of its sender's area: the extent's address and key; else 0, 0. */
    long extentAddress;
    long extentKey;
    /** For a rendezvous message its sender still writes: its written word's offset ({@link AreaBuffer}); else -1. */
    long writtenAt = -1;
    /**
     * For a rendezvous message: its read waits for the program's stream sends to its sender (between hosts), and the
     * device completes the receive once it read it.
     */
    boolean readHeld;
    /** The receive that took the message when its header arrived, or null. */
    DeviceRequest boundTo;
    private MemorySegment staticTarget;
    private long filled;

    Inbound(int source, int context, int tag, int type, int elements, boolean sync, long sequence, int staticLength,
            int dynamicLength, DeviceRequest localSender) {
        this.source = source;
        this.context = context;
        this.tag = tag;
        this.type = type;
        this.elements = elements;
        this.sync = sync;
        this.sequence = sequence;
        this.staticLength = staticLength;
        this.dynamicLength = dynamicLength;
        this.localSender = localSender;
    }

    /** The message's bytes go into arrays of its own: it waits among the unexpected messages or is matched later. */
    Inbound assemble() {
        staticBytes = new byte[staticLength];
        dynamicBytes = dynamicLength == 0 ? NONE : new byte[dynamicLength];
        staticTarget = MemorySegment.ofArray(staticBytes);
        return this;
    }

    /**
     * The message's static section goes straight into a receive's buffer.
     *
     * @param r      the receive
     * @param target its buffer's memory, exactly {@link #staticLength} bytes
     */
    void bindTo(DeviceRequest r, MemorySegment target) {
        boundTo = r;
        staticTarget = target;
        dynamicBytes = dynamicLength == 0 ? NONE : new byte[dynamicLength];
    }

    /** @return the message's length: static and dynamic sections */
    long total() {
        return (long) staticLength + dynamicLength;
    }

    /** @return how many of its bytes are still to come */
    long remaining() {
        return total() - filled;
    }

    /** @return whether the message's bytes wait in its sender's rendezvous area, to be read once it is matched */
    boolean isRendezvous() {
        return rdvOffset >= 0;
    }

    /** @return whether this rendezvous message's sender may still be writing it ({@link AreaBuffer}) */
    boolean beingWritten() {
        return writtenAt >= 0;
    }

    /** @return whether this rendezvous message lies in an extent of its sender's area (not the area itself) */
    boolean inExtent() {
        return extentAddress != 0;
    }

    boolean isComplete() {
        return filled == total();
    }

    /**
     * Appends the next bytes of the message.
     *
     * @param from where they are (a receive slot)
     * @param at   their offset there
     * @param n    how many
     */
    void append(MemorySegment from, long at, int n) {
        int done = 0;
        while (done < n) {
            if (filled < staticLength) {
                int k = (int) Math.min(n - done, staticLength - filled);
                MemorySegment.copy(from, at + done, staticTarget, filled, k);
                done += k;
                filled += k;
            } else {
                int into = (int) (filled - staticLength);
                int k = Math.min(n - done, dynamicLength - into);
                MemorySegment.copy(from, ValueLayout.JAVA_BYTE, at + done, dynamicBytes, into, k);
                done += k;
                filled += k;
            }
        }
    }

    /**
     * @param src     a rank, or a wildcard ({@link xdev.Device#ANY_SOURCE})
     * @param tag     a tag, or {@link xdev.Device#ANY_TAG}
     * @param context a context
     * @return whether a receive with these arguments takes this message
     */
    boolean matches(int src, int tag, int context) {
        return this.context == context && (src == xdev.Device.ANY_SOURCE || src == source)
                && (tag == xdev.Device.ANY_TAG || tag == this.tag);
    }
}
