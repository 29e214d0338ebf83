package dev.gdasync.gdsync.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A host executor ran one batch of memops (a stream's item, or a CPU descriptor post): its span. */
@Name(MemopBatchEvent.NAME)
@Label("Memop batch")
@Category({"gdasync", "gdsync"})
@Description("A host executor ran a batch of memops: writes, doorbells and waits, in order")
@Enabled(false)
@StackTrace(false)
public final class MemopBatchEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.MemopBatch";

    /** The memops in the batch. */
    @Label("Memops")
    public int memops;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public MemopBatchEvent() {
    }
}
