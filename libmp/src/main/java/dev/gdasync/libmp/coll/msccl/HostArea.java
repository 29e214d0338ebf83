package dev.gdasync.libmp.coll.msccl;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * One rank's connection memory for blocking runs of the host interpreter, as its owner and its peers see it (the
 * same bytes: the owner's segment here, mapped into its peers' processes there). A header says which call the
 * owner is in and which buffers it exposes, then one region per thread block holds that block's receive side.
 *
 * <pre>
 *   0    header line: the number of the call it is in (stored last with release), the last call whose receives
 *                     it finished (done), the call it failed in (0: none), the call's record (4 longs)
 *   64   the input and output buffers (address, key, bytes each) that direct messages of the call land in
 *   128  region of thread block 0, then 1, …
 * </pre>
 * The owner writes the header line twice a call (start and end); peers read it only when they must (a direct message
 * needs its buffers, a sender has not heard from it lately, a wait is long). A region has two halves, one for calls
 * with an even number and one for odd ones, so that a sender in call s needs only the receiver to have finished
 * call s − 2, which it nearly always has, rather than s − 1, which would put one more hand-off on every call's
 * path. A half: {@code slots × slotBytes} of slots, 64-byte flag lines (one per slot, at least {@value #MIN_FLAGS}),
 * whose other 56 bytes carry the message itself when it is that small (one cache line moves, as in the built-ins'
 * inline path; such messages need no slot, so a call may send as many as there are flag lines), a call line (the
 * record of the sender's call, rewritten only when it changes, which the receiver checks at the first message of a
 * call) and a consumed line (messages this block received and no longer needs: the sender's flow control).
 */
final class HostArea {
    static final long EPOCH = 0;
    static final long DONE = 8;
    static final long FAILED = 16;
    static final long RECORD = 24;
    static final long BUFFERS = 64;
    static final long REGIONS = 128;
    static final long LINE = 64;
    /** Bytes a message may have to travel in its flag's line. */
    static final long INLINE_BYTES = LINE - 8;
    /**
     * Flag lines per half, at least this many: messages that travel inline need no slot, so a call of up to this many
     * of them never waits for the receiver's consumed count (a ring of 4 ranks sends 6 a call).
     */
    static final int MIN_FLAGS = 16;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment area;
    private final int slots;
    private final int flags;
    /** slots − 1 and flags − 1 where they are powers of two (a mask, not a division, per message), else -1. */
    private final long slotMask;
    private final long flagMask;
    private final long slotBytes;
    private final long regionBytes;

    /**
     * @param area      the whole area ({@link #bytes} long)
     * @param slots     slots per connection
     * @param slotBytes bytes of one slot
     */
    HostArea(MemorySegment area, int slots, long slotBytes) {
        this.area = area;
        this.slots = slots;
        this.flags = flags(slots);
        this.slotMask = Integer.bitCount(slots) == 1 ? slots - 1 : -1;
        this.flagMask = Integer.bitCount(flags) == 1 ? flags - 1 : -1;
        this.slotBytes = slotBytes;
        this.regionBytes = regionBytes(slots, slotBytes);
    }

    /** @return the flag lines of a half: one per slot, and at least {@link #MIN_FLAGS} */
    static int flags(int slots) {
        return Math.max(slots, MIN_FLAGS);
    }

    static long halfBytes(int slots, long slotBytes) {
        return (long) slots * slotBytes + LINE * flags(slots) + 2 * LINE;
    }

    static long regionBytes(int slots, long slotBytes) {
        return 2 * halfBytes(slots, slotBytes);
    }

    /** @return the bytes of an area with {@code blocks} regions */
    static long bytes(int slots, long slotBytes, int blocks) {
        return REGIONS + regionBytes(slots, slotBytes) * blocks;
    }

    MemorySegment segment() {
        return area;
    }

    // ---- header ----

    /** @return the number of the last call this rank started */
    long epoch() {
        return (long) LONG.getAcquire(area, EPOCH);
    }

    /**
     * Says which call this rank is in: the record (unless the last call published the same one) and the buffers
     * direct messages land in (only for a call that has some) first, the number last (release), so that a peer
     * that sees the number sees the rest.
     *
     * @param call      the call's record, or null if it is the one already published
     * @param inAddress the input's address, key and bytes, then the output's; ignored unless {@code buffers}
     */
    void publishCall(long epoch, CallRecord call, boolean buffers, long inAddress, long inKey, long inBytes,
                     long outAddress, long outKey, long outBytes) {
        if (call != null) {
            call.writeTo(area, RECORD);
        }
        if (buffers) {
            area.set(ValueLayout.JAVA_LONG, BUFFERS, inAddress);
            area.set(ValueLayout.JAVA_LONG, BUFFERS + 8, inKey);
            area.set(ValueLayout.JAVA_LONG, BUFFERS + 16, inBytes);
            area.set(ValueLayout.JAVA_LONG, BUFFERS + 24, outAddress);
            area.set(ValueLayout.JAVA_LONG, BUFFERS + 32, outKey);
            area.set(ValueLayout.JAVA_LONG, BUFFERS + 40, outBytes);
        }
        LONG.setRelease(area, EPOCH, epoch);
    }

    /** @return whether the published call is {@code call} (read after {@link #epoch} showed its number) */
    boolean callIs(CallRecord call) {
        return call.matches(area, RECORD);
    }

    /** @return the published call (for messages) */
    CallRecord call() {
        return CallRecord.readFrom(area, RECORD);
    }

    /**
     * @param output the output buffer, else the input
     * @return address, key and bytes of that buffer as published
     */
    long bufferWord(boolean output, int word) {
        return area.get(ValueLayout.JAVA_LONG, BUFFERS + (output ? 24 : 0) + 8L * word);
    }

    long done() {
        return (long) LONG.getAcquire(area, DONE);
    }

    void setDone(long epoch) {
        LONG.setRelease(area, DONE, epoch);
    }

    long failed() {
        return (long) LONG.getAcquire(area, FAILED);
    }

    void setFailed(long epoch) {
        LONG.setRelease(area, FAILED, epoch);
    }

    // ---- regions ----

    /** @return where the half of thread block {@code tb}'s region that call {@code seq} uses starts */
    long half(int tb, long seq) {
        return REGIONS + regionBytes * tb + (seq & 1) * (regionBytes / 2);
    }

    /** @return where message q's slot of call {@code seq} starts: slot {@code (q − 1) mod slots} of the half */
    long slotOffset(int tb, long seq, long q) {
        return half(tb, seq) + (slotMask >= 0 ? (q - 1) & slotMask : (q - 1) % slots) * slotBytes;
    }

    /** @return where message q's flag lies: line {@code (q − 1) mod flags} of the half */
    long flagOffset(int tb, long seq, long q) {
        long line = flagMask >= 0 ? (q - 1) & flagMask : (q - 1) % flags;
        return half(tb, seq) + (long) slots * slotBytes + line * LINE;
    }

    /** @return the flag lines of a half */
    int flags() {
        return flags;
    }

    /** @return where message q travels when it is inline: in its flag's line, after the flag */
    long inlineOffset(int tb, long seq, long q) {
        return flagOffset(tb, seq, q) + 8;
    }

    long callLineOffset(int tb, long seq) {
        return half(tb, seq) + (long) slots * slotBytes + (long) flags * LINE;
    }

    long consumedOffset(int tb, long seq) {
        return callLineOffset(tb, seq) + LINE;
    }

    long getAcquire(long offset) {
        return (long) LONG.getAcquire(area, offset);
    }

    void setRelease(long offset, long value) {
        LONG.setRelease(area, offset, value);
    }

    /**
     * Writes a sender's call record into the call line of call {@code seq}'s half unless it is there already (a
     * line that does not change stays in the receiver's cache).
     */
    void writeCallLine(int tb, long seq, CallRecord call) {
        long at = callLineOffset(tb, seq);
        if (!call.matches(area, at)) {
            call.writeTo(area, at);
        }
    }

    /** @return whether the call line of call {@code seq}'s half holds {@code call} */
    boolean callLineIs(int tb, long seq, CallRecord call) {
        return call.matches(area, callLineOffset(tb, seq));
    }

    CallRecord callLine(int tb, long seq) {
        return CallRecord.readFrom(area, callLineOffset(tb, seq));
    }
}
