package dev.gdasync.gdsync.stream;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A point in a stream's work: complete once the stream has run everything queued before it, or
 * failed if the stream failed first.
 */
public final class Event {
    private static final long SPIN_NANOS = 20_000;

    private final String stream;
    private final CountDownLatch latch = new CountDownLatch(1);
    private volatile boolean done;
    private volatile Throwable failure;

    Event(String stream) {
        this.stream = stream;
    }

    void complete() {
        done = true;
        latch.countDown();
    }

    void fail(Throwable cause) {
        failure = cause;
        done = true;
        latch.countDown();
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
     * @param timeout how long to wait
     * @return whether the event completed in time
     * @throws StreamFailedException if the stream failed before reaching it
     */
    public boolean synchronize(Duration timeout) {
        boolean ok = awaitDone(timeout.toNanos());
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
