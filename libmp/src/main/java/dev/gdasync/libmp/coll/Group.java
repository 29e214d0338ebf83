package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.MpRegistration;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * A rank's own pattern of sends and receives on a {@link Communicator}, posted as one collective (BluesMPI's
 * group primitives, NCCL's groups): {@link Communicator#groupStart}, then {@link #recv} and {@link #send} in order,
 * a send optionally after an earlier receive of the group (to forward what arrived), then {@link #groupEnd} and
 * {@link #groupCall}. On the offload engine the whole group is one task the proxy runs, dependencies included.
 *
 * <p>The k-th send from rank p to rank q matches the k-th receive q posts from p in its group; sizes must agree.
 * Every member of the communicator calls {@link #groupCall} in the same order as the communicator's collectives.
 * Driven by the thread that drives the communicator.
 */
public final class Group {
    /** One send or receive, with the receive a send waits for (an index among the steps) or -1. */
    record Step(boolean send, MemorySegment buf, MpRegistration reg, int peer, int after) {
    }

    private final Communicator comm;
    private final List<Step> steps = new ArrayList<>();
    private boolean ended;
    private boolean called;

    Group(Communicator comm) {
        this.comm = comm;
    }

    /**
     * Adds a receive.
     *
     * @param buf  where the data lands
     * @param reg  a registration containing it
     * @param peer the sending rank of the communicator
     * @return the receive's handle, for {@link #send(MemorySegment, MpRegistration, int, int)}
     */
    public int recv(MemorySegment buf, MpRegistration reg, int peer) {
        requireOpen();
        comm.checkGroupStep("peer", buf, reg, peer);
        steps.add(new Step(false, buf, reg, peer, -1));
        return steps.size() - 1;
    }

    /**
     * Adds a send that may start at once.
     *
     * @param buf  the data
     * @param reg  a registration containing it
     * @param peer the receiving rank of the communicator
     */
    public void send(MemorySegment buf, MpRegistration reg, int peer) {
        requireOpen();
        comm.checkGroupStep("peer", buf, reg, peer);
        steps.add(new Step(true, buf, reg, peer, -1));
    }

    /**
     * Adds a send that starts once an earlier receive of this group finished (a forward).
     *
     * @param buf       the data
     * @param reg       a registration containing it
     * @param peer      the receiving rank of the communicator
     * @param afterRecv the handle {@link #recv} returned
     */
    public void send(MemorySegment buf, MpRegistration reg, int peer, int afterRecv) {
        requireOpen();
        comm.checkGroupStep("peer", buf, reg, peer);
        if (afterRecv < 0 || afterRecv >= steps.size() || steps.get(afterRecv).send()) {
            throw new IllegalArgumentException("afterRecv " + afterRecv + " is not a receive of this group (it has "
                    + steps.size() + " steps)");
        }
        steps.add(new Step(true, buf, reg, peer, afterRecv));
    }

    /** Ends the group: no step may be added afterwards. */
    public void groupEnd() {
        requireOpen();
        ended = true;
    }

    /**
     * Posts the ended group as one collective of the communicator.
     *
     * @return the request, completed by the communicator's test and wait
     * @throws IllegalStateException if the group was not ended, or was called already
     */
    public CollRequest groupCall() {
        if (!ended) {
            throw new IllegalStateException("call groupEnd() before groupCall()");
        }
        if (called) {
            throw new IllegalStateException("this group was already called");
        }
        CollRequest r = comm.callGroup(steps);
        called = true;
        return r;
    }

    /** @return the steps added so far */
    public int size() {
        return steps.size();
    }

    private void requireOpen() {
        if (ended) {
            throw new IllegalStateException("the group was ended: start a new one with groupStart()");
        }
    }
}
