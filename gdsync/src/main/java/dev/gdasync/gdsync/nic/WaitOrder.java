package dev.gdasync.gdsync.nic;

import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The order rule of a completion queue's prepared waits (LibGDSync's absolute peek): the k-th wait is for the k-th
 * CQE the CPU is given, so a wait is prepared after the work that produces its CQE and before the CPU can reap it.
 * Providers' completion queues keep one each; it holds the count of waits prepared and says precisely what is wrong
 * with a wait that breaks the rule. Used by the CPU thread that prepares waits.
 */
public final class WaitOrder {
    private final String queue;
    private final LongSupplier reaped;
    private final LongSupplier expected;
    private final String expectedWhat;
    private long prepared;

    /**
     * @param queue        the completion queue's name, for messages
     * @param reaped       how many CQEs the CPU has reaped
     * @param expected     how many CQEs outstanding work will have produced once it completes
     * @param expectedWhat what {@code expected} counts, for messages
     */
    public WaitOrder(String queue, LongSupplier reaped, LongSupplier expected, String expectedWhat) {
        this.queue = Objects.requireNonNull(queue, "queue must not be null");
        this.reaped = Objects.requireNonNull(reaped, "reaped must not be null");
        this.expected = Objects.requireNonNull(expected, "expected must not be null");
        this.expectedWhat = Objects.requireNonNull(expectedWhat, "expectedWhat must not be null");
    }

    /** @return how many waits were prepared: the CQEs below this index have a wait */
    public long prepared() {
        return prepared;
    }

    /**
     * Takes the next wait's CQE.
     *
     * @return the index of the CQE the new wait is for
     * @throws IllegalStateException if the CPU already reaped that CQE, or no outstanding work will produce it
     */
    public long next() {
        long next = prepared;
        long done = reaped.getAsLong();
        if (next < done) {
            throw new IllegalStateException("cannot prepare a wait for CQE #" + next + " of " + queue + ": poll() already"
                    + " reaped it (and " + (done - next - 1) + " after it). The k-th wait of a completion queue is for"
                    + " its k-th CQE, so prepare each wait before its CQE can be reaped, or reap with a wait's"
                    + " releaseOnCpu(); if the reaped CQEs were meant for the CPU, call resyncWaits()");
        }
        long limit = expected.getAsLong();
        if (next >= limit) {
            throw new IllegalStateException("cannot prepare a wait for CQE #" + next + " of " + queue + ": only "
                    + limit + " " + expectedWhat + " so far, so no work will produce it (waits are prepared in CQE"
                    + " order, after the work that completes them)");
        }
        prepared = next + 1;
        return next;
    }

    /**
     * Checks that CQE {@code index} has a wait prepared or reserved.
     *
     * @param index a CQE's index
     * @throws IllegalArgumentException if it has none
     */
    public void requireReserved(long index) {
        if (index < 0 || index >= prepared) {
            throw new IllegalArgumentException("CQE #" + index + " of " + queue + " is not reserved for a wait: only CQEs"
                    + " below #" + prepared + " are");
        }
    }

    /**
     * Takes back the wait for CQE {@code index}, which must be the last one prepared.
     *
     * @param index the wait's CQE
     * @throws IllegalStateException if a later wait was prepared
     */
    public void cancel(long index) {
        if (prepared != index + 1) {
            throw new IllegalStateException("the wait for CQE #" + index + " of " + queue + " cannot be cancelled: the wait"
                    + " for CQE #" + (prepared - 1) + " was prepared after it");
        }
        prepared = index;
    }

    /**
     * Lets the next wait be for the next CQE the CPU has not reaped (the reaped ones were meant for the CPU).
     *
     * @throws IllegalStateException if prepared waits are still outstanding
     */
    public void resync() {
        long done = reaped.getAsLong();
        if (prepared > done) {
            throw new IllegalStateException(queue + " has " + (prepared - done)
                    + " prepared waits whose CQEs are not reaped yet; resync only when none is outstanding");
        }
        prepared = done;
    }
}
