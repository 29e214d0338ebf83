package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;
import dev.gdasync.libmp.coll.shm.ShmCall;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Where each rank of the message path posts the collectives it is calling, in a window the other ranks read with a
 * one-sided get: per communicator (its context id modulo {@link #ROWS}) a row of the latest call's number and the
 * last {@link #RING} calls (number, collective, root, size, type, operator). A rank writes its entry when it posts a
 * collective (a few plain stores); a peer reads the row only when a wait on this rank has not progressed for a while,
 * to tell a rank that has not called the collective yet from one that called a different one.
 *
 * <p>An entry is written number-last between two copies of the number (the first one invalidated while the fields
 * change), so a reader that sees both copies equal saw a whole entry. Driven by the thread that drives the Mp.
 *
 * <p>Where the NIC maps a peer's memory here (the software NIC on one host), a look is a few direct loads: it does
 * not queue behind this rank's own sends to that peer, which wait for the peer's receive and hold back a one-sided
 * get on the same queue pair. So a rank waiting only on its sends (a root) can still look at such a peer.
 */
final class CallBoard implements AutoCloseable {
    /** Communicator rows; a context id past them shares a row, and a look that finds another context gives up. */
    static final int ROWS = 64;
    /** Calls remembered per communicator: a peer may look a few calls late. */
    static final int RING = 4;
    private static final int ENTRY = 32;
    private static final int ROW = 16 + RING * ENTRY;

    private final Mp mp;
    private final MemorySegment area;
    private final MpWindow window;
    private final MemorySegment scratch;
    private final MpRegistration scratchReg;
    /** Each peer's board mapped here, once looked up; {@link MemorySegment#NULL} where the NIC cannot map it. */
    private final MemorySegment[] mapped;

    /**
     * What a look at a peer's row found.
     *
     * @param known   whether the row is the communicator's (else nothing can be said)
     * @param latest  the peer's latest call number on it, -1 for none
     * @param present whether the ring still held the asked call, whole
     * @param call    that call, null for one without a signature (an exchange, a group)
     */
    record Look(boolean known, int latest, boolean present, ShmCall call) {
        /** The row holds another communicator, or the peer cannot be read: nothing can be said. */
        static final Look UNKNOWN = new Look(false, -1, false, null);
    }

    /** Creates the board; collective over the Mp's ranks (a window). */
    CallBoard(Mp mp) {
        this.mp = mp;
        this.area = mp.allocate((long) ROWS * ROW);
        area.fill((byte) 0);
        for (int r = 0; r < ROWS; r++) {
            area.set(ValueLayout.JAVA_INT, (long) r * ROW, -1);
            area.set(ValueLayout.JAVA_INT, (long) r * ROW + 4, -1);
        }
        this.window = mp.windowCreate(area);
        this.scratch = mp.allocate(ROW);
        this.scratchReg = mp.register(scratch);
        this.mapped = new MemorySegment[mp.size()];
    }

    /**
     * @return whether a look at {@code peer} is direct loads (its board is mapped here), so it does not wait behind
     *         this rank's pending sends to it
     */
    boolean readsDirectly(int peer) {
        return mappedBoard(peer) != null;
    }

    private MemorySegment mappedBoard(int peer) {
        MemorySegment m = mapped[peer];
        if (m == null) {
            MemorySegment there = null;
            try {
                there = window.peerMemory(peer);
            } catch (RuntimeException e) {
                // the window is gone or the link failed: looks go through gets, whose own checks report it
            }
            m = there == null || there.byteSize() < (long) ROWS * ROW ? MemorySegment.NULL : there;
            mapped[peer] = m;
        }
        return m == MemorySegment.NULL ? null : m;
    }

    /** Posts this rank's call {@code number} on communicator {@code context}. */
    void post(int context, int number, ShmCall call) {
        long row = (long) Math.floorMod(context, ROWS) * ROW;
        long at = row + 16 + (long) Math.floorMod(number, RING) * ENTRY;
        area.set(ValueLayout.JAVA_INT, at, -1);
        VarHandle.storeStoreFence();
        area.set(ValueLayout.JAVA_BYTE, at + 4, (byte) (call == null ? 0 : call.kind().ordinal() + 1));
        area.set(ValueLayout.JAVA_BYTE, at + 5, (byte) (call == null ? 0 : call.type()));
        area.set(ValueLayout.JAVA_BYTE, at + 6, (byte) (call == null ? 0 : call.op()));
        area.set(ValueLayout.JAVA_INT, at + 8, call == null ? -1 : call.root());
        area.set(ValueLayout.JAVA_LONG, at + 16, call == null ? 0 : call.bytes());
        area.set(ValueLayout.JAVA_INT, at + 24, number);
        VarHandle.storeStoreFence();
        area.set(ValueLayout.JAVA_INT, at, number);
        area.set(ValueLayout.JAVA_INT, row, context);
        area.set(ValueLayout.JAVA_INT, row + 4, number);
    }

    /**
     * Reads a peer's row (a one-sided get, waited for here) and says what it called as {@code number}.
     *
     * @return the peer's latest call number and, if its ring still holds {@code number}, that call;
     *         {@link Look#UNKNOWN} if the row is another context's or the peer cannot be read
     */
    Look look(int peer, int context, int number) {
        int rowIndex = Math.floorMod(context, ROWS);
        long at = 16 + (long) Math.floorMod(number, RING) * ENTRY;
        MemorySegment there = peer == mp.rank() ? null : mappedBoard(peer);
        if (there != null) {
            // A direct copy, then the entry's first number again: unchanged means no rewrite began during the copy.
            VarHandle.acquireFence();
            MemorySegment.copy(there, (long) rowIndex * ROW, scratch, 0, ROW);
            VarHandle.loadLoadFence();
            if (there.get(ValueLayout.JAVA_INT, (long) rowIndex * ROW + at) != scratch.get(ValueLayout.JAVA_INT, at)) {
                scratch.set(ValueLayout.JAVA_INT, at, -1);
            }
        } else {
            try {
                MpRequest get = mp.iget(scratch, scratchReg, peer, (long) rowIndex * ROW, window);
                mp.wait(get);
            } catch (RuntimeException e) {
                return Look.UNKNOWN; // the peer closed its collectives, or its link failed: the wait's checks report it
            }
        }
        int rowContext = scratch.get(ValueLayout.JAVA_INT, 0);
        int latest = scratch.get(ValueLayout.JAVA_INT, 4);
        if (latest == -1) {
            return new Look(true, -1, false, null);
        }
        if (rowContext != context) {
            return Look.UNKNOWN;
        }
        int first = scratch.get(ValueLayout.JAVA_INT, at);
        int last = scratch.get(ValueLayout.JAVA_INT, at + 24);
        if (first != number || last != number) {
            return new Look(true, latest, false, null);
        }
        int kind = scratch.get(ValueLayout.JAVA_BYTE, at + 4);
        ShmCall call = kind == 0 ? null : new ShmCall(ShmCall.Kind.values()[kind - 1],
                scratch.get(ValueLayout.JAVA_INT, at + 8), scratch.get(ValueLayout.JAVA_LONG, at + 16),
                scratch.get(ValueLayout.JAVA_BYTE, at + 5), scratch.get(ValueLayout.JAVA_BYTE, at + 6));
        return new Look(true, latest, true, call);
    }

    /**
     * Frees the board's memory, which ends its registrations: local, with no barrier (a rank that closes after a
     * failure must not wait for the others); a peer's later look fails and says nothing.
     */
    @Override
    public void close() {
        mp.free(scratch);
        mp.free(area);
    }
}
