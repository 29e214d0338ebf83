package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.memop.Memop;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * What a CUDA stream was given and has not been seen to reach, so that a timeout can say what the stream
 * still had to do: each item carries the ticket of its submission; when the stream reaches an event, every
 * item before the event's ticket is dropped. Only the first {@value #LIMIT} unreached items are kept; later
 * ones are counted. Waits are described with their word's current value, read when the message is made.
 * Thread-safe.
 */
final class QueuedWork {
    /** Items kept for messages. */
    static final int LIMIT = 32;

    private record Item(long ticket, Object what) {
    }

    private final ArrayDeque<Item> items = new ArrayDeque<>();
    private long untracked;

    /**
     * @param ticket the submission's ticket
     * @param what   a memop, or a description
     */
    synchronized void add(long ticket, Object what) {
        if (items.size() < LIMIT) {
            items.add(new Item(ticket, what));
        } else {
            untracked++;
        }
    }

    /**
     * @param ticket the submission's ticket
     * @param ops    memops submitted together
     */
    synchronized void addAll(long ticket, List<? extends Memop> ops) {
        for (Memop op : ops) {
            add(ticket, op);
        }
    }

    /**
     * The stream has run everything submitted before a ticket.
     *
     * @param ticket the first ticket that may still be queued
     */
    synchronized void reachedBefore(long ticket) {
        while (!items.isEmpty() && items.peekFirst().ticket() < ticket) {
            items.pollFirst();
        }
        if (items.isEmpty()) {
            untracked = 0;
        }
    }

    /** Forgets everything: the stream drained. */
    synchronized void clear() {
        items.clear();
        untracked = 0;
    }

    /** @return the items, oldest first, separated by "; ", or "nothing known" */
    synchronized String describe() {
        if (items.isEmpty()) {
            return "nothing known";
        }
        List<String> parts = new ArrayList<>(items.size() + 1);
        for (Item i : items) {
            parts.add(describe(i.what()));
        }
        if (untracked > 0) {
            parts.add("and " + untracked + " more");
        }
        return String.join("; ", parts);
    }

    static String describe(Object what) {
        return switch (what) {
            case Memop.Wait32 w -> "WAIT32 " + w.condition() + " " + hex(w.value()) + " on " + w.target() + " (now "
                    + hex(w.target().getAcquire32()) + ")";
            case Memop.Wait64 w -> "WAIT64 " + w.condition() + " " + hex(w.value()) + " on " + w.target() + " (now "
                    + hex(w.target().getAcquire64()) + ")";
            case Memop.Write32 w -> "WRITE32 " + hex(w.value()) + " to " + w.target();
            case Memop.Write64 w -> "WRITE64 " + hex(w.value()) + " to " + w.target();
            case Memop.WriteMemory w -> "WRITE_MEMORY " + w.length() + " bytes to 0x"
                    + Long.toHexString(w.target().address() + w.offset());
            case Memop.Barrier b -> "BARRIER " + b.scope();
            default -> String.valueOf(what);
        };
    }

    private static String hex(int v) {
        return Integer.toUnsignedString(v) + " (0x" + Integer.toHexString(v) + ")";
    }

    private static String hex(long v) {
        return Long.toUnsignedString(v) + " (0x" + Long.toHexString(v) + ")";
    }
}
