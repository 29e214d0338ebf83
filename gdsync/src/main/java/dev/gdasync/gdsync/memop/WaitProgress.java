package dev.gdasync.gdsync.memop;

/**
 * What a host thread runs between looks at a word it waits on, when the word is written by work that needs
 * progress calls to move: a NIC whose transport is progressed by the threads that poll it (UCX) hands its
 * hook to the waits it prepares, so a stream waiting for a completion receives the message that writes it on
 * its own thread, as a thread polling the completion queue does.
 *
 * <p>The hook belongs to the NIC that needs it; waits that nothing needs to progress carry none.
 */
@FunctionalInterface
public interface WaitProgress {
    /**
     * Progresses once without blocking.
     *
     * @return how much work it did; 0 lets the waiting thread idle
     */
    int progress();
}
