package dev.gdasync.libmp;

import dev.gdasync.gdsync.memop.WaitProgress;

/**
 * What the classes beside {@link Mp} know of it, so that none of them holds the Mp itself: its identity (a request,
 * registration or window carries its Mp's context, and another Mp's is refused), its rank, how word waits run the
 * Mp's progress, its peer links (a window's mapped peer memory), and its state: whether it is closed, and why its
 * job failed. The Mp makes one and hands it to the request pool, registrations, windows, descriptor queues, KI
 * exports and the parts of its own calls that live beside it; nothing below calls back into the Mp.
 */
final class MpContext {
    private final int rank;
    private final PeerLink[] links;
    private final WaitProgress wordWaitProgress;
    /** Set by {@code Mp.close()}; read on the thread that drives the Mp. */
    private boolean closed;
    /** Why the job failed (a rank gone, an abort), set by the bootstrap's thread; null while it is healthy. */
    private volatile String jobFailure;
    /** When {@link #jobFailure} was set ({@link System#nanoTime()}). */
    private volatile long jobFailedAt;
    /** Whether a call of this rank already threw because a request failed or the job failed. */
    private volatile boolean failureReported;

    /**
     * @param rank             the Mp's rank
     * @param links            the Mp's peer links, filled as it connects (shared, not copied)
     * @param wordWaitProgress what a word wait built for this Mp runs between looks
     */
    MpContext(int rank, PeerLink[] links, WaitProgress wordWaitProgress) {
        this.rank = rank;
        this.links = links;
        this.wordWaitProgress = wordWaitProgress;
    }

    /** @return the Mp's rank */
    int rank() {
        return rank;
    }

    /** @return the link to a peer, null for this rank */
    PeerLink peerLink(int peer) {
        return links[peer];
    }

    /** @return what word waits built for this Mp run between looks (descriptor queues build them too) */
    WaitProgress wordWaitProgress() {
        return wordWaitProgress;
    }

    /**
     * Marks the Mp closed.
     *
     * @return whether it was open
     */
    boolean markClosed() {
        boolean wasOpen = !closed;
        closed = true;
        return wasOpen;
    }

    /** @throws IllegalStateException if the Mp is closed */
    void requireOpen() {
        if (closed) {
            throw new IllegalStateException("Mp of rank " + rank + " is closed");
        }
    }

    /** Records why the job failed (the bootstrap's thread): the time first, so a wait that sees the reason sees it. */
    void jobFailed(String reason) {
        jobFailedAt = System.nanoTime();
        jobFailure = reason;
    }

    /** @return why the job failed, or null while it is healthy */
    String jobFailure() {
        return jobFailure;
    }

    /** @return when the job failed ({@link System#nanoTime()}), meaningful once {@link #jobFailure()} is set */
    long jobFailedAt() {
        return jobFailedAt;
    }

    /** Notes that a call of this rank threw for a failed request or a failed job (close then spares a second throw). */
    void noteFailureReported() {
        failureReported = true;
    }

    /** @return whether a call of this rank already threw for a failure */
    boolean isFailureReported() {
        return failureReported;
    }
}
