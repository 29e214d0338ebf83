package dev.gdasync.gdsync.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A NIC noticed rung work and ran it: the span of the drain, who ran it (the ringing thread inline, or the NIC's
 * agent) and which requests it took.
 */
@Name(DoorbellNoticedEvent.NAME)
@Label("Doorbell noticed")
@Category({"gdasync", "gdsync"})
@Description("A NIC noticed a rung doorbell and ran the work: inline on the thread that rang, or on its agent")
@Enabled(false)
@StackTrace(false)
public final class DoorbellNoticedEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.DoorbellNoticed";

    /** The provider: swnic or mlx5. */
    @Label("Provider")
    public String provider;

    /** The queue pair's number in its NIC. */
    @Label("Queue pair")
    public int queuePair;

    /** The queue pair's identity across processes (the software NIC's token), or 0. */
    @Label("Queue pair token")
    public long queuePairToken;

    /** The first request taken (its index in the send queue). */
    @Label("First request")
    public long firstRequest;

    /** The requests taken. */
    @Label("Requests")
    public int requests;

    /** "inline" (the thread that rang, or a host thread that played a kernel) or "agent" (the NIC's agent). */
    @Label("Noticed by")
    public String noticedBy;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public DoorbellNoticedEvent() {
    }
}
