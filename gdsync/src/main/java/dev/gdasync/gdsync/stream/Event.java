package dev.gdasync.gdsync.stream;

import dev.gdasync.gdsync.memop.WaitPolicy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A point in a stream's work: complete once the stream has run everything queued before it, or
 * failed if the stream failed first.
 *
 * <p>Streams of this package make their events themselves. A stream implemented elsewhere (a CUDA
 * stream) makes them with {@link #pending(String)}, whose {@link Completer} is the only way to end the
 * event. {@link #whenDone(Runnable)} lets another stream react to an event without polling it.
 */
public final class Event {
    private static final long SPIN_NANOS = 20_000;

    private final String stream;
    private final CountDownLatch latch = new CountDownLatch(1);
    private volatile boolean done;
    private volatile Throwable failure;
    /** Listeners to run once done; null once they ran. Guarded by {@code this}. */
    private List<Runnable> listeners = new ArrayList<>(0);

    Event(String stream) {
        this.stream = stream;
    }

    /**
     * Makes a pending event for a stream implemented outside this package.
     *
     * @param stream the stream's name, for messages
     * @return the completer that owns the new event
     * @throws NullPointerException if the name is null
     */
    public static Completer pending(String stream) {
        return new Completer(new Event(Objects.requireNonNull(stream, "stream must not be null")));
    }

    /**
     * The right to end one event: held by the stream that made it with {@link #pending(String)}. The
     * first call of {@link #complete()} or {@link #fail(Throwable)} ends the event; later calls do nothing.
     */
    public static final class Completer {
        private final Event event;

        private Completer(Event event) {
            this.event = event;
        }

        /** @return the event */
        public Event event() {
            return event;
        }

        /** Completes the event: the stream reached it. */
        public void complete() {
            event.complete();
        }

        /**
         * Fails the event: the stream failed or closed before reaching it.
         *
         * @param cause why
         * @throws NullPointerException if the cause is null
         */
        public void fail(Throwable cause) {
            event.fail(Objects.requireNonNull(cause, "cause must not be null"));
        }
    }

    void complete() {
        end(null);
    }

    void fail(Throwable cause) {
        end(cause);
    }

    private void end(Throwable cause) {
        List<Runnable> run;
        synchronized (this) {
            if (done) {
                return;
            }
            failure = cause;
            done = true;
            run = listeners;
            listeners = null;
        }
        latch.countDown();
        for (Runnable r : run) {
            runListener(r);
        }
    }

    /**
     * Runs a listener once the event is done (completed or failed): at once on the calling thread if it is
     * done already, else on the thread that ends it. Listeners must be short and must not block; an
     * exception one throws goes to the running thread's uncaught-exception handler.
     *
     * @param listener what to run
     * @throws NullPointerException if the listener is null
     */
    public void whenDone(Runnable listener) {
        Objects.requireNonNull(listener, "listener must not be null");
        synchronized (this) {
            if (!done) {
                listeners.add(listener);
                return;
            }
        }
        runListener(listener);
    }

    private static void runListener(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException | Error e) {
            Thread t = Thread.currentThread();
            t.getUncaughtExceptionHandler().uncaughtException(t, e);
        }
    }

    /** @return whether the stream reached the event or failed before it */
    public boolean isDone() {
        return done;
    }

    /** @return the stream's failure if it failed before reaching the event, else null */
    public Throwable failure() {
        return failure;
    }

    /**
     * Blocks until the event is done.
     *
     * @throws StreamFailedException if the stream failed before reaching it
     */
    public void synchronize() {
        awaitDone(Long.MAX_VALUE);
        throwIfFailed();
    }

    /**
     * Blocks until the event is done or the timeout passes.
     *
     * @param timeout how long to wait; zero or negative only looks, a timeout longer than {@link Long#MAX_VALUE}
     *                nanoseconds waits without limit
     * @return whether the event completed in time
     * @throws NullPointerException  if the timeout is null
     * @throws StreamFailedException if the stream failed before reaching it
     */
    public boolean synchronize(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout must not be null");
        boolean ok = awaitDone(timeout.compareTo(WaitPolicy.MAX_TIMEOUT) >= 0 ? Long.MAX_VALUE
                : timeout.isNegative() ? 0 : timeout.toNanos());
        if (ok) {
            throwIfFailed();
        }
        return ok;
    }

    private void throwIfFailed() {
        Throwable f = failure;
        if (f != null) {
            throw f instanceof StreamFailedException s ? s : new StreamFailedException(stream, f);
        }
    }

    private boolean awaitDone(long timeoutNanos) {
        long start = System.nanoTime();
        while (!done) {
            long waited = System.nanoTime() - start;
            if (waited >= timeoutNanos) {
                return false;
            }
            if (waited < SPIN_NANOS) {
                Thread.onSpinWait();
                continue;
            }
            try {
                if (timeoutNanos == Long.MAX_VALUE) {
                    latch.await();
                } else {
                    latch.await(timeoutNanos - waited, TimeUnit.NANOSECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for an event of stream '" + stream + "'", e);
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "Event{stream=" + stream + (done ? failure == null ? ", complete" : ", failed" : ", pending") + "}";
    }
}
