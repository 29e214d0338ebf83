package dev.gdasync.ki;

import java.time.Duration;

/** A running KI kernel: on a GPU, or on the threads of the host executor. */
public interface KiLaunch {

    /** @return whether every block has ended */
    boolean isDone();

    /**
     * Waits until every block has ended, then checks the table's status. A kernel ends on its own: its
     * waits are bounded by their timeouts.
     *
     * @throws KiException if the kernel reported a failure (naming the descriptor) or could not run
     */
    void join();

    /**
     * As {@link #join()}, giving up after a bound.
     *
     * @param limit how long to wait
     * @throws KiException if the kernel reported a failure or had not ended within the limit
     */
    void join(Duration limit);
}
