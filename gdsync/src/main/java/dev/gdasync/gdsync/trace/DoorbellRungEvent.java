package dev.gdasync.gdsync.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A thread rang a queue pair's doorbell by a call (a CPU post, a host executor's doorbell memop): the moment, and the
 * producer index it announced. Rings by plain stores (a GPU, a kernel thread) are seen only when noticed
 * ({@link DoorbellNoticedEvent}).
 */
@Name(DoorbellRungEvent.NAME)
@Label("Doorbell rung")
@Category({"gdasync", "gdsync"})
@Description("A thread rang a queue pair's doorbell by a call")
@Enabled(false)
@StackTrace(false)
public final class DoorbellRungEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.DoorbellRung";

    /** The provider: swnic or mlx5. */
    @Label("Provider")
    public String provider;

    /** The queue pair's number in its NIC. */
    @Label("Queue pair")
    public int queuePair;

    /** The queue pair's identity across processes (the software NIC's token), or 0. */
    @Label("Queue pair token")
    public long queuePairToken;

    /** The producer index the doorbell announced: the requests rung so far (the software NIC), or the send counter in basic blocks (mlx5). */
    @Label("Producer index")
    public long producerIndex;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public DoorbellRungEvent() {
    }
}
