package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.shm.ShmCall;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * One collective's schedule on one rank: the messages it sends and receives, each send optionally gated on the
 * completion of one receive (a tree's forward). Receives are known up front so that a peer's early message can be
 * matched to them the moment it arrives. Owned by the engine's thread.
 */
final class CollOp {
    /** A message to one peer. */
    static final class Send {
        final int peer;
        final int part;
        final MemorySegment buf;
        final MpRegistration reg;
        /** The receive that must finish first, or -1. */
        final int afterRecv;
        boolean queued;
        boolean done;

        Send(int peer, int part, MemorySegment buf, MpRegistration reg, int afterRecv) {
            this.peer = peer;
            this.part = part;
            this.buf = buf;
            this.reg = reg;
            this.afterRecv = afterRecv;
        }
    }

    /** A message from one peer. */
    static final class Recv {
        final int peer;
        final int part;
        final MemorySegment buf;
        final MpRegistration reg;
        boolean done;
        /** Its header arrived (or was claimed from the unexpected ones): the engine no longer counts it as needed. */
        boolean matched;

        Recv(int peer, int part, MemorySegment buf, MpRegistration reg) {
            this.peer = peer;
            this.part = part;
            this.buf = buf;
            this.reg = reg;
        }
    }

    final String name;
    final int context;
    final int seq;
    /** The number of the user's call this op is (a step of) on its communicator, or -1 (the offload engine). */
    final int number;
    /** The user's call, which every message of it carries; null for set-up, exchanges, groups and the offload engine. */
    final ShmCall call;
    /** The communicator, to name ranks as the user numbers them; null for the offload engine's ops. */
    private final Communicator comm;
    final List<Send> sends = new ArrayList<>();
    final List<Recv> recvs = new ArrayList<>();
    private final Map<Long, Recv> recvByPeerPart = new HashMap<>();
    private int sendsLeft;
    private int recvsLeft;
    private String failure;
    private Throwable cause;
    private boolean released;
    private boolean abandoned;

    CollOp(String name, int context, int seq) {
        this(name, context, seq, -1, null, null);
    }

    /**
     * @param number the user's call's number on the communicator
     * @param call   the user's call, or null where the ranks' calls are not compared
     * @param comm   the communicator
     */
    CollOp(String name, int context, int seq, int number, ShmCall call, Communicator comm) {
        this.name = name;
        this.context = context;
        this.seq = seq;
        this.number = number;
        this.call = call;
        this.comm = comm;
    }

    /** Adds a send (world rank of the peer). */
    void send(int peer, int part, MemorySegment buf, MpRegistration reg, int afterRecv) {
        sends.add(new Send(peer, part, buf, reg, afterRecv));
        sendsLeft++;
    }

    /** Adds a receive (world rank of the peer) and returns its index. */
    int recv(int peer, int part, MemorySegment buf, MpRegistration reg) {
        Recv r = new Recv(peer, part, buf, reg);
        recvs.add(r);
        recvByPeerPart.put(key(peer, part), r);
        recvsLeft++;
        return recvs.size() - 1;
    }

    Recv recvFrom(int peer, int part) {
        return recvByPeerPart.get(key(peer, part));
    }

    void recvDone(Recv r) {
        if (!r.done && !abandoned) {
            r.done = true;
            recvsLeft--;
        }
    }

    void sendDone(Send s) {
        if (!s.done && !abandoned) {
            s.done = true;
            sendsLeft--;
        }
    }

    /**
     * @return whether a peer's message of call {@code theirNumber} (its collective code, 0 for none, then root, size,
     *         type and operator) is of this op's call
     */
    boolean agrees(int theirNumber, int kind, int root, long bytes, int type, int op) {
        if (call == null) {
            return kind == 0 && theirNumber == number;
        }
        return theirNumber == number && kind == call.kind().ordinal() + 1 && root == call.root()
                && bytes == call.bytes() && type == call.type() && op == call.op();
    }

    /** @return the message of a disagreement with {@code worldPeer}, which called {@code theirs} as its #number */
    String disagreement(int worldPeer, int theirNumber, ShmCall theirs) {
        return this + ": " + who(worldPeer) + " called " + (theirs == null ? "an exchange or a group"
                : CallNames.INSTANCE.describe(theirs)) + " as its #" + theirNumber + ": the ranks disagree";
    }

    /** @return the communicator whose call this is, or null (set-up, the offload engine) */
    Communicator comm() {
        return comm;
    }

    /** @return a peer (a world rank) as messages name it: its rank here, and its world rank where that differs */
    String who(int worldPeer) {
        int r = comm == null ? worldPeer : comm.rankOf(worldPeer);
        return "rank " + r + (r != worldPeer ? " (world rank " + worldPeer + ")" : "");
    }

    /**
     * @param direct whether a look at a peer is direct loads, which no pending send holds back
     * @return the world ranks this op still waits for whose call board can be read now: a peer it awaits a message
     *         from and has no send left to (a one-sided read of it does not queue behind a send waiting for the peer's
     *         receive), and any peer it awaits, send or receive, whose board is read directly
     */
    List<Integer> readablePeers(IntPredicate direct) {
        List<Integer> peers = new ArrayList<>();
        for (Recv r : recvs) {
            if (!r.done && !peers.contains(r.peer) && (direct.test(r.peer)
                    || sends.stream().noneMatch(s -> s.peer == r.peer && !s.done))) {
                peers.add(r.peer);
            }
        }
        for (Send s : sends) {
            if (!s.done && !peers.contains(s.peer) && direct.test(s.peer)) {
                peers.add(s.peer);
            }
        }
        return peers;
    }

    /** @return the world ranks this op sent to, each once (a finished op's receivers, to compare their calls) */
    List<Integer> sentTo() {
        List<Integer> peers = new ArrayList<>();
        for (Send s : sends) {
            if (!peers.contains(s.peer)) {
                peers.add(s.peer);
            }
        }
        return peers;
    }

    /** Records the first failure; the op still drains its transfers so the peers' message streams stay in step. */
    void fail(String why, Throwable t) {
        if (failure == null) {
            failure = why;
            cause = t;
        }
    }

    /** Gives up on every transfer (the link failed: nothing more will arrive or leave). */
    void abandon(String why, Throwable t) {
        fail(why, t);
        sendsLeft = 0;
        recvsLeft = 0;
        abandoned = true;
    }

    /** @return whether it was given up on: its late transfers change nothing and start nothing */
    boolean abandoned() {
        return abandoned;
    }

    /** The proxy finished this rank's part of the collective (offload engine), with or without an error. */
    void finishedByProxy(String why) {
        if (why != null) {
            fail(why, null);
        }
        sendsLeft = 0;
        recvsLeft = 0;
    }

    boolean isFinished() {
        return sendsLeft == 0 && recvsLeft == 0;
    }

    String failure() {
        return failure;
    }

    Throwable cause() {
        return cause;
    }

    boolean released() {
        return released;
    }

    void release() {
        released = true;
    }

    private static long key(int peer, int part) {
        return ((long) peer << 32) | (part & 0xFFFF_FFFFL);
    }

    @Override
    public String toString() {
        if (comm != null) {
            return (call == null ? name : CallNames.INSTANCE.describe(call)) + " (#" + number + " on communicator "
                    + context + ", rank " + comm.rank() + " of " + comm.size() + ")";
        }
        return name + " #" + seq + " on communicator " + context;
    }
}
