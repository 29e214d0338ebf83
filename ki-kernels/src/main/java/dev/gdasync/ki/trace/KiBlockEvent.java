package dev.gdasync.ki.trace;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A block of a kernel ran on the host KI executor: its span. */
@Name(KiBlockEvent.NAME)
@Label("KI block")
@Category({"gdasync", "ki"})
@Description("A block of a kernel ran on the host KI executor")
@Enabled(false)
@StackTrace(false)
public final class KiBlockEvent extends Event {
    /** The event type's name. */
    public static final String NAME = "dev.gdasync.KiBlock";

    /** The kernel's name. */
    @Label("Kernel")
    public String kernel;

    /** The block's index. */
    @Label("Block")
    public int block;

    /** Makes an event; fill and commit it only when {@link #shouldCommit()} says so. */
    public KiBlockEvent() {
    }
}
