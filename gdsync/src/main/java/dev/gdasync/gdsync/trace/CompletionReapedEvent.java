package dev.gdasync.gdsync.trace;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** The CPU reaped a CQE with a poll. */
@Name(CompletionReapedEvent.NAME)
@Label("Completion reaped")
@Category({"gdasync", "gdsync"})
@Description("The CPU reaped a CQE with a poll")
@Enabled(false)
@StackTrace(false)
public final class CompletionReapedEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.CompletionReaped";

    /** The provider: swnic or mlx5. */
    @Label("Provider")
    public String provider;

    /** The number of the queue pair the completion queue belongs to, in its NIC. */
    @Label("Queue pair")
    public int queuePair;

    /** That queue pair's identity across processes (the software NIC's token), or 0. */
    @Label("Queue pair token")
    public long queuePairToken;

    /** "send" or "recv": which of the queue pair's two completion queues. */
    @Label("Queue")
    public String queue;

    /** The CQE's index in its completion queue. */
    @Label("Index")
    public long index;

    /** SEND, RECV, RDMA_WRITE, ...: what completed. */
    @Label("Opcode")
    public String opcode;

    /** SUCCESS or the error status. */
    @Label("Status")
    public String status;

    /** The byte count. */
    @Label("Bytes")
    @DataAmount
    public int bytes;

    /** The work request id. */
    @Label("Work request id")
    public long wrId;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public CompletionReapedEvent() {
    }
}
