package dev.gdasync.ki.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A host KI block waited on a word of a KI table (a CQE's word, a flag): its span and how it ended. */
@Name(KiBlockWaitEvent.NAME)
@Label("KI block wait")
@Category({"gdasync", "ki"})
@Description("A host KI block waited on a table word")
@Enabled(false)
@StackTrace(false)
public final class KiBlockWaitEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.KiBlockWait";

    /** The word's address. */
    @Label("Address")
    public long address;

    /** The operand of the condition. */
    @Label("Value")
    public int value;

    /** GEQ, EQ, AND or NOR. */
    @Label("Condition")
    public String condition;

    /** OK or TIMEOUT. */
    @Label("Result")
    public String result;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public KiBlockWaitEvent() {
    }
}
