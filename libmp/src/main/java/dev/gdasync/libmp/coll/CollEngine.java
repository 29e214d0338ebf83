package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The host progress engine of one {@link Mp}: every collective message travels as a header (context, collective
 * number, part, length) from the engine's control memory followed, when the length is not zero, by the payload
 * straight from the caller's registered buffer. Mp matches per peer in FIFO order and has no tags, so the header
 * is what keeps two communicators' (or two collectives') traffic apart: a receiver keeps at most one header
 * receive posted per peer, reads it, then posts the payload's receive into the buffer the header names, or into
 * a staging buffer when this rank has not posted that collective yet (the unexpected queue).
 *
 * <p>A header receive is posted for a peer only while an active collective still expects a message from it, so
 * when no collective is active the engine holds no receive and the Mp's point-to-point traffic is the caller's.
 * Runs on the thread that drives the Mp; nothing here is thread-safe.
 */
final class CollEngine implements Engine {
    static final int HEADER_BYTES = 24;
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
            h.set(ValueLayout.JAVA_INT, 12, 0);
            h.set(ValueLayout.JAVA_LONG, 16, o.send.buf.byteSize());
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
                o.op.sendDone();
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
            MemorySegment h = header(SEND_SLOTS + peer);
            route(peer, h.get(ValueLayout.JAVA_INT, 0), h.get(ValueLayout.JAVA_INT, 4), h.get(ValueLayout.JAVA_INT, 8),
                    h.get(ValueLayout.JAVA_LONG, 16));
        }
        if (p.header == null && p.need > 0 && mp.requestsAvailable() >= 2 + REQUEST_RESERVE) {
            p.header = mp.irecv(header(SEND_SLOTS + peer), peer, ctrlReg);
        }
    }

    /** A header arrived: post the payload's receive where it belongs. */
    private void route(int peer, int context, int seq, int part, long bytes) {
        CollOp op = active.get(key(context, seq));
        CollOp.Recv r = op == null ? null : op.recvFrom(peer, part);
        if (op != null && r == null) {
            throw new IllegalStateException("rank " + peer + " sent part " + part + " of " + op
                    + " which rank " + me + " does not expect: the ranks disagree on the collective");
        }
        if (r == null) {
            Staged s = new Staged(bytes);
            unexpected.put(new Staged.Key(peer, context, seq, part), s);
            stage(peer, s, null, null);
            return;
        }
        in[peer].need--;
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
        }
    }

    /** A newly started collective finds its message among the unexpected ones. */
    private void claim(CollOp op, CollOp.Recv r, Staged s) {
        s.claimOp = op;
        s.claim = r;
        if (s.bytes != r.buf.byteSize()) {
            op.fail(mismatch(op, r.peer, s.bytes, r), null);
        }
        if (s.arrived) {
            finishClaim(s);
        }
    }

    private void finishClaim(Staged s) {
        CollOp op = s.claimOp;
        CollOp.Recv r = s.claim;
        if (s.bytes == r.buf.byteSize() && s.bytes > 0) {
            MemorySegment.copy(s.memory, 0, r.buf, 0, s.bytes);
        }
        if (s.memory != null) {
            mp.deregister(s.reg);
            mp.free(s.memory);
            s.memory = null;
        }
        op.recvDone(r);
        released(op, r);
    }

    /** A receive finished: queue the sends waiting for it, retire the op if it is done. */
    private void released(CollOp op, CollOp.Recv r) {
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
