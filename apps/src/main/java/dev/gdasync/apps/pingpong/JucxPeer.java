package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.ucx.UcxLibrary;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.openucx.jucx.ucs.UcsConstants;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * This rank's side of the raw JUCX ping-pong ({@code jucx}): a {@link UcpWorker} on the JVM's UCP context
 * ({@link UcxLibrary#context()}), an endpoint to the peer's worker, and a send and a receive buffer in native
 * memory registered with UCP. The workers' addresses travel through the bootstrap; UCX then picks its
 * transports between the two workers ({@code UCX_TLS} from the environment restricts them, e.g. to
 * {@code tcp}).
 *
 * <p>Only the thread that opened it uses it: requests complete by busy-polling {@link UcpWorker#progress()}
 * on that thread, each wait bounded by a timeout, so a dead or stuck peer fails the run instead of hanging it.
 */
final class JucxPeer implements AutoCloseable {
    private final Pair pair;
    private final Arena arena;
    private final UcpMemory memory;
    private final UcpWorker worker;
    private final UcpEndpoint endpoint;
    private final long timeoutNanos;
    private final MemorySegment sendBuffer;
    private final MemorySegment recvBuffer;
    private boolean closed;

    /** A request that failed or timed out: the message names the rank, the request and the iteration. */
    static final class Failure extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        Failure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private JucxPeer(Pair pair, Arena arena, UcpMemory memory, UcpWorker worker, UcpEndpoint endpoint, long slot,
                     MemorySegment mem, long timeoutNanos) {
        this.pair = pair;
        this.arena = arena;
        this.memory = memory;
        this.worker = worker;
        this.endpoint = endpoint;
        this.timeoutNanos = timeoutNanos;
        this.sendBuffer = mem.asSlice(0, slot);
        this.recvBuffer = mem.asSlice(slot, slot);
    }

    /**
     * Opens this rank's worker, exchanges worker addresses with the peer (a collective: both ranks call it) and
     * connects to the peer.
     *
     * @param pair     the ranks and their bootstrap
     * @param maxBytes the largest message
     * @param timeout  how long one wait may take before it fails
     * @return the connected peer
     * @throws IllegalStateException if UCX cannot be used here (the message says why)
     */
    static JucxPeer open(Pair pair, int maxBytes, Duration timeout) {
        long slot = (maxBytes + 4095L) & -4096L;
        Arena arena = Arena.ofShared();
        UcpMemory memory = null;
        UcpWorker worker = null;
        try {
            MemorySegment mem = arena.allocate(2 * slot, 4096);
            // Registered once, as the other modes register their buffers: UCP then finds the keys of large
            // (rendezvous) messages in its cache instead of registering on the critical path.
            memory = UcxLibrary.context().memoryMap(new UcpMemMapParams().setAddress(mem.address()).setLength(mem.byteSize()));
            worker = new UcpWorker(UcxLibrary.context(), new UcpWorkerParams());
            ByteBuffer mine = worker.getAddress();
            byte[] address = new byte[mine.remaining()];
            mine.duplicate().get(address);
            List<byte[]> all = pair.bootstrap.allGather(address);
            byte[] theirs = all.get(pair.peer);
            ByteBuffer peerAddress = ByteBuffer.allocateDirect(theirs.length).put(theirs).flip();
            UcpEndpoint endpoint = worker.newEndpoint(new UcpEndpointParams().setUcpAddress(peerAddress)
                    .setName("pingpong-rank" + pair.rank + "-to-" + pair.peer));
            return new JucxPeer(pair, arena, memory, worker, endpoint, slot, mem, timeout.toNanos());
        } catch (RuntimeException | Error e) {
            if (worker != null) {
                worker.close();
            }
            if (memory != null) {
                memory.deregister();
            }
            arena.close();
            throw e;
        }
    }

    /**
     * Makes the JVM's UCP context now, so that a setting UCX refuses (a wrong {@code UCX_TLS}) is reported before
     * the ranks meet.
     *
     * @return why the context could not be made, or empty
     */
    static Optional<String> contextFailure() {
        try {
            UcxLibrary.context();
            return Optional.empty();
        } catch (RuntimeException e) {
            String tls = System.getenv("UCX_TLS");
            return Optional.of("UCX refused to make a UCP context" + (tls != null ? " with UCX_TLS='" + tls + "'" : "")
                    + ": " + e.getMessage());
        }
    }

    /**
     * @return the UCX and JUCX versions and the transport choice, e.g. "UCX 1.13.1 through JUCX 1.12.1,
     *         UCX_TLS=tcp"
     */
    static String describe() {
        String tls = System.getenv("UCX_TLS");
        return "UCX " + UcxLibrary.ucxVersion() + " through JUCX " + UcxLibrary.jucxVersion() + ", "
                + (tls == null ? "UCX_TLS unset: UCX picks the transports" : "UCX_TLS=" + tls);
    }

    /** @return the transports UCX chose for the endpoint to the peer, e.g. "sysv/memory, cma/memory" */
    String transports() {
        return UcxEndpointInfo.transports(endpoint);
    }

    /** @return the first {@code bytes} of the send buffer */
    MemorySegment send(int bytes) {
        return sendBuffer.asSlice(0, bytes);
    }

    /** @return the first {@code bytes} of the receive buffer */
    MemorySegment recv(int bytes) {
        return recvBuffer.asSlice(0, bytes);
    }

    /**
     * Sends the first {@code bytes} of the send buffer to the peer, tagged with this rank.
     *
     * @param bytes the message size
     * @return the request, already complete when UCX sent it at once
     */
    UcpRequest isend(int bytes) {
        return endpoint.sendTaggedNonBlocking(sendBuffer.address(), bytes, pair.rank, null);
    }

    /**
     * Posts a receive of up to {@code bytes} into the receive buffer, for a message tagged with the peer's rank.
     *
     * @param bytes the message size
     * @return the request
     */
    UcpRequest irecv(int bytes) {
        return worker.recvTaggedNonBlocking(recvBuffer.address(), bytes, pair.peer, -1L, null);
    }

    /**
     * Progresses the worker until the request completes.
     *
     * @param request   the request
     * @param what      what to name in an error, e.g. "receive"
     * @param iteration the iteration to name with it, or -1
     * @throws Failure if the request failed, or did not complete within the timeout
     */
    void await(UcpRequest request, String what, int iteration) {
        if (!request.isCompleted()) {
            long start = System.nanoTime();
            int polls = 0;
            while (!request.isCompleted()) {
                progress();
                if ((++polls & 0x3ff) == 0 && System.nanoTime() - start > timeoutNanos) {
                    throw new Failure(String.format(Locale.ROOT,
                            "jucx mode, rank %d: %s did not complete within %.1f s: is rank %d still running?",
                            pair.rank, name(what, iteration), timeoutNanos / 1e9, pair.peer), null);
                }
            }
        }
        int status = request.getStatus();
        if (status != UcsConstants.STATUS.UCS_OK) {
            throw new Failure("jucx mode, rank " + pair.rank + ": " + name(what, iteration)
                    + " failed with UCX status " + status, null);
        }
    }

    private static String name(String what, int iteration) {
        return iteration < 0 ? what : what + " of iteration " + iteration;
    }

    private void progress() {
        try {
            worker.progress();
        } catch (Exception e) {
            throw new Failure("jucx mode, rank " + pair.rank + ": UCP worker progress failed: " + e, e);
        }
    }

    /**
     * Closes the endpoint (flushing it), then, once both ranks got there, the worker and the buffers. A
     * collective: call it only after a clean run, when both ranks close; a failed rank leaves everything to
     * the process's exit (closing a worker with requests in flight is what crashes JUCX).
     *
     * <p>Over TCP a flushing close completes only when the peer's worker answers, so this worker keeps being
     * progressed, by a helper thread, while this thread waits in the bootstrap's barrier for the peer's close.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // A flush close that does not complete (the peer gone) fails here: the process's exit releases the rest.
        await(endpoint.closeNonBlockingFlush(), "closing the endpoint", -1);
        progressWhile(pair::barrier);
        worker.close();
        memory.deregister();
        arena.close();
    }

    /**
     * Runs {@code blocking} on this thread while a helper thread progresses the worker; the worker passes to the
     * helper when it starts and back when it has ended (its start and join order the two threads' uses).
     */
    private void progressWhile(Runnable blocking) {
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread helper = Thread.ofPlatform().name("jucx-progress-rank" + pair.rank).daemon().start(() -> {
            try {
                while (!done.get()) {
                    worker.progress();
                    Thread.onSpinWait();
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        try {
            blocking.run();
        } finally {
            done.set(true);
            try {
                helper.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Failure("jucx mode, rank " + pair.rank + ": interrupted while closing", e);
            }
        }
        if (failure.get() != null) {
            throw new Failure("jucx mode, rank " + pair.rank + ": UCP worker progress failed while closing: " + failure.get(),
                    failure.get());
        }
    }
}
