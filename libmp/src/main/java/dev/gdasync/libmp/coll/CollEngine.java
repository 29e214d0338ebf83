package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.coll.shm.ShmCall;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The host progress engine of one {@link Mp}: every collective message travels as a header (context, step number,
 * part, length, and the user's call: its number, collective, root, size, type, operator) from the engine's control
 * memory followed, when the length is not zero, by the payload
 * straight from the caller's registered buffer. Mp matches per peer in FIFO order and has no tags, so the header
 * is what keeps two communicators' (or two collectives') traffic apart: a receiver keeps at most one header
 * receive posted per peer, reads it, then posts the payload's receive into the buffer the header names, or into
 * a staging buffer when this rank has not posted that collective yet (the unexpected queue).
 *
 * <p>A receiver compares the call in every header with its own: a message of another call (another collective,
 * root, size, type or operator) fails the receiving call at once, naming both, and its payload is drained so the
 * stream stays in step. A call whose ranks disagree in a way that leaves each waiting for the other is found by the
 * communicator's wait, which reads the peer's {@link CallBoard} entry and then {@link #abandon}s the op.
 *
 * <p>A header receive is posted for a peer only while an active collective still expects a message from it, so
 * when no collective is active the engine holds no receive and the Mp's point-to-point traffic is the caller's.
 * Runs on the thread that drives the Mp; nothing here is thread-safe.
 */
final class CollEngine implements Engine {
    static final int HEADER_BYTES = 40;
    private static final int SEND_SLOTS = 256;
    /** Requests left in Mp's pool for the caller's own traffic. */
    private static final int REQUEST_RESERVE = 4;

    private final Mp mp;
    private final int me;
    private final MemorySegment ctrl;
    private final MpRegistration ctrlReg;
    private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>();
    private final PeerIn[] in;
    private final Map<Long, CollOp> active = new HashMap<>();
    private final ArrayDeque<Outgoing> sendQueue = new ArrayDeque<>();
    private final List<Outgoing> inFlight = new ArrayList<>();
    private final Map<Staged.Key, Staged> unexpected = new HashMap<>();
    /** Ops given up on before every message arrived: a late message of theirs is drained and dropped. */
    private final Set<Long> abandoned = new HashSet<>();
    /** The board where this rank posts its calls for peers to read; null until {@link #openBoard}. */
    private CallBoard board;
    private String broken;
    private Throwable brokenCause;

    /** What arrives from one peer: the posted header receive, then payload receives in posting order. */
    private static final class PeerIn {
        MpRequest header;
        final ArrayDeque<Payload> payloads = new ArrayDeque<>();
        /** Messages active collectives expect from this peer whose header has not been seen. */
        int need;
    }

    /** A posted payload receive and where its bytes belong. */
    private record Payload(MpRequest request, CollOp op, CollOp.Recv recv, Staged staged) {
    }

    /** A message of a collective this rank has not posted yet, held in engine memory until it is. */
    private static final class Staged {
        record Key(int peer, int context, int seq, int part) {
        }

        final long bytes;
        /** The sender's call (number and signature), compared when a collective claims the message. */
        int number;
        int kind;
        ShmCall call;
        /** Received only to keep the stream in step: dropped on arrival. */
        boolean drop;
        MemorySegment memory;
        MpRegistration reg;
        boolean arrived;
        CollOp claimOp;
        CollOp.Recv claim;

        Staged(long bytes) {
            this.bytes = bytes;
        }
    }

    private static final class Outgoing {
        final CollOp op;
        final CollOp.Send send;
        int slot = -1;
        MpRequest header;
        MpRequest payload;

        Outgoing(CollOp op, CollOp.Send send) {
            this.op = op;
            this.send = send;
        }
    }

    CollEngine(Mp mp) {
        this.mp = mp;
        this.me = mp.rank();
        int n = mp.size();
        this.ctrl = mp.allocate((long) (n + SEND_SLOTS) * HEADER_BYTES);
        this.ctrlReg = mp.register(ctrl);
        this.in = new PeerIn[n];
        for (int p = 0; p < n; p++) {
            in[p] = new PeerIn();
        }
        for (int s = 0; s < SEND_SLOTS; s++) {
            freeSlots.add(s);
        }
    }

    @Override
    public Mp mp() {
        return mp;
    }

    @Override
    public boolean offloaded() {
        return false;
    }

    @Override
    public int activeCount() {
        return active.size();
    }

    /** @throws CollectiveException if a transfer failed earlier: the peers' message streams are out of step */
    @Override
    public void requireHealthy() {
        if (broken != null) {
            throw new CollectiveException("collectives on rank " + me + " are unusable: " + broken, brokenCause);
        }
    }

    /** Starts a collective whose schedule is complete: local copies were done by the caller. */
    @Override
    public void start(CollOp op) {
        requireHealthy();
        CollOp previous = active.putIfAbsent(key(op.context, op.seq), op);
        if (previous != null) {
            throw new IllegalStateException(op + " is already active");
        }
        for (CollOp.Recv r : op.recvs) {
            Staged s = unexpected.remove(new Staged.Key(r.peer, op.context, op.seq, r.part));
            if (s == null) {
                in[r.peer].need++;
            } else {
                claim(op, r, s);
            }
        }
        for (CollOp.Send s : op.sends) {
            if (s.afterRecv < 0) {
                s.queued = true;
                sendQueue.add(new Outgoing(op, s));
            }
        }
        retire(op);
        progress();
    }

    /** Makes every active collective progress without waiting. */
    @Override
    public void progress() {
        if (broken != null) {
            return;
        }
        try {
            postSends();
            reapSends();
            for (int p = 0; p < in.length; p++) {
                if (p != me) {
                    receive(p);
                }
            }
            postSends();
        } catch (RuntimeException e) {
            breakDown(e);
        }
    }

    private void postSends() {
        while (!sendQueue.isEmpty() && !freeSlots.isEmpty() && mp.requestsAvailable() >= 2 + REQUEST_RESERVE) {
            Outgoing o = sendQueue.poll();
            o.slot = freeSlots.poll();
            MemorySegment h = header(o.slot);
            h.set(ValueLayout.JAVA_INT, 0, o.op.context);
            h.set(ValueLayout.JAVA_INT, 4, o.op.seq);
            h.set(ValueLayout.JAVA_INT, 8, o.send.part);
            h.set(ValueLayout.JAVA_INT, 12, o.op.number);
            h.set(ValueLayout.JAVA_LONG, 16, o.send.buf.byteSize());
            ShmCall c = o.op.call;
            h.set(ValueLayout.JAVA_LONG, 24, c == null ? 0 : c.bytes());
            h.set(ValueLayout.JAVA_INT, 32, c == null ? -1 : c.root());
            h.set(ValueLayout.JAVA_BYTE, 36, (byte) (c == null ? 0 : c.kind().ordinal() + 1));
            h.set(ValueLayout.JAVA_BYTE, 37, (byte) (c == null ? 0 : c.type()));
            h.set(ValueLayout.JAVA_BYTE, 38, (byte) (c == null ? 0 : c.op()));
            inFlight.add(o);
            o.header = mp.isend(h, o.send.peer, ctrlReg);
            if (o.send.buf.byteSize() > 0) {
                o.payload = mp.isend(o.send.buf, o.send.peer, o.send.reg);
            }
        }
    }

    private void reapSends() {
        for (Iterator<Outgoing> it = inFlight.iterator(); it.hasNext(); ) {
            Outgoing o = it.next();
            if (o.header != null && mp.test(o.header)) {
                o.header = null;
            }
            if (o.payload != null && mp.test(o.payload)) {
                o.payload = null;
            }
            if (o.header == null && o.payload == null) {
                it.remove();
                freeSlots.add(o.slot);
                o.op.sendDone(o.send);
                retire(o.op);
            }
        }
    }

    private void receive(int peer) {
        PeerIn p = in[peer];
        // Payloads were posted before the header receive behind them, so they complete first.
        while (!p.payloads.isEmpty() && mp.test(p.payloads.peek().request())) {
            landed(p.payloads.poll());
        }
        if (p.header != null && p.payloads.isEmpty() && mp.test(p.header)) {
            p.header = null;
            route(peer, header(SEND_SLOTS + peer));
        }
        if (p.header == null && p.need > 0 && mp.requestsAvailable() >= 2 + REQUEST_RESERVE) {
            p.header = mp.irecv(header(SEND_SLOTS + peer), peer, ctrlReg);
        }
    }

    /** A header arrived: post the payload's receive where it belongs. */
    private void route(int peer, MemorySegment h) {
        int context = h.get(ValueLayout.JAVA_INT, 0);
        int seq = h.get(ValueLayout.JAVA_INT, 4);
        int part = h.get(ValueLayout.JAVA_INT, 8);
        int number = h.get(ValueLayout.JAVA_INT, 12);
        long bytes = h.get(ValueLayout.JAVA_LONG, 16);
        int kind = h.get(ValueLayout.JAVA_BYTE, 36);
        CollOp op = active.get(key(context, seq));
        CollOp.Recv r = op == null ? null : op.recvFrom(peer, part);
        if (op != null && !op.agrees(number, kind, h.get(ValueLayout.JAVA_INT, 32), h.get(ValueLayout.JAVA_LONG, 24),
                h.get(ValueLayout.JAVA_BYTE, 37), h.get(ValueLayout.JAVA_BYTE, 38))) {
            op.fail(op.disagreement(peer, number, callIn(h)), null);
            if (r != null) {
                r.matched = true;
                in[peer].need--;
                Staged refused = new Staged(bytes);
                refused.drop = true;
                stage(peer, refused, op, r);
            } else {
                drop(peer, bytes);
            }
            return;
        }
        if (op == null && abandoned.contains(key(context, seq))) {
            drop(peer, bytes);
            return;
        }
        if (op != null && r == null) {
            throw new IllegalStateException("rank " + peer + " sent part " + part + " of " + op
                    + " which rank " + me + " does not expect: the ranks disagree on the collective");
        }
        if (r == null) {
            Staged s = new Staged(bytes);
            s.number = number;
            s.kind = kind;
            s.call = callIn(h);
            unexpected.put(new Staged.Key(peer, context, seq, part), s);
            stage(peer, s, null, null);
            return;
        }
        in[peer].need--;
        r.matched = true;
        if (bytes != r.buf.byteSize()) {
            op.fail(mismatch(op, peer, bytes, r), null);
            stage(peer, new Staged(bytes), op, r);
        } else if (bytes == 0) {
            op.recvDone(r);
            released(op, r);
        } else {
            in[peer].payloads.add(new Payload(mp.irecv(r.buf, peer, r.reg), op, r, null));
        }
    }

    /** @return the call a header carries, or null for a message of a call without one */
    private static ShmCall callIn(MemorySegment h) {
        int kind = h.get(ValueLayout.JAVA_BYTE, 36);
        ShmCall.Kind[] kinds = ShmCall.Kind.values();
        if (kind <= 0 || kind > kinds.length) {
            return null;
        }
        return new ShmCall(kinds[kind - 1], h.get(ValueLayout.JAVA_INT, 32), h.get(ValueLayout.JAVA_LONG, 24),
                h.get(ValueLayout.JAVA_BYTE, 37), h.get(ValueLayout.JAVA_BYTE, 38));
    }

    /** Receives a payload nobody wants (a refused or abandoned call's), so the peer's stream stays in step. */
    private void drop(int peer, long bytes) {
        Staged s = new Staged(bytes);
        s.drop = true;
        stage(peer, s, null, null);
    }

    private String mismatch(CollOp op, int peer, long bytes, CollOp.Recv r) {
        return op + ": rank " + peer + " sent " + bytes + " bytes but rank " + me + " expects "
                + r.buf.byteSize() + " from it; the block was not written";
    }

    /** Receives a payload into engine memory (unexpected, or drained after a size mismatch). */
    private void stage(int peer, Staged s, CollOp drainOp, CollOp.Recv drainRecv) {
        if (drainOp != null) {
            s.claimOp = drainOp;
            s.claim = drainRecv;
        }
        if (s.bytes == 0) {
            s.arrived = true;
            if (drainOp != null) {
                finishClaim(s);
            }
            return;
        }
        s.memory = mp.allocate(s.bytes);
        s.reg = mp.register(s.memory);
        in[peer].payloads.add(new Payload(mp.irecv(s.memory, peer, s.reg), null, null, s));
    }

    private void landed(Payload p) {
        if (p.staged() == null) {
            p.op().recvDone(p.recv());
            released(p.op(), p.recv());
            return;
        }
        p.staged().arrived = true;
        if (p.staged().claim != null) {
            finishClaim(p.staged());
        } else if (p.staged().drop) {
            freeStaged(p.staged());
        }
    }

    /** A newly started collective finds its message among the unexpected ones. */
    private void claim(CollOp op, CollOp.Recv r, Staged s) {
        s.claimOp = op;
        s.claim = r;
        r.matched = true;
        if (!op.agrees(s.number, s.kind, s.call == null ? -1 : s.call.root(), s.call == null ? 0 : s.call.bytes(),
                s.call == null ? 0 : s.call.type(), s.call == null ? 0 : s.call.op())) {
            op.fail(op.disagreement(r.peer, s.number, s.call), null);
            s.drop = true;
        } else if (s.bytes != r.buf.byteSize()) {
            op.fail(mismatch(op, r.peer, s.bytes, r), null);
        }
        if (s.arrived) {
            finishClaim(s);
        }
    }

    private void finishClaim(Staged s) {
        CollOp op = s.claimOp;
        CollOp.Recv r = s.claim;
        if (!s.drop && s.bytes == r.buf.byteSize() && s.bytes > 0) {
            MemorySegment.copy(s.memory, 0, r.buf, 0, s.bytes);
        }
        freeStaged(s);
        op.recvDone(r);
        released(op, r);
    }

    private void freeStaged(Staged s) {
        if (s.memory != null) {
            mp.deregister(s.reg);
            mp.free(s.memory);
            s.memory = null;
        }
    }

    /** A receive finished: queue the sends waiting for it, retire the op if it is done. */
    private void released(CollOp op, CollOp.Recv r) {
        if (op.abandoned()) {
            return;
        }
        int index = op.recvs.indexOf(r);
        for (CollOp.Send s : op.sends) {
            if (!s.queued && s.afterRecv == index) {
                s.queued = true;
                sendQueue.add(new Outgoing(op, s));
            }
        }
        retire(op);
    }

    private void retire(CollOp op) {
        if (op.isFinished()) {
            active.remove(key(op.context, op.seq));
        }
    }

    /**
     * Gives up on an active op whose peers will never complete it (they called another collective): its queued sends
     * are dropped, its receives no longer count as needed, and a late message of it is drained and dropped.
     */
    @Override
    public void abandon(CollOp op, String why) {
        if (active.remove(key(op.context, op.seq)) == null) {
            return;
        }
        abandoned.add(key(op.context, op.seq));
        for (CollOp.Recv r : op.recvs) {
            if (!r.done && !r.matched) {
                in[r.peer].need--;
            }
        }
        sendQueue.removeIf(o -> o.op == op);
        op.abandon(why, null);
    }

    /** Opens this rank's {@link CallBoard}; collective over the Mp's ranks. */
    @Override
    public void openBoard() {
        if (board == null) {
            board = new CallBoard(mp);
        }
    }

    /** @return the board of the ranks' calls, or null when the message path is not in use */
    @Override
    public CallBoard board() {
        return board;
    }

    /** A transfer failed: the message streams are out of step, so every active collective fails now. */
    private void breakDown(RuntimeException e) {
        broken = e.getMessage();
        brokenCause = e;
        for (CollOp op : active.values()) {
            op.abandon(op + " failed on rank " + me + ": " + e.getMessage(), e);
        }
        active.clear();
    }

    /** Frees the engine's memory; outstanding collectives are the caller's mistake and are abandoned. */
    @Override
    public void close() {
        for (CollOp op : active.values()) {
            op.abandon(op + " was abandoned: its Collectives closed", null);
        }
        active.clear();
        if (board != null) {
            board.close();
            board = null;
        }
        if (ctrlReg.isValid()) {
            mp.deregister(ctrlReg);
            mp.free(ctrl);
        }
    }

    private MemorySegment header(int slot) {
        return ctrl.asSlice((long) slot * HEADER_BYTES, HEADER_BYTES);
    }

    private static long key(int context, int seq) {
        return ((long) context << 32) | (seq & 0xFFFF_FFFFL);
    }
}
