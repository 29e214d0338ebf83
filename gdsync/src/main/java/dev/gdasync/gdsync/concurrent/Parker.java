package dev.gdasync.gdsync.concurrent;

/**
 * How a {@link BackoffIdler} parks once its spins and yields are spent: {@link Wakeup} (posters of this process
 * unpark it), or a NIC's wait for its peers (peers in other processes wake it through shared memory). An
 * implementation checks once more, after announcing the park, whether the wait is over, so that a wake between
 * the caller's last look and the park is not lost.
 */
@FunctionalInterface
public interface Parker {

    /**
     * Parks the calling thread for at most {@code nanos}, unless what it waits for is ready; may return early.
     *
     * @param nanos the longest park, positive
     */
    void park(long nanos);
}
