package dev.gdasync.libmp;

import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Exports requests into a KI descriptor table for the threads of a kernel (LibMP's
 * {@code mp::mlx5::get_descriptors}): a prepared send's ring, a posted request's completion wait, a word
 * wait. Requests change state when the table is written, so a failed write changes nothing.
 */
public final class MpKiExport {
    private final Mp mp;
    private final KiTable.Builder builder;
    private final List<MpRequest> sends = new ArrayList<>();
    private final List<MpRequest> waits = new ArrayList<>();

    MpKiExport(Mp mp) {
        this(mp, KiTable.builder(DeviceAddressMap.HOST));
    }

    MpKiExport(Mp mp, KiTable.Builder builder) {
        this.mp = mp;
        this.builder = builder;
    }

    /**
     * Exports the ring of a prepared send or put.
     *
     * @param r a PREPARED request
     * @return its send entry index
     */
    public int addSend(MpRequest r) {
        mp.requirePrepared(r);
        if (r.stagedSend != null) {
            throw new IllegalStateException(r.describe() + " is already in a descriptor queue or KI export");
        }
        int i = builder.addSend(r.send);
        sends.add(r);
        r.stagedSend = this;
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
     */
    public int addTemplate(MpRequest r) {
        mp.requirePrepared(r);
        if (r.stagedSend != null) {
            throw new IllegalStateException(r.describe() + " is already in a descriptor queue or KI export");
        }
        int i = builder.addTemplate(r.send);
        sends.add(r);
        r.stagedSend = this;
        return i;
    }

    /**
     * Exports the wait for a posted request's completion (or for a send exported in this table).
     *
     * @param r the request
     * @return its wait entry index
     */
    public int addWait(MpRequest r) {
        if (!(r.state == RequestState.PREPARED && r.stagedSend == this)) {
            mp.requireStreamWaitable(r);
        }
        if (r.wait == null) {
            throw new IllegalStateException(r.describe() + " is a NOWAIT put: it writes no completion to wait for");
        }
        if (r.stagedWait != null) {
            throw new IllegalStateException("the completion of " + r.describe() + " is already in a descriptor queue or KI export");
        }
        int i = builder.addWait(r.wait);
        waits.add(r);
        r.stagedWait = this;
        return i;
    }

    /**
     * Exports a wait on a plain word (a ready flag).
     *
     * @param word      the word
     * @param value     the operand
     * @param condition the condition
     * @return its wait entry index
     */
    public int addWordWait(MemoryWord word, int value, WaitCondition condition) {
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
     */
    public KiTable writeTo(MemorySegment dest) {
        KiTable t = builder.writeTo(dest);
        for (MpRequest r : sends) {
            r.state = RequestState.PENDING_NOWAIT;
            r.stagedSend = null;
        }
        for (MpRequest r : waits) {
            r.state = RequestState.PENDING;
            r.stagedWait = null;
        }
        return t;
    }
}
