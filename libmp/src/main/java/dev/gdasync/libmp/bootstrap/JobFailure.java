package dev.gdasync.libmp.bootstrap;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Whether a job failed, why (the first reason wins), and who must be told: the listeners of
 * {@link Bootstrap#onFailure}. Thread-safe; listeners run outside the lock, on the thread that reported the
 * failure or registered late.
 */
final class JobFailure {
    private final List<Consumer<String>> listeners = new ArrayList<>();
    private String reason;

    /** @return why the job failed, or null */
    synchronized String reason() {
        return reason;
    }

    /**
     * Records a failure and tells the listeners, once.
     *
     * @param why the reason
     * @return whether this was the first failure
     */
    boolean fail(String why) {
        return fail(why, null);
    }

    /**
     * Records a failure, runs {@code first}, then tells the listeners, once. Rank 0 tells the other ranks first: a
     * listener may end this process (the application's wait fails and it exits), and a member that then saw rank 0's
     * connection close before the news would blame rank 0 instead of the rank that failed.
     *
     * @param why   the reason
     * @param first what to do before the listeners hear (null: nothing)
     * @return whether this was the first failure
     */
    boolean fail(String why, Runnable first) {
        List<Consumer<String>> toTell;
        synchronized (this) {
            if (reason != null) {
                return false;
            }
            reason = why;
            toTell = new ArrayList<>(listeners);
        }
        if (first != null) {
            first.run();
        }
        for (Consumer<String> l : toTell) {
            tell(l, why);
        }
        return true;
    }

    /** Registers a listener; runs it at once if the job failed already. */
    void listen(Consumer<String> listener) {
        String failed;
        synchronized (this) {
            listeners.add(listener);
            failed = reason;
        }
        if (failed != null) {
            tell(listener, failed);
        }
    }

    private static void tell(Consumer<String> listener, String why) {
        try {
            listener.accept(why);
        } catch (RuntimeException e) {
            // One listener's failure must not keep the others from hearing.
            System.getLogger(JobFailure.class.getName()).log(System.Logger.Level.WARNING,
                    "a job-failure listener failed: " + e, e);
        }
    }
}
