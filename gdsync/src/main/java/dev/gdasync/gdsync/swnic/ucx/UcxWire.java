package dev.gdasync.gdsync.swnic.ucx;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The messages of the UCX transport: one active message id, a fixed header, the payload as the message's
 * data. A request carries a send queue entry to the peer's NIC, which executes it against its own memory
 * and receive queue and answers with a response (status, byte count, an atomic's original value, a READ's
 * bytes); a close tells the peer's queue pair that this one closed. Little-endian, as both ends of one
 * machine's build agree; headers arrive unaligned, so every access is unaligned.
 */
final class UcxWire {
    /** The active message id of every message of the transport. */
    static final int AM_ID = 0x47;

    static final byte REQUEST = 1;
    static final byte RESPONSE = 2;
    static final byte CLOSE = 3;
    /** A heartbeat: the sending queue pair is alive and connected (sent while a link is idle). */
    static final byte PING = 4;

    static final long OFF_TYPE = 0;        // u8
    static final long OFF_OPCODE = 1;      // u8: Opcode code
    static final long OFF_FLAGS = 2;       // u8: SendFlags
    static final long OFF_STATUS = 3;      // u8: CompletionStatus code (response)
    static final long OFF_DETAIL = 4;      // u32: ErrorDetail code (response); RNR_TIMEOUT asks to retry later
    static final long OFF_TO = 8;          // u64: token of the queue pair the message is for
    static final long OFF_FROM = 16;       // u64: token of the sending queue pair
    static final long OFF_SEQUENCE = 24;   // u64: the request's send queue index at the initiator
    static final long OFF_IMM = 32;        // u32
    static final long OFF_LENGTH = 36;     // u32: payload length (request), byte count (response)
    /**
     * u64, in a request: the sequence + 1 of the reverse direction's request that this message also acknowledges
     * (executed successfully, no data to return), or 0. Such acknowledgements ride on the next request instead of
     * a response of their own ({@link UcxConnection#owe}).
     */
    static final long OFF_ACK = 40;
    static final long OFF_ACK_LENGTH = 48; // u32: the acknowledged request's byte count
    /**
     * The short header ends here: sends, acknowledgements, heartbeats and closes need no more. With it a small
     * send fits UCX's shared-memory short messages (100 bytes with UCP's own header), which a full header would
     * push onto the slower copy path.
     */
    static final long SHORT_SIZE = 56;
    static final long OFF_OPERAND = 56;    // u64: compare/add (request), original value (atomic response)
    static final long OFF_REMOTE = 64;     // u64: remote address
    static final long OFF_RKEY = 72;       // u64
    static final long OFF_SWAP = 80;       // u64
    /** The full header: RDMA and atomic requests, responses. */
    static final long SIZE = 88;

    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    private UcxWire() {
    }

    /**
     * Starts a header: clears it and sets who it is from and for.
     *
     * @param h    a header, {@link #SIZE} bytes
     * @param type {@link #REQUEST}, {@link #RESPONSE}, {@link #CLOSE} or {@link #PING}
     * @param to   the token of the queue pair it is for
     * @param from the token of the sending queue pair
     * @return {@code h}, other fields zero
     */
    static MemorySegment start(MemorySegment h, byte type, long to, long from) {
        h.fill((byte) 0);
        u8(h, OFF_TYPE, type);
        h.set(LONG, OFF_TO, to);
        h.set(LONG, OFF_FROM, from);
        return h;
    }

    static byte type(MemorySegment h) {
        return h.get(ValueLayout.JAVA_BYTE, OFF_TYPE);
    }

    static int u8(MemorySegment h, long off) {
        return h.get(ValueLayout.JAVA_BYTE, off) & 0xff;
    }

    static void u8(MemorySegment h, long off, int v) {
        h.set(ValueLayout.JAVA_BYTE, off, (byte) v);
    }
}
