package dev.gdasync.gdsync.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A host stream ran a host task (a Runnable "kernel": pack, unpack, compute): its span. */
@Name(HostTaskEvent.NAME)
@Label("Host task")
@Category({"gdasync", "gdsync"})
@Description("A host stream ran a host task")
@Enabled(false)
@StackTrace(false)
public final class HostTaskEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.HostTask";

    /** The stream's name. */
    @Label("Stream")
    public String stream;

    /** The task's class. */
    @Label("Task")
    public String task;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public HostTaskEvent() {
    }
}
