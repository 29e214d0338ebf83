package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.MpRegistration;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
    final List<Send> sends = new ArrayList<>();
    final List<Recv> recvs = new ArrayList<>();
    private final Map<Long, Recv> recvByPeerPart = new HashMap<>();
    private int sendsLeft;
    private int recvsLeft;
    private String failure;
    private Throwable cause;
    private boolean released;

    CollOp(String name, int context, int seq) {
        this.name = name;
        this.context = context;
        this.seq = seq;
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
        if (!r.done) {
            r.done = true;
            recvsLeft--;
        }
    }

    void sendDone() {
        sendsLeft--;
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
        return name + " #" + seq + " on communicator " + context;
    }
}
