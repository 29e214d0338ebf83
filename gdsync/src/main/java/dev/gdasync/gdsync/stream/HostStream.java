package dev.gdasync.gdsync.stream;

import dev.gdasync.gdsync.concurrent.AgentThread;
import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.concurrent.Wakeup;
import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.Descriptors;
import dev.gdasync.gdsync.memop.HostMemops;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.WaitAbortedException;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.trace.FailureEvent;
import dev.gdasync.gdsync.trace.HostTaskEvent;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;

/**
 * A stream executed by a dedicated host thread: memops, host tasks and events run in submission order.
 *
 * <p>A doorbell a host stream rings is rung by a call, so the software NIC runs the send on this
 * thread at once. Waits spin, then yield, then park, and fail the stream after the policy's timeout
 * with a message naming the word. A failed stream discards what is queued, fails its events, and
 * rejects new work with the original cause. Streams are independent: each has its own thread. A layer above
 * can fail a stream from outside ({@link #abort}) when no one will write the words it waits for (a peer died):
 * its wait ends at once.
 *
 * <p>The thread ({@code gdasync-stream-<name>}) is an agent ({@link AgentThread}): each duty cycle runs
 * the next queued item to completion, a wait included. Between items it idles with a
 * {@link BackoffIdler}: it spins briefly, yields, then parks until new work is posted, which wakes it
 * ({@link Wakeup}).
 *
 * <p>With the flight recorder on, every host task ({@link HostTaskEvent}), memop batch and wait (see
 * {@link HostMemops}) and a failure ({@link FailureEvent}) are recorded on the stream's thread.
 */
public final class HostStream implements Stream {
    /**
     * Between items: spin briefly, yield (about ten milliseconds: the thread that posts the next item gets the CPU
     * at once), then park 10 ms at a time; a post cuts the park short.
     */
    private static final BackoffPolicy IDLE = new BackoffPolicy(2_000, 20_000, 10_000_000, 10_000_000);

    private final String name;
    private final WaitPolicy policy;
    private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
    private volatile boolean closing;
    private volatile Throwable failure;
    /** Whether a wait in progress must end: the stream is closing, or it failed ({@link #abort} from outside). */
    private final BooleanSupplier aborted = this::isClosingOrFailed;
    /** Wakes the thread parked between items; it does not park while work is queued or a close is asked. */
    private final Wakeup wakeup = new Wakeup(() -> closing || !queue.isEmpty());
    private final AgentThread agent;

    /** Queued by {@link #waitEvent}: the stream waits for another event. */
    private record EventWait(Event event) {
    }

    private static final VarHandle FAILURE;

    static {
        try {
            FAILURE = MethodHandles.lookup().findVarHandle(HostStream.class, "failure", Throwable.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private HostStream(String name, WaitPolicy policy) {
        this.name = Objects.requireNonNull(name, "name must not be null");
        this.policy = Objects.requireNonNull(policy, "policy must not be null");
        this.agent = AgentThread.start(new StreamAgent(), new BackoffIdler(IDLE, wakeup));
    }

    /**
     * Starts a stream with the default wait policy.
     *
     * @param name the stream's name
     * @return the stream
     * @throws NullPointerException if the name is null
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
     * @throws NullPointerException if the name or the policy is null
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
        enqueue(Objects.requireNonNull(batch, "batch must not be null"));
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
        enqueue(Objects.requireNonNull(task, "task must not be null"));
    }

    @Override
    public Event record() {
        Event e = new Event(name);
        enqueue(e);
        return e;
    }

    @Override
    public void waitEvent(Event event) {
        enqueue(new EventWait(Objects.requireNonNull(event, "event must not be null")));
    }

    @Override
    public void synchronize() {
        record().synchronize();
    }

    @Override
    public Throwable failure() {
        return failure;
    }

    private boolean isClosingOrFailed() {
        return closing || failure != null;
    }

    /**
     * Fails the stream from outside, as if the item it runs had thrown {@code why}: a wait in progress (a memop's
     * wait, or a wait for another stream's event) ends at once, within one idle of its backoff; what is queued is
     * discarded and its events fail with {@code why}, as do events recorded later; posts are refused with a
     * {@link StreamFailedException}. A host task that is running is not interrupted: the stream fails once it
     * returns. A stream that failed already or is closed is left as it is. Any thread; what a layer above calls
     * when no one will write the words the stream waits for (the job failed: a peer's process is gone).
     *
     * @param why the failure, for the stream's events and refusals
     * @return whether this call failed the stream (false: it had failed or was closed already)
     * @throws NullPointerException if {@code why} is null
     */
    public boolean abort(Throwable why) {
        Objects.requireNonNull(why, "why must not be null");
        if (closing || !FAILURE.compareAndSet(this, null, why)) {
            return false;
        }
        FailureEvent.record("stream '" + name + "'", null, "aborted: " + why);
        wakeup.wake();
        agent.wake(); // a park inside a wait: the wait then sees the failure
        return true;
    }

    @Override
    public boolean isClosed() {
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
        wakeup.wake();
        // A close that raced this post may have drained the queue already: take the item back and fail
        // it here, or the stream thread will (whoever removes it), so no event is left pending.
        if (closing && queue.remove(item)) {
            discard(item, new IllegalStateException("stream '" + name + "' was closed"));
            throw new IllegalStateException("stream '" + name + "' is closed");
        }
    }

    /** The stream's thread: each duty cycle runs the next queued item to completion. */
    private final class StreamAgent implements Agent {
        /** How waits inside items idle; separate from the runner's idler between items. */
        private final BackoffIdler waitIdler = new BackoffIdler(policy.backoff());

        @Override
        public String roleName() {
            return "gdasync-stream-" + name;
        }

        @Override
        public int doWork() {
            if (closing) {
                // Queued work is dropped, not run: onClose fails its events.
                throw new AgentTerminationException("stream '" + name + "' closed", true);
            }
            Object item = queue.poll();
            if (item == null) {
                return 0;
            }
            Throwable f = failure;
            if (f != null) {
                discard(item, f);
                return 1;
            }
            try {
                execute(item, waitIdler);
            } catch (WaitAbortedException e) {
                // close() abandoned a wait (the stream is closed, not failed), or abort() failed the stream.
                Throwable why = failure;
                discard(item, why != null ? why : new IllegalStateException("stream '" + name + "' was closed", e));
            } catch (Throwable t) {
                if (FAILURE.compareAndSet(HostStream.this, null, t)) {
                    FailureEvent.record("stream '" + name + "'", null, String.valueOf(t));
                }
                discard(item, failure);
            }
            // A task may leave the thread interrupted (restoring the status after catching an
            // InterruptedException). Streams stop by close only, and the runner would stop on it.
            Thread.interrupted();
            return 1;
        }

        @Override
        public void onClose() {
            // Reached by close(); should the runner stop otherwise (an interrupt from outside), the stream
            // is closed all the same, so that nothing waits on a stream without a thread.
            closing = true;
            Throwable why = failure != null ? failure : new IllegalStateException("stream '" + name + "' was closed");
            for (Object item; (item = queue.poll()) != null; ) {
                discard(item, why);
            }
        }
    }

    private void execute(Object item, BackoffIdler waitIdler) {
        switch (item) {
            case MemopBatch b -> HostMemops.execute(b, policy, waitIdler, aborted);
            case Runnable task -> run(task);
            case Event e -> e.complete();
            case EventWait w -> awaitEvent(w.event(), waitIdler);
            default -> throw new IllegalStateException("unknown stream item " + item);
        }
    }

    private void run(Runnable task) {
        HostTaskEvent event = new HostTaskEvent();
        event.begin();
        task.run();
        if (event.shouldCommit()) {
            event.stream = name;
            event.task = task.getClass().getName();
            event.commit();
        }
    }

    private void awaitEvent(Event event, BackoffIdler idler) {
        idler.reset();
        long start = System.nanoTime();
        while (!event.isDone()) {
            idler.idle();
            if (isClosingOrFailed()) {
                throw new WaitAbortedException("stream '" + name + "' closed or aborted while waiting for " + event);
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
        agent.close(); // wakes a parked thread, or a park inside a wait, which then sees the abort
    }

    @Override
    public String toString() {
        return "HostStream{" + name + (failure != null ? ", failed: " + failure : "") + (closing ? ", closed" : "") + "}";
    }
}
