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
        List<Consumer<String>> toTell;
        synchronized (this) {
            if (reason != null) {
                return false;
            }
            reason = why;
            toTell = new ArrayList<>(listeners);
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
