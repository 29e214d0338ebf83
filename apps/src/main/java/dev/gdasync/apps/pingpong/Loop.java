package dev.gdasync.apps.pingpong;

/** One model's ping-pong loop over an Mp ({@link HostLoop}, {@link StreamLoop}). */
interface Loop extends AutoCloseable {
    /**
     * Runs one ping-pong of {@code iters} round trips of {@code bytes}; both ranks call it together.
     *
     * @param bytes the message size
     * @param iters the round trips
     * @param trips where rank 0 records each round trip ({@link RoundTrips#begin} at the start, a
     *              {@link RoundTrips#lap} after each reply), where the mode can time them one by one; rank 1
     *              records nothing
     * @return on rank 0, the nanoseconds from the first send to the last reply; on rank 1, 0
     */
    long run(int bytes, int iters, RoundTrips trips);

    @Override
    default void close() {
    }
}
