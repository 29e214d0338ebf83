package dev.gdasync.libmp.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A job failure reached this rank: a rank failed or aborted, and this Mp fails its peers' work (docs/failures.md). */
@Name(MpFailureEvent.NAME)
@Label("Job failure")
@Category({"gdasync", "libmp"})
@Description("A job failure reached this rank")
@Enabled(false)
@StackTrace(false)
public final class MpFailureEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.MpFailure";

    /** This rank. */
    @Label("Rank")
    public int rank;

    /** Why: the failure's message. */
    @Label("Reason")
    public String reason;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public MpFailureEvent() {
    }

    /**
     * Records a failure if the event is enabled.
     *
     * @param rank   this rank
     * @param reason why
     */
    public static void record(int rank, String reason) {
        MpFailureEvent e = new MpFailureEvent();
        if (e.shouldCommit()) {
            e.rank = rank;
            e.reason = reason;
            e.commit();
        }
    }
}
