package dev.gdasync.gdsync.trace;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * The software NIC handed a rung work request to its transport: the span of the execution (over shared memory the
 * whole copy and both CQEs; over UCX the send of the request, whose answer completes it later).
 */
@Name(WorkRequestEvent.NAME)
@Label("Work request")
@Category({"gdasync", "gdsync"})
@Description("The software NIC executed a work request over its transport")
@Enabled(false)
@StackTrace(false)
public final class WorkRequestEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.WorkRequest";

    /** The queue pair's number in its NIC. */
    @Label("Queue pair")
    public int queuePair;

    /** The queue pair's identity across processes. */
    @Label("Queue pair token")
    public long queuePairToken;

    /** The request's index in the send queue. */
    @Label("Sequence")
    public long sequence;

    /** SEND, RDMA_WRITE, ...: the verbs opcode. */
    @Label("Opcode")
    public String opcode;

    /** The request's byte count. */
    @Label("Bytes")
    @DataAmount
    public int bytes;

    /** The transport: shm or ucx. */
    @Label("Transport")
    public String transport;

    /** DONE, STALLED (the peer had no receive posted: retried later) or IN_FLIGHT (over UCX: completed later). */
    @Label("Outcome")
    public String outcome;

    /** The peer queue pair's identity across processes. */
    @Label("Peer queue pair token")
    public long peerToken;

    /** The index of the peer's receive the request consumed (its receive CQE's index), or -1. */
    @Label("Peer receive")
    public long peerReceive;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public WorkRequestEvent() {
    }
}
