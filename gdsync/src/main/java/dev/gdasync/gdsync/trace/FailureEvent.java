package dev.gdasync.gdsync.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** Something failed: a queue pair entered the error state, a stream failed, a wait timed out. */
@Name(FailureEvent.NAME)
@Label("Failure")
@Category({"gdasync", "gdsync"})
@Description("A queue pair entered the error state, or a stream failed")
@Enabled(false)
@StackTrace(false)
public final class FailureEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.Failure";

    /** What failed, such as "queue pair 3 of swnic1@1234" or "stream 'pingpong-sa-rank0'". */
    @Label("What")
    public String what;

    /** The completion status it carries (a queue pair's), or null. */
    @Label("Status")
    public String status;

    /** Why: the error detail's text or the exception's message. */
    @Label("Reason")
    public String reason;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public FailureEvent() {
    }

    /**
     * Records a failure if the event is enabled.
     *
     * @param what   what failed
     * @param status its completion status, or null
     * @param reason why
     */
    public static void record(String what, String status, String reason) {
        FailureEvent e = new FailureEvent();
        if (e.shouldCommit()) {
            e.what = what;
            e.status = status;
            e.reason = reason;
            e.commit();
        }
    }
}
