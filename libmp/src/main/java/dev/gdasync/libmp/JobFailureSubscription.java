package dev.gdasync.libmp;

/**
 * A listener registered with {@link Mp#onJobFailure}: closing it unregisters the listener, which then is not run
 * (a run already under way on the bootstrap's thread finishes). Closing twice does nothing.
 */
public interface JobFailureSubscription extends AutoCloseable {
    /** Unregisters the listener. */
    @Override
    void close();
}
