package dev.gdasync.libmp.coll.shm;

import java.lang.foreign.MemorySegment;

/**
 * One collective on a {@link ShmChannel}, as a state machine that never waits: {@link #advance} goes as far as the
 * other members let it and says whether the task finished. The stages:
 * <ol>
 * <li>publish: the payload (inline, slot, or the keys of this rank's buffers), the call's description, then the
 * sequence word;</li>
 * <li>arrive: every member has published this collective with the same call (otherwise every member finds the
 * disagreement at once and fails, naming both calls, before anything is read or written);</li>
 * <li>work: the collective's own copies and reductions ({@link #work}), which may wait on the others' phase
 * words;</li>
 * <li>done: this rank says it finished reading the others' memory, and, when the others read this rank's buffers
 * in place (the mapped path), waits until every member said so, so that the caller may reuse them on return.</li>
 * </ol>
 */
public abstract class ShmTask {
    private static final int PUBLISH = 0;
    private static final int ARRIVE = 1;
    private static final int WORK = 2;
    private static final int DONE = 3;
    private static final int FINISHED = 4;

    final ShmChannel ch;
    final ShmCall call;
    final long seq;
    final int n;
    final int me;
    private int stage;
    private int cursor;
    private int awaited = -1;
    private String failure;
    private boolean released;

    ShmTask(ShmChannel ch, ShmCall call) {
        this.ch = ch;
        this.call = call;
        this.seq = ch.nextSeq();
        this.n = ch.size();
        this.me = ch.rank();
    }

    /**
     * Moves the task as far as it goes without waiting.
     *
     * @return whether it finished (with or without a failure)
     */
    final boolean advance() {
        switch (stage) {
            case PUBLISH:
                if (!publishEarly()) {
                    return false;
                }
                // fall through
            case ARRIVE:
                for (; cursor < n; cursor++) {
                    if (cursor == me) {
                        continue;
                    }
                    ShmArea a = ch.areas[cursor];
                    if (a.seqOf(seq) < seq) {
                        awaited = cursor;
                        return false;
                    }
                    if (!a.agrees(seq, call)) {
                        disagree(cursor, a.callOf(seq));
                        return true;
                    }
                }
                stage = WORK;
                awaited = -1;
                // fall through
            case WORK:
                if (!work()) {
                    return false;
                }
                ch.own.setDone(seq);
                stage = DONE;
                cursor = 0;
                // fall through
            case DONE:
                if (exposesBuffers()) {
                    for (; cursor < n; cursor++) {
                        if (cursor != me && ch.areas[cursor].done() < seq) {
                            awaited = cursor;
                            return false;
                        }
                    }
                }
                stage = FINISHED;
                awaited = -1;
                return true;
            default:
                return true;
        }
    }

    /**
     * Publishes the task if the areas allow it, even before the tasks posted ahead of it finished (so that a helper
     * can fill it while the rank computes): collective k reuses the header, keys and slot of k − DEPTH, which are free
     * once every member said it finished reading for that one (its done word).
     *
     * @return whether the task is published
     */
    final boolean publishEarly() {
        if (stage != PUBLISH) {
            return true;
        }
        int late = ch.lateReader(seq - ShmArea.DEPTH);
        if (late >= 0) {
            awaited = late;
            return false;
        }
        int path = publishPayload();
        ch.own.describe(seq, call, path);
        ch.own.publish(seq);
        stage = ARRIVE;
        cursor = 0;
        awaited = -1;
        return true;
    }

    /**
     * Writes this rank's payload (inline, in the slot, or the keys of its buffers) for the others to read.
     *
     * @return the path: {@code ShmArea.PATH_*}
     */
    abstract int publishPayload();

    /**
     * The collective's copies and reductions, once every member published the same call. May be called again
     * until it returns true (a two-phase algorithm waits on the others' phase words in between).
     *
     * @return whether this rank's part is done
     */
    abstract boolean work();

    /** @return whether the others read this rank's buffers in place, so it must wait for their done words */
    abstract boolean exposesBuffers();

    /** @return whether every member finished its first phase (and names one that has not) */
    final boolean everyPhaseDone() {
        for (int m = 0; m < n; m++) {
            if (m != me && ch.areas[m].phase() < seq) {
                awaited = m;
                return false;
            }
        }
        awaited = -1;
        return true;
    }

    /** @return whether member m finished reading (its done word), naming it while it has not */
    final boolean doneBy(int m) {
        if (ch.areas[m].done() < seq) {
            awaited = m;
            return false;
        }
        awaited = -1;
        return true;
    }

    /**
     * What member m published for this collective: its inline bytes or slot (the first {@code bytes}), or its
     * send buffer ({@code recv} false) or receive buffer mapped here. A buffer that cannot be mapped fails the task
     * (it still runs to the end so the members stay in step) and gives null.
     */
    final MemorySegment payload(int m, long bytes, boolean recv) {
        ShmArea a = ch.areas[m];
        switch (a.pathOf(seq)) {
            case ShmArea.PATH_INLINE:
                return a.inline(seq).asSlice(0, bytes);
            case ShmArea.PATH_SLOT:
                return a.slot(seq).asSlice(0, bytes);
            case ShmArea.PATH_MAPPED:
                long[] keys = a.keysOf(seq, recv);
                MemorySegment mapped = ch.map(m, keys);
                if (mapped == null || mapped.byteSize() < bytes) {
                    fail(who(m) + "'s " + (recv ? "receive" : "send") + " buffer (" + keys[2] + " bytes at 0x"
                            + Long.toHexString(keys[0]) + ") cannot be mapped here: it is not registered memory of that"
                            + " rank that this rank can reach");
                    return null;
                }
                return mapped.asSlice(0, bytes);
            default:
                fail(who(m) + " published no payload for this collective");
                return null;
        }
    }

    /** Copies {@code bytes} of what this rank contributes into its inline bytes or slot, choosing by size. */
    final int publishCopy(MemorySegment from, long bytes) {
        if (bytes <= ShmArea.INLINE_BYTES) {
            MemorySegment.copy(from, 0, ch.own.inline(seq), 0, bytes);
            return ShmArea.PATH_INLINE;
        }
        MemorySegment.copy(from, 0, ch.own.slot(seq), 0, bytes);
        return ShmArea.PATH_SLOT;
    }

    /** @return where this rank writes an inline-or-slot payload of {@code bytes} for this collective */
    final MemorySegment ownPayload(long bytes) {
        return bytes <= ShmArea.INLINE_BYTES ? ch.own.inline(seq) : ch.own.slot(seq);
    }

    /** @return the path of a payload written with {@link #ownPayload} */
    static int pathFor(long bytes) {
        return bytes <= ShmArea.INLINE_BYTES ? ShmArea.PATH_INLINE : ShmArea.PATH_SLOT;
    }

    /** Publishes this rank's buffers for the mapped path (a null buffer publishes nothing for it). */
    final int publishKeys(MemorySegment send, long sendKey, MemorySegment recv, long recvKey) {
        ch.own.keys(seq, send == null ? 0 : send.address(), sendKey, send == null ? 0 : send.byteSize(),
                recv == null ? 0 : recv.address(), recvKey, recv == null ? 0 : recv.byteSize());
        return ShmArea.PATH_MAPPED;
    }

    private void disagree(int m, ShmCall theirs) {
        String them = theirs.kind() == null ? "an unknown collective" : ch.names.describe(theirs);
        finishWith(this + ": " + who(m) + " called " + them + " as its #" + number()
                + ": the ranks disagree; nothing was written");
    }

    /** @return member m as messages name it: its rank here, and its world rank where that differs */
    final String who(int m) {
        return "rank " + m + (ch.worldRanks[m] != m ? " (world rank " + ch.worldRanks[m] + ")" : "");
    }

    /** Fails the task at once: this rank takes no further part (every member found the same disagreement). */
    private void finishWith(String why) {
        if (failure == null) {
            failure = why;
        }
        ch.own.setDone(seq);
        stage = FINISHED;
        awaited = -1;
    }

    /** Records a failure; the task still runs to its end so the members stay in step. */
    final void fail(String why) {
        if (failure == null) {
            failure = this + ": " + why;
        }
    }

    /** The channel was abandoned: the task ends now with the reason. */
    final void abandon(String why) {
        if (stage != FINISHED) {
            if (failure == null) {
                failure = this + " was abandoned: " + why;
            }
            stage = FINISHED;
        }
    }

    /** @return whether the task finished, with or without a failure */
    public final boolean isFinished() {
        return stage == FINISHED;
    }

    /** @return why it failed, or null */
    public final String failure() {
        return failure;
    }

    /** @return the member the task waits for now, or -1 (none, or several) */
    public final int awaited() {
        return awaited;
    }

    /**
     * @return what the task waits for, naming the member and how far it got, for a timeout's message (empty when it
     *         waits for nobody in particular)
     */
    public final String waitingFor() {
        int m = awaited;
        if (m < 0 || stage == FINISHED) {
            return "";
        }
        ShmArea a = ch.areas[m];
        long latest = 0;
        for (int d = 0; d < ShmArea.DEPTH; d++) {
            latest = Math.max(latest, a.seqOf(seq + d));
        }
        String who = who(m);
        return switch (stage) {
            case PUBLISH -> who + " has not finished collective #" + (number() - ShmArea.DEPTH);
            case ARRIVE -> who + " has not called it: " + (latest == 0 ? "it has called no collective on " + ch.name()
                    + " yet" : "its latest collective on " + ch.name() + " is #" + (latest - 1));
            case WORK -> who + " has not finished the first phase";
            default -> who + " has not finished reading this rank's buffers";
        };
    }

    /** @return whether test or wait has handed the result to the caller */
    public final boolean released() {
        return released;
    }

    /** Marks the result handed to the caller. */
    public final void release() {
        released = true;
    }

    /** @return the collective's number on its communicator's shared-memory path, from 0 as messages show it */
    public final long number() {
        return seq - 1;
    }

    @Override
    public String toString() {
        return ch.names.describe(call) + " (#" + number() + " on " + ch.name() + ", rank " + me + " of " + n + ")";
    }
}
