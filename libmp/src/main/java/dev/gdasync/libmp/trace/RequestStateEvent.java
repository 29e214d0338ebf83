package dev.gdasync.libmp.trace;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A request of an Mp changed state (docs/requests.md): PREPARED, PENDING_NOWAIT, PENDING, COMPLETE, RELEASED. */
@Name(RequestStateEvent.NAME)
@Label("Request state")
@Category({"gdasync", "libmp"})
@Description("A libmp request changed state")
@Enabled(false)
@StackTrace(false)
public final class RequestStateEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.RequestState";

    /** The request's number (its work request id). */
    @Label("Request")
    public long request;

    /** SEND, RECV, PUT or GET. */
    @Label("Kind")
    public String kind;

    /** The peer rank. */
    @Label("Peer")
    public int peer;

    /** The bytes posted. */
    @Label("Bytes")
    @DataAmount
    public long bytes;

    /** The state before, or null for a new request. */
    @Label("From")
    public String from;

    /** The state after. */
    @Label("To")
    public String to;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public RequestStateEvent() {
    }

    /**
     * Records a change of state if the event is enabled.
     *
     * @param request its number
     * @param kind    its kind
     * @param peer    its peer
     * @param bytes   its bytes
     * @param from    the state before, or null
     * @param to      the state after
     */
    public static void record(long request, Enum<?> kind, int peer, long bytes, Enum<?> from, Enum<?> to) {
        RequestStateEvent e = new RequestStateEvent();
        if (e.shouldCommit()) {
            e.request = request;
            e.kind = kind.name();
            e.peer = peer;
            e.bytes = bytes;
            e.from = from == null ? null : from.name();
            e.to = to.name();
            e.commit();
        }
    }
}
