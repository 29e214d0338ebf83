package dev.gdasync.gdsync.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A send found no receive posted at the peer (receiver not ready) and will be tried again. */
@Name(RnrRetryEvent.NAME)
@Label("RNR retry")
@Category({"gdasync", "gdsync"})
@Description("A send found no receive posted at the peer and will be retried")
@Enabled(false)
@StackTrace(false)
public final class RnrRetryEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.RnrRetry";

    /** The queue pair's number in its NIC. */
    @Label("Queue pair")
    public int queuePair;

    /** The queue pair's identity across processes. */
    @Label("Queue pair token")
    public long queuePairToken;

    /** The stalled request's index in the send queue. */
    @Label("Sequence")
    public long sequence;

    /** The transport: shm or ucx. */
    @Label("Transport")
    public String transport;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public RnrRetryEvent() {
    }
}
