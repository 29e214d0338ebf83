package dev.gdasync.libmp.coll.msccl;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * One rank's connection memory for blocking runs of the host interpreter, as its owner and its peers see it (the
 * same bytes: the owner's segment here, a peer's mapped segment or window there). A header says which call the
 * owner is in and which buffers it exposes, then one region per thread block holds that block's receive side.
 *
 * <pre>
 *   0    header line: the number of the call it is in (stored last with release), the last call whose receives
 *                     it finished (done), the call it failed in (0: none), the call's record (4 longs)
 *   64   the input and output buffers (address, key, bytes each) that direct messages of the call land in
 *   128  region of thread block 0, then 1, …
 * </pre>
 * The owner writes the header line twice a call (start and end) and a peer reads it once, so the numbers a sender
 * checks cost one cache-line transfer. A region has two halves, one for calls with an even number and one for odd
 * ones, so that a sender in call s needs only the receiver to have finished call s − 2, which it nearly always
 * has, rather than s − 1, which would put one more hand-off on every call's path. A half: {@code slots ×
 * slotBytes} of slots, a 64-byte line per slot flag and a consumed line (messages this block received and no
 * longer needs: the sender's flow control). The first flag's line also carries the sender's call (its number and
 * record, written before that flag), which the receiver checks when the flag arrives: no extra line to fetch.
 */
final class HostArea {
    static final long EPOCH = 0;
    static final long DONE = 8;
    static final long FAILED = 16;
    static final long RECORD = 24;
    static final long BUFFERS = 64;
    static final long REGIONS = 128;
    static final long LINE = 64;
    /** Where the sender's call lies in the first flag's line. */
    private static final long CALL = 8;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment area;
    private final int slots;
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
        this.slotBytes = slotBytes;
        this.regionBytes = regionBytes(slots, slotBytes);
    }

    static long halfBytes(int slots, long slotBytes) {
        return (long) slots * slotBytes + LINE * slots + LINE;
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
     * Says which call this rank is in and which buffers direct messages may land in: the record and buffers first,
     * the number last (release), so a peer that sees the number sees the rest.
     */
    void publishCall(long epoch, CallRecord call, long inAddress, long inKey, long inBytes, long outAddress,
                     long outKey, long outBytes) {
        call.writeTo(area, RECORD);
        area.set(ValueLayout.JAVA_LONG, BUFFERS, inAddress);
        area.set(ValueLayout.JAVA_LONG, BUFFERS + 8, inKey);
        area.set(ValueLayout.JAVA_LONG, BUFFERS + 16, inBytes);
        area.set(ValueLayout.JAVA_LONG, BUFFERS + 24, outAddress);
        area.set(ValueLayout.JAVA_LONG, BUFFERS + 32, outKey);
        area.set(ValueLayout.JAVA_LONG, BUFFERS + 40, outBytes);
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
        return half(tb, seq) + ((q - 1) % slots) * slotBytes;
    }

    long flagOffset(int tb, long seq, long q) {
        return half(tb, seq) + (long) slots * slotBytes + ((q - 1) % slots) * LINE;
    }

    /** @return where the sender's call lies: in the first flag's line, after the flag */
    long callLineOffset(int tb, long seq) {
        return flagOffset(tb, seq, 1) + CALL;
    }

    long consumedOffset(int tb, long seq) {
        return half(tb, seq) + (long) slots * slotBytes + (long) slots * LINE;
    }

    long getAcquire(long offset) {
        return (long) LONG.getAcquire(area, offset);
    }

    void setRelease(long offset, long value) {
        LONG.setRelease(area, offset, value);
    }

    /** Writes a sender's call: its number and record, before its first flag of call {@code seq}. */
    void writeCallLine(int tb, long seq, CallRecord call) {
        long at = callLineOffset(tb, seq);
        area.set(ValueLayout.JAVA_LONG, at, seq);
        call.writeTo(area, at + 8);
    }

    /** @return whether the sender's call in call {@code seq}'s half names that call with {@code call} */
    boolean callLineIs(int tb, long seq, CallRecord call) {
        long at = callLineOffset(tb, seq);
        return area.get(ValueLayout.JAVA_LONG, at) == seq && call.matches(area, at + 8);
    }

    long callLineSeq(int tb, long seq) {
        return area.get(ValueLayout.JAVA_LONG, callLineOffset(tb, seq));
    }

    CallRecord callLine(int tb, long seq) {
        return CallRecord.readFrom(area, callLineOffset(tb, seq) + 8);
    }
}
