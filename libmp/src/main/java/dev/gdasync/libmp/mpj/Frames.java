package dev.gdasync.libmp.mpj;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The layout of the fragments MPJ messages travel in between two ranks' {@link GdasyncDevice}s. A message is one or
 * more fragments, each sent into one receive slot of the peer: the first starts with a {@value #HEADER}-byte header
 * (kind, context, tag, the lengths of the static and dynamic sections, the first section's type and element count,
 * flags, a sequence number), then the message's bytes (static section, then dynamic section); the following
 * fragments carry bytes only. A peer's fragments arrive in the order they were sent (libmp matches per peer, FIFO), and
 * a rank sends a message's fragments back to back, so the receiver knows from the header how many follow. An
 * acknowledgement (for a synchronous send) is a header alone.
 *
 * <p>A large message travels by rendezvous instead: a request to send ({@link #RTS}, one fragment: the header, whose
 * lengths are the message's, then where the message is in the sender's rendezvous area, and where its written word is
 * while the sender still writes it), and, once the receiver has read it from there, a {@link #FIN} back (a header
 * alone, with the request's sequence number), which frees the sender's copy and acknowledges a synchronous send.
 */
final class Frames {
    /** A message's first fragment. */
    static final int DATA = 0x4D504A44;
    /** The acknowledgement of a synchronous send: the receiver matched it. */
    static final int ACK = 0x4D504A41;
    /** A large message's request to send: its bytes wait in the sender's rendezvous area. */
    static final int RTS = 0x4D504A52;
    /** The receiver has read a rendezvous message: the sender frees its copy. */
    static final int FIN = 0x4D504A46;
    /** The header's length. */
    static final int HEADER = 40;
    /** The message was sent synchronously: the receiver acknowledges once it matched it. */
    static final int FLAG_SYNC = 1;

    static final long KIND = 0;
    static final long CONTEXT = 4;
    static final long TAG = 8;
    static final long STATIC_LENGTH = 12;
    static final long DYNAMIC_LENGTH = 16;
    static final long TYPE = 20;
    static final long ELEMENTS = 24;
    static final long FLAGS = 28;
    static final long SEQUENCE = 32;
    /** In a {@link #RTS}: the message's offset in the sender's rendezvous area (or extent), right after the header. */
    static final long RTS_OFFSET = HEADER;
    /** In a {@link #RTS}: the address of the extent of the sender's area the message is in; 0 for the area itself. */
    static final long RTS_EXTENT_ADDRESS = HEADER + 8;
    /** In a {@link #RTS}: the key the receiver's NIC maps that extent with. */
    static final long RTS_EXTENT_KEY = HEADER + 16;
    /**
     * In a {@link #RTS}: where the message's written word is (the sender still writes the message, telling there how
     * many of its first bytes are final: {@link AreaBuffer}), in the same area or extent; -1 when it is whole.
     */
    static final long RTS_WRITTEN = HEADER + 24;
    /** A {@link #RTS}'s length. */
    static final int RTS_LENGTH = HEADER + 32;

    private Frames() {
    }

    static void header(MemorySegment slot, int kind, int context, int tag, int staticLength, int dynamicLength,
                       int type, int elements, int flags, long sequence) {
        slot.set(ValueLayout.JAVA_INT, KIND, kind);
        slot.set(ValueLayout.JAVA_INT, CONTEXT, context);
        slot.set(ValueLayout.JAVA_INT, TAG, tag);
        slot.set(ValueLayout.JAVA_INT, STATIC_LENGTH, staticLength);
        slot.set(ValueLayout.JAVA_INT, DYNAMIC_LENGTH, dynamicLength);
        slot.set(ValueLayout.JAVA_INT, TYPE, type);
        slot.set(ValueLayout.JAVA_INT, ELEMENTS, elements);
        slot.set(ValueLayout.JAVA_INT, FLAGS, flags);
        slot.set(ValueLayout.JAVA_LONG, SEQUENCE, sequence);
    }

    static int getInt(MemorySegment slot, long offset) {
        return slot.get(ValueLayout.JAVA_INT, offset);
    }

    static long getLong(MemorySegment slot, long offset) {
        return slot.get(ValueLayout.JAVA_LONG, offset);
    }
}
