package dev.gdasync.libmp;

import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Exports requests into a KI descriptor table for the threads of a kernel (LibMP's
 * {@code mp::mlx5::get_descriptors}): a prepared send's ring, a posted request's completion wait, a word
 * wait. Requests change state when the table is written, so a failed write changes nothing.
 */
public final class MpKiExport implements Staging {
    private final MpContext mp;
    private final KiTable.Builder builder;
    private final List<MpRequest> sends = new ArrayList<>();
    private final List<MpRequest> waits = new ArrayList<>();

    MpKiExport(MpContext mp) {
        this(mp, KiTable.builder(DeviceAddressMap.HOST));
    }

    MpKiExport(MpContext mp, KiTable.Builder builder) {
        this.mp = mp;
        this.builder = builder;
    }

    /**
     * Exports the ring of a prepared send or put.
     *
     * @param r a PREPARED request
     * @return its send entry index
     * @throws NullPointerException     if the request is null
     * @throws IllegalArgumentException if it is another Mp's
     * @throws IllegalStateException    if it is not PREPARED, or its send is already in a queue or export
     */
    public int addSend(MpRequest r) {
        Objects.requireNonNull(r, "request must not be null").stage(mp, this, true);
        int i;
        try {
            i = builder.addSend(r.sendRequest());
        } catch (RuntimeException e) {
            r.unstage(this, true);
            throw e;
        }
        sends.add(r);
        return i;
    }

    /**
     * Exports a prepared send or put as a template: the kernel sets its local buffer, length and remote
     * target ({@code KiTemplateArgs}: a buffer inside a registration, its {@link MpRegistration#lkey()}, a
     * window's {@link MpWindow#remoteAddress} and {@link MpWindow#rkey}) before ringing it. The NIC checks
     * the keys and bounds it is given, as for any request. One buffer, not INLINE.
     *
     * @param r a PREPARED request
     * @return its template entry index
     * @throws NullPointerException     if the request is null
     * @throws IllegalArgumentException if it is another Mp's
     * @throws IllegalStateException    if it is not PREPARED, is already in a queue or export, or cannot be a template
     */
    public int addTemplate(MpRequest r) {
        Objects.requireNonNull(r, "request must not be null").stage(mp, this, true);
        int i;
        try {
            i = builder.addTemplate(r.sendRequest());
        } catch (RuntimeException e) {
            r.unstage(this, true);
            throw e;
        }
        sends.add(r);
        return i;
    }

    /**
     * Exports the wait for a posted request's completion (or for a send exported in this table).
     *
     * @param r the request
     * @return its wait entry index
     * @throws NullPointerException     if the request is null
     * @throws IllegalArgumentException if it is another Mp's
     * @throws IllegalStateException    if its completion cannot be waited on, or is already in a queue or export
     */
    public int addWait(MpRequest r) {
        Objects.requireNonNull(r, "request must not be null").stage(mp, this, false);
        int i;
        try {
            i = builder.addWait(r.waitRequest());
        } catch (RuntimeException e) {
            r.unstage(this, false);
            throw e;
        }
        waits.add(r);
        return i;
    }

    /**
     * Exports a wait on a plain word (a ready flag).
     *
     * @param word      the word
     * @param value     the operand
     * @param condition the condition
     * @return its wait entry index
     * @throws NullPointerException     if the word or the condition is null
     * @throws IllegalArgumentException if the word is not 32-bit
     */
    public int addWordWait(MemoryWord word, int value, WaitCondition condition) {
        Objects.requireNonNull(word, "word must not be null");
        Objects.requireNonNull(condition, "condition must not be null");
        return builder.addWordWait(word, value, condition);
    }

    /** @return the bytes the table will take */
    public long byteSize() {
        return builder.byteSize();
    }

    /**
     * Writes the table and moves the exported requests on: sends to PENDING_NOWAIT, waited requests to
     * PENDING.
     *
     * @param dest device-visible memory of at least {@link #byteSize()} bytes
     * @return the table
     * @throws NullPointerException     if the destination is null; nothing is written and no request moves
     * @throws IllegalArgumentException if the destination is too small or misaligned; no request moves
     * @throws IllegalStateException    if an exported request can no longer move on, or the table was written
     */
    public KiTable writeTo(MemorySegment dest) {
        Objects.requireNonNull(dest, "dest must not be null");
        for (MpRequest r : sends) {
            r.checkStagedPost(this, true);
        }
        for (MpRequest r : waits) {
            r.checkStagedPost(this, false);
        }
        KiTable t = builder.writeTo(dest);
        // Sends first: a request whose send and wait are both here goes PREPARED → PENDING_NOWAIT → PENDING.
        for (MpRequest r : sends) {
            r.unstage(this, true);
            r.posted();
        }
        for (MpRequest r : waits) {
            r.unstage(this, false);
            r.waitedOnStream();
        }
        return t;
    }
}
