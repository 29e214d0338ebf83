package dev.gdasync.apps.pingpong;

/** One model's ping-pong loop over an Mp ({@link HostLoop}, {@link StreamLoop}). */
interface Loop extends AutoCloseable {
    /**
     * Runs one ping-pong of {@code iters} round trips of {@code bytes}; both ranks call it together.
     *
     * @param bytes the message size
     * @param iters the round trips
     * @return on rank 0, the nanoseconds from the first send to the last reply; on rank 1, 0
     */
    long run(int bytes, int iters);

    @Override
    default void close() {
    }
}
