package dev.gdasync.libmp;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The job-failure listeners of one {@link Mp}: the upper layers' waits that look only at words in memory (a kernel's
 * wait on the host KI executor, a host stream's) register here while they may block, and end their wait when the
 * job fails. Each listener runs at most once: on the bootstrap's thread when the job fails, or at once on the
 * registering thread if it failed already; whichever comes first runs it.
 *
 * <p>Threads: {@link #add} and a subscription's close from any thread; {@link #failed} from the bootstrap's thread
 * (or the thread that aborts the job).
 */
final class JobFailureListeners {
    private final CopyOnWriteArrayList<Entry> entries = new CopyOnWriteArrayList<>();
    /** The job's failure once {@link #failed} ran: an add that the loop over the entries missed sees it. */
    private volatile String failure;

    JobFailureSubscription add(Consumer<String> listener) {
        Entry e = new Entry(listener);
        entries.add(e);
        String f = failure;
        if (f != null) {
            e.fire(f);
        }
        return e;
    }

    /** Runs every registered listener that has not run yet. */
    void failed(String reason) {
        if (failure == null) {
            failure = reason;
        }
        for (Entry e : entries) {
            e.fire(failure);
        }
    }

    /** @return listeners registered and not closed (for tests) */
    int size() {
        return entries.size();
    }

    private final class Entry implements JobFailureSubscription {
        private final Consumer<String> listener;
        private final AtomicBoolean ran = new AtomicBoolean();
        private volatile boolean closed;

        Entry(Consumer<String> listener) {
            this.listener = listener;
        }

        void fire(String reason) {
            if (closed || !ran.compareAndSet(false, true)) {
                return;
            }
            try {
                listener.accept(reason);
            } catch (RuntimeException e) {
                // A listener's failure must not keep the others (or the Mp's own abort) from running; the layer
                // that registered it learns of the job's failure through its own calls all the same.
                System.err.println("libmp: a job-failure listener threw " + e);
            }
        }

        @Override
        public void close() {
            closed = true;
            entries.remove(this);
        }
    }
}
