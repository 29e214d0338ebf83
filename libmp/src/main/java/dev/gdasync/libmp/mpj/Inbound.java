package dev.gdasync.libmp.mpj;

import java.lang.foreign.MemorySegment;

/**
 * A message that arrived (or is arriving) from one rank: its envelope and its bytes, assembled fragment by fragment
 * into heap arrays. Matched against receives once complete. Guarded by the device's lock.
 */
final class Inbound {
    final int source;
    final int context;
    final int tag;
    final int type;
    final int elements;
    final boolean sync;
    final long sequence;
    final byte[] staticBytes;
    final byte[] dynamicBytes;
    /** For a message a rank sent to itself synchronously: the sender's request, completed when it is matched. */
    final DeviceRequest localSender;
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
        this.staticBytes = new byte[staticLength];
        this.dynamicBytes = new byte[dynamicLength];
        this.localSender = localSender;
    }

    /** @return the message's length: static and dynamic sections */
    long total() {
        return (long) staticBytes.length + dynamicBytes.length;
    }

    /** @return how many of its bytes are still to come */
    long remaining() {
        return total() - filled;
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
            if (filled < staticBytes.length) {
                int k = (int) Math.min(n - done, staticBytes.length - filled);
                MemorySegment.copy(from, java.lang.foreign.ValueLayout.JAVA_BYTE, at + done, staticBytes, (int) filled, k);
                done += k;
                filled += k;
            } else {
                int into = (int) (filled - staticBytes.length);
                int k = Math.min(n - done, dynamicBytes.length - into);
                MemorySegment.copy(from, java.lang.foreign.ValueLayout.JAVA_BYTE, at + done, dynamicBytes, into, k);
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
