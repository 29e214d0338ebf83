package dev.gdasync.gdsync.stream;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.Descriptors;
import dev.gdasync.gdsync.memop.HostMemops;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.WaitAbortedException;
import dev.gdasync.gdsync.memop.WaitPolicy;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A stream executed by a dedicated host thread: memops, host tasks and events run in submission order.
 *
 * <p>A doorbell a host stream rings is rung by a call, so the software NIC runs the send on this
 * thread at once. Waits spin, then yield, then park, and fail the stream after the policy's timeout
 * with a message naming the word. When idle the thread spins briefly, then parks until new work is
 * posted. A failed stream discards what is queued, fails its events, and rejects new work with
 * the original cause. Streams are independent: each has its own thread.
 */
public final class HostStream implements Stream {
    private static final long IDLE_SPINS = 20_000;
    private static final long IDLE_YIELDS = 200;
    private static final long IDLE_PARK_NANOS = 10_000_000;

    private final String name;
    private final WaitPolicy policy;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
    private final BooleanSupplier aborted = this::isClosing;
    private volatile boolean parked;
    private volatile boolean closing;
    private volatile Throwable failure;

    /** Queued by {@link #waitEvent}: the stream waits for another event. */
    private record EventWait(Event event) {
    }

    private HostStream(String name, WaitPolicy policy) {
        this.name = Objects.requireNonNull(name, "name");
        this.policy = Objects.requireNonNull(policy, "policy");
        this.thread = Thread.ofPlatform().name("gdasync-stream-" + name).daemon().unstarted(this::run);
        thread.start();
    }

    /**
     * Starts a stream with the default wait policy.
     *
     * @param name the stream's name
     * @return the stream
     */
    public static HostStream create(String name) {
        return new HostStream(name, WaitPolicy.defaults());
    }

    /**
     * Starts a stream.
     *
     * @param name   the stream's name
     * @param policy how its waits wait, and for how long
     * @return the stream
     */
    public static HostStream create(String name, WaitPolicy policy) {
        return new HostStream(name, policy);
    }

    @Override
    public String name() {
        return name;
    }

    /** @return how the stream's waits wait */
    public WaitPolicy policy() {
        return policy;
    }

    @Override
    public void post(MemopBatch batch) {
        enqueue(Objects.requireNonNull(batch, "batch"));
    }

    @Override
    public void post(List<? extends Descriptor> descriptors) {
        // Check, queue, then mark posted: if the stream is closed or failed, nothing is marked posted.
        Descriptors.checkPost(descriptors, this);
        enqueue(Descriptors.translate(descriptors));
        Descriptors.markPosted(descriptors, this);
    }

    @Override
    public void launch(Runnable task) {
        enqueue(Objects.requireNonNull(task, "task"));
    }

    @Override
    public Event record() {
        Event e = new Event(name);
        enqueue(e);
        return e;
    }

    @Override
    public void waitEvent(Event event) {
        enqueue(new EventWait(Objects.requireNonNull(event, "event")));
    }

    @Override
    public void synchronize() {
        record().synchronize();
    }

    @Override
    public Throwable failure() {
        return failure;
    }

    private boolean isClosing() {
        return closing;
    }

    private void requireUsable() {
        if (closing) {
            throw new IllegalStateException("stream '" + name + "' is closed");
        }
        Throwable f = failure;
        if (f != null) {
            throw new StreamFailedException(name, f);
        }
    }

    private void enqueue(Object item) {
        requireUsable();
        queue.offer(item);
        if (parked) {
            LockSupport.unpark(thread);
        }
        // A close that raced this post may have drained the queue already: take the item back and fail
        // it here, or the stream thread will (whoever removes it), so no event is left pending.
        if (closing && queue.remove(item)) {
            discard(item, new IllegalStateException("stream '" + name + "' was closed"));
            throw new IllegalStateException("stream '" + name + "' is closed");
        }
    }

    private void run() {
        BackoffIdler waitIdler = new BackoffIdler(policy.backoff());
        long idle = 0;
        for (;;) {
            if (closing) {
                break; // queued work is dropped, not run: the loop below fails its events
            }
            Object item = queue.poll();
            if (item == null) {
                idle = idleOnce(idle);
                continue;
            }
            idle = 0;
            Throwable f = failure;
            if (f != null) {
                discard(item, f);
                continue;
            }
            try {
                execute(item, waitIdler);
            } catch (WaitAbortedException e) {
                // close() abandoned a wait: the stream is closed, not failed.
                discard(item, new IllegalStateException("stream '" + name + "' was closed", e));
            } catch (Throwable t) {
                if (failure == null) {
                    failure = t;
                }
                discard(item, failure);
            }
        }
        Throwable why = failure != null ? failure : new IllegalStateException("stream '" + name + "' was closed");
        for (Object item; (item = queue.poll()) != null; ) {
            discard(item, why);
        }
    }

    private long idleOnce(long idle) {
        if (idle < IDLE_SPINS) {
            Thread.onSpinWait();
        } else if (idle < IDLE_SPINS + IDLE_YIELDS) {
            Thread.yield();
        } else {
            parked = true;
            if (queue.isEmpty() && !closing) {
                LockSupport.parkNanos(this, IDLE_PARK_NANOS);
            }
            parked = false;
        }
        return idle + 1;
    }

    private void execute(Object item, BackoffIdler waitIdler) {
        switch (item) {
            case MemopBatch b -> HostMemops.execute(b, policy, waitIdler, aborted);
            case Runnable task -> task.run();
            case Event e -> e.complete();
            case EventWait w -> awaitEvent(w.event(), waitIdler);
            default -> throw new IllegalStateException("unknown stream item " + item);
        }
    }

    private void awaitEvent(Event event, BackoffIdler idler) {
        idler.reset();
        long start = System.nanoTime();
        while (!event.isDone()) {
            idler.idle();
            if (closing) {
                throw new WaitAbortedException("stream '" + name + "' closed while waiting for " + event);
            }
            if (System.nanoTime() - start >= policy.timeoutNanos()) {
                throw new IllegalStateException("stream '" + name + "' timed out after "
                        + policy.timeoutNanos() / 1_000_000 + " ms waiting for " + event);
            }
        }
        if (event.failure() != null) {
            throw new IllegalStateException("stream '" + name + "' waited for " + event + ", whose stream failed",
                    event.failure());
        }
    }

    private static void discard(Object item, Throwable why) {
        if (item instanceof Event e) {
            e.fail(why);
        }
    }

    /**
     * Stops the thread: a wait in progress is abandoned, queued work is dropped and queued events fail.
     * Called from a task of this stream, it stops the stream after that task.
     */
    @Override
    public void close() {
        if (closing) {
            return;
        }
        closing = true;
        LockSupport.unpark(thread);
        if (Thread.currentThread() != thread) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "HostStream{" + name + (failure != null ? ", failed: " + failure : "") + (closing ? ", closed" : "") + "}";
    }
}
