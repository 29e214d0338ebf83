package dev.gdasync.gdsync.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A host executor (a host stream, or the CPU running descriptors) waited for a word to satisfy a condition: its span,
 * from the first look to the look that passed. A wait prepared by a NIC names its completion queue.
 */
@Name(StreamWaitEvent.NAME)
@Label("Stream wait")
@Category({"gdasync", "gdsync"})
@Description("A host executor waited on a word (a WAIT32/WAIT64 memop), from the first look to the one that passed")
@Enabled(false)
@StackTrace(false)
public final class StreamWaitEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.StreamWait";

    /** The word's name, such as "validity word of recv CQ of QP 3 slot 5". */
    @Label("Word")
    public String word;

    /** The operand of the condition. */
    @Label("Value")
    public long value;

    /** GEQ, EQ, AND or NOR. */
    @Label("Condition")
    public String condition;

    /** The completion queue the wait was prepared for, such as "recv CQ of QP 3", or null. */
    @Label("Completion queue")
    public String completionQueue;

    /** The identity of that completion queue's queue pair across processes (the software NIC's token), or 0. */
    @Label("Queue pair token")
    public long queuePairToken;

    /** The index of the awaited CQE when the provider numbers them by the awaited value, else -1. */
    @Label("CQE")
    public long cqe;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public StreamWaitEvent() {
    }
}
