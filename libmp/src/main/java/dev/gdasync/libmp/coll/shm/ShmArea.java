package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * One member's area of a {@link ShmChannel}, as its owner writes it and the other members read it (the same bytes,
 * mapped into each process). Only the owner writes; every field it publishes is written before the header's
 * sequence word, which is stored with release semantics and read with acquire semantics.
 *
 * <pre>
 *   0    headers, one per collective number mod 4, 128 B apart; 64 B each: seq, kind, type, op, path, root, bytes,
 *        40 B inline payload
 *   512  done:  the last collective whose reads of the others' memory this member finished (filled, for the
 *        copying collectives)
 *   640  phase: the last collective whose first phase this member finished (two-phase algorithms)
 *   768  claim: who fills this member's receive buffer for its next collective (2 · number, + 1 for a helper)
 *   1024 keys, one per collective number mod 4, 64 B apart: send and receive buffer (address, key, bytes) for the
 *        mapped path and a helper, and when the collective was posted
 *   2048 slots, one per collective number mod 4
 * </pre>
 * Collective k uses header, keys and slot k mod 4: a member publishes k only once every member's done word says it
 * finished collective k − 4, so nobody can still be reading what that one left there. Headers, words and keys sit on cache lines of
 * their own (128 B apart where two are written at different times), so a reader polling one does not steal the
 * line the owner is writing next.
 */
final class ShmArea {
    /** Bytes of payload carried inside the header line itself: one cache-line transfer for the smallest calls. */
    static final int INLINE_BYTES = 40;
    /** Where slot 0 starts. */
    static final long SLOTS = 2048;
    /**
     * Collectives a member may have published and not finished (headers, keys and slots rotate over this many): so
     * many posted collectives progress with no call of the rank (a helper fills them).
     */
    static final int DEPTH = 4;

    static final int PATH_NONE = 0;
    /** The payload is in the header's inline bytes. */
    static final int PATH_INLINE = 1;
    /** The payload is in the slot. */
    static final int PATH_SLOT = 2;
    /** The payload stays in the owner's registered buffer; the keys say where. */
    static final int PATH_MAPPED = 3;

    private static final long HEAD = 0;
    private static final long HEAD_STRIDE = 128;
    private static final long DONE = 512;
    private static final long PHASE = 640;
    private static final long CLAIM = 768;
    private static final long KEYS = 1024;
    private static final long KEYS_STRIDE = 64;

    private static final long H_SEQ = 0;
    private static final long H_KIND = 8;
    private static final long H_TYPE = 9;
    private static final long H_OP = 10;
    private static final long H_PATH = 11;
    private static final long H_ROOT = 12;
    private static final long H_BYTES = 16;
    private static final long H_INLINE = 24;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment area;
    private final long slotBytes;

    ShmArea(MemorySegment area, long slotBytes) {
        this.area = area;
        this.slotBytes = slotBytes;
    }

    /**
     * @param slotBytes the capacity of one slot
     * @return the bytes of an area with {@link #DEPTH} such slots
     */
    static long bytesFor(long slotBytes) {
        return SLOTS + DEPTH * slotBytes;
    }

    /** @return the capacity of one slot */
    long slotBytes() {
        return slotBytes;
    }

    private static long head(long seq) {
        return HEAD + (seq % DEPTH) * HEAD_STRIDE;
    }

    /** @return the number of the last collective this member published in the header {@code seq} uses (seq mod 4) */
    long seqOf(long seq) {
        return (long) LONG.getAcquire(area, head(seq) + H_SEQ);
    }

    /** Writes the description of collective {@code seq} (not yet visible: {@link #publish} makes it so). */
    void describe(long seq, ShmCall call, int path) {
        long h = head(seq);
        area.set(ValueLayout.JAVA_BYTE, h + H_KIND, (byte) call.kind().ordinal());
        area.set(ValueLayout.JAVA_BYTE, h + H_TYPE, (byte) call.type());
        area.set(ValueLayout.JAVA_BYTE, h + H_OP, (byte) call.op());
        area.set(ValueLayout.JAVA_BYTE, h + H_PATH, (byte) path);
        area.set(ValueLayout.JAVA_INT, h + H_ROOT, call.root());
        area.set(ValueLayout.JAVA_LONG, h + H_BYTES, call.bytes());
    }

    /** Makes collective {@code seq}'s header, keys and payload visible to every reader that sees the number. */
    void publish(long seq) {
        LONG.setRelease(area, head(seq) + H_SEQ, seq);
    }

    /** @return the call this member described for collective {@code seq} (read after {@link #seqOf} showed it) */
    ShmCall callOf(long seq) {
        long h = head(seq);
        return new ShmCall(ShmCall.Kind.of(area.get(ValueLayout.JAVA_BYTE, h + H_KIND)),
                area.get(ValueLayout.JAVA_INT, h + H_ROOT), area.get(ValueLayout.JAVA_LONG, h + H_BYTES),
                area.get(ValueLayout.JAVA_BYTE, h + H_TYPE), area.get(ValueLayout.JAVA_BYTE, h + H_OP));
    }

    /** @return whether this member's description of collective {@code seq} is {@code call} (no allocation) */
    boolean agrees(long seq, ShmCall call) {
        long h = head(seq);
        return area.get(ValueLayout.JAVA_BYTE, h + H_KIND) == call.kind().ordinal()
                && area.get(ValueLayout.JAVA_INT, h + H_ROOT) == call.root()
                && area.get(ValueLayout.JAVA_LONG, h + H_BYTES) == call.bytes()
                && area.get(ValueLayout.JAVA_BYTE, h + H_TYPE) == (byte) call.type()
                && area.get(ValueLayout.JAVA_BYTE, h + H_OP) == (byte) call.op();
    }

    /** @return where this member put its payload of collective {@code seq} ({@code PATH_*}) */
    int pathOf(long seq) {
        return area.get(ValueLayout.JAVA_BYTE, head(seq) + H_PATH);
    }

    /** @return the header's inline payload bytes of collective {@code seq} */
    MemorySegment inline(long seq) {
        return area.asSlice(head(seq) + H_INLINE, INLINE_BYTES);
    }

    /** @return the slot of collective {@code seq} */
    MemorySegment slot(long seq) {
        return area.asSlice(SLOTS + (seq % DEPTH) * slotBytes, slotBytes);
    }

    /** Writes the buffers of collective {@code seq} for the mapped path (address, key, bytes; 0 for none). */
    void keys(long seq, long sendAddress, long sendKey, long sendBytes, long recvAddress, long recvKey,
              long recvBytes) {
        long k = KEYS + (seq % DEPTH) * KEYS_STRIDE;
        area.set(ValueLayout.JAVA_LONG, k, sendAddress);
        area.set(ValueLayout.JAVA_LONG, k + 8, sendKey);
        area.set(ValueLayout.JAVA_LONG, k + 16, sendBytes);
        area.set(ValueLayout.JAVA_LONG, k + 24, recvAddress);
        area.set(ValueLayout.JAVA_LONG, k + 32, recvKey);
        area.set(ValueLayout.JAVA_LONG, k + 40, recvBytes);
    }

    /** Writes the receive buffer of collective {@code seq} alone (what a helper fills for this member). */
    void recvKeys(long seq, long address, long key, long bytes) {
        long k = KEYS + (seq % DEPTH) * KEYS_STRIDE;
        area.set(ValueLayout.JAVA_LONG, k + 24, address);
        area.set(ValueLayout.JAVA_LONG, k + 32, key);
        area.set(ValueLayout.JAVA_LONG, k + 40, bytes);
    }

    /** Writes when this member posted collective {@code seq} ({@link System#nanoTime()}, one clock per host). */
    void stamp(long seq, long nanos) {
        area.set(ValueLayout.JAVA_LONG, KEYS + (seq % DEPTH) * KEYS_STRIDE + 48, nanos);
    }

    /** @return when this member posted collective {@code seq}, as {@link #stamp} wrote it */
    long stampOf(long seq) {
        return area.get(ValueLayout.JAVA_LONG, KEYS + (seq % DEPTH) * KEYS_STRIDE + 48);
    }

    /**
     * @param seq  the collective
     * @param recv whether the receive buffer is wanted (else the send buffer)
     * @return address, key and bytes of that buffer as the owner published them
     */
    long[] keysOf(long seq, boolean recv) {
        long k = KEYS + (seq % DEPTH) * KEYS_STRIDE + (recv ? 24 : 0);
        return new long[] {area.get(ValueLayout.JAVA_LONG, k), area.get(ValueLayout.JAVA_LONG, k + 8),
                area.get(ValueLayout.JAVA_LONG, k + 16)};
    }

    /** @return the last collective whose reads of the others' memory this member finished */
    long done() {
        return (long) LONG.getAcquire(area, DONE);
    }

    /**
     * Raises the done word to {@code seq} (never lowers it: a helper may have filled a later collective of this member
     * while the member was still finishing an earlier one).
     */
    void setDone(long seq) {
        for (;;) {
            long d = (long) LONG.getAcquire(area, DONE);
            if (d >= seq || LONG.compareAndSet(area, DONE, d, seq)) {
                return;
            }
        }
    }

    /** @return the last collective whose first phase this member finished */
    long phase() {
        return (long) LONG.getAcquire(area, PHASE);
    }

    void setPhase(long seq) {
        LONG.setRelease(area, PHASE, seq);
    }

    /**
     * Claims the filling of this member's receive buffer for collective {@code seq}: the member itself, or a helper
     * (the offload engine's collective proxy) acting for it; the first to claim does it, the other waits for the done
     * word.
     *
     * @param seq    the collective
     * @param helper whether the claimer is a helper rather than the member
     * @return whether this claimer won
     */
    boolean claim(long seq, boolean helper) {
        long want = 2 * seq + (helper ? 1 : 0);
        for (;;) {
            long c = (long) LONG.getAcquire(area, CLAIM);
            if (c >= 2 * seq) {
                return false;
            }
            if (LONG.compareAndSet(area, CLAIM, c, want)) {
                return true;
            }
        }
    }

    /** @return whether collective {@code seq}'s filling was claimed (by the member or a helper) */
    boolean claimed(long seq) {
        return (long) LONG.getAcquire(area, CLAIM) >= 2 * seq;
    }

    /** Zeroes the words a new channel starts from (the owner does this before it publishes the area). */
    void clear() {
        area.asSlice(0, SLOTS).fill((byte) 0);
    }
}
