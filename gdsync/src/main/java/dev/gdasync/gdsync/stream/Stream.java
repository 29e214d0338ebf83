package dev.gdasync.gdsync.stream;

import dev.gdasync.gdsync.nic.SendExecutor;
import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.memop.MemopBatch;

import java.util.List;

/**
 * An ordered queue of work executed by something other than the caller: a host thread
 * ({@link HostStream}) or a GPU stream. Work runs in submission order; a failure fails the stream,
 * which then rejects new work and reports the original cause.
 */
public interface Stream extends SendExecutor, AutoCloseable {

    /** @return the stream's name */
    @Override
    String name();

    /**
     * Queues a batch of memops as they are. Prepared sends and waits should go through
     * {@link #post(List)}, which enforces their order rules; raw memops are not checked.
     *
     * @param batch the memops
     * @throws NullPointerException  if the batch is null
     * @throws StreamFailedException if the stream has failed
     * @throws IllegalStateException if the stream is closed
     */
    void post(MemopBatch batch);

    /**
     * Posts descriptors as one batch: sends are checked against their queue pair's prepare order and
     * waits against being posted twice, all before anything is queued.
     *
     * @param descriptors the descriptors, in order
     * @throws NullPointerException  if the list or one of its descriptors is null; nothing is queued or posted
     * @throws StreamFailedException if the stream has failed
     * @throws IllegalStateException if the stream is closed, or the descriptors break an order rule
     */
    void post(List<? extends Descriptor> descriptors);

    /**
     * Queues a host task, the host stream's kernel.
     *
     * @param task the task; an exception it throws fails the stream
     * @throws NullPointerException  if the task is null
     * @throws StreamFailedException if the stream has failed
     * @throws IllegalStateException if the stream is closed
     */
    void launch(Runnable task);

    /**
     * Queues an event that completes when the stream reaches it.
     *
     * @return the event
     * @throws StreamFailedException if the stream has failed
     */
    Event record();

    /**
     * Makes the stream wait until an event (of any stream) completes before running later work.
     *
     * @param event the event
     * @throws NullPointerException  if the event is null
     * @throws StreamFailedException if the stream has failed
     * @throws IllegalStateException if the stream is closed
     */
    void waitEvent(Event event);

    /**
     * Blocks until everything queued so far has run.
     *
     * @throws StreamFailedException if the stream failed, with the original cause
     */
    void synchronize();

    /** @return the first failure, or null while the stream is healthy */
    Throwable failure();

    /**
     * Says whether the stream was closed: it then refuses new work with {@link IllegalStateException}. A caller
     * that must change state before posting (take a request, write a work request) checks this, and
     * {@link #failure()}, first.
     *
     * @return whether {@link #close()} was called (or the stream's thread stopped)
     */
    boolean isClosed();

    /** Stops the stream: work still queued is abandoned and its events fail. Closing twice does nothing. */
    @Override
    void close();
}
