package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.concurrent.CpuShare;
import dev.gdasync.gdsync.concurrent.ThreadAffinity;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.gdsync.stream.StreamFailedException;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpDescQueue;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code sa}, the stream-asynchronous model: the stream (a host stream, or a CUDA stream with GPU buffers)
 * rings every send and waits for every receive itself; the CPU only prepares work ahead and reaps what the
 * stream has passed.
 *
 * <p>Per iteration the initiator's stream runs {@code produce, send, wait(recv), consume} and the responder's
 * {@code wait(recv), consume, produce, send}, where {@link Messages} says what producing and consuming queue
 * (host tasks that fill, check and compute; with GPU buffers the compute kernel and the copies). The CPU:
 * <ul>
 * <li>posts receives up to {@link #RECV_AHEAD} ahead ({@code irecv} prepares each receive's wait, so its
 *     completion is held for the stream), so a send never finds its receive missing;</li>
 * <li>prepares a window of {@link #WINDOW} iterations ({@code sendPrepare}; sends and receive waits into an
 *     {@link MpDescQueue}) and posts it to the stream as one batch, keeping {@link #WINDOWS_AHEAD} windows
 *     queued (with host tasks, the batch is cut at each task);</li>
 * <li>checks the oldest window's event every {@link #POLL_PARK_NANOS} ns of sleep, never spinning and never
 *     being woken by the stream (on a 2-CPU machine either would take a core from the streams, which play
 *     the ping-pong), and reaps and releases its requests with {@code waitAll}.</li>
 * </ul>
 * Each rank's host stream thread is pinned to its own CPU (rank 0 the first allowed CPU, rank 1 the second), unless
 * the host's CPUs are shared with more ranks than they number or another job pinned them ({@link CpuShare}).
 */
final class StreamLoop implements Loop {
    /**
     * Iterations per batch posted to the stream. 512 iterations stay queued, as in the gdsync ping-pong
     * (128 x 4), but in batches of 32: the CPU's share of each iteration (a descriptor queue checks every
     * added request against those already in it, {@code waitAll} walks each completion queue's requests)
     * grows with the batch, and on 2 CPUs every microsecond the CPU threads spend is taken from the
     * streams. Measured: 680 ns of CPU per iteration with batches of 128, 460 with 32.
     */
    static final int WINDOW = 32;
    /** Windows kept queued on the stream: 512 iterations. */
    static final int WINDOWS_AHEAD = 16;
    /** Receives kept posted ahead of the ping-pong (more than the queued windows need). */
    static final int RECV_AHEAD = 896;
    /** How long the CPU sleeps between checks of a window's event. */
    static final long POLL_PARK_NANOS = 250_000;

    private final Pair pair;
    private final Mp mp;
    private final Messages messages;
    private final MpRegistration reg;
    private final Stream stream;
    private final String where;
    private final int cpu;
    /** Whether the initiator's stream times each round trip: host streams do; a CUDA stream's host function costs microseconds. */
    private final boolean lapOnStream;

    StreamLoop(Pair pair, Messages messages, PingPongOptions options) {
        this.pair = pair;
        this.mp = pair.mp;
        this.messages = messages;
        this.reg = messages.reg();
        this.where = "sa mode, rank " + pair.rank;
        this.stream = messages.newStream("pingpong-sa-rank" + pair.rank);
        // A host stream runs on a thread of its own, which sa pins; a CUDA stream runs on the GPU.
        this.cpu = stream instanceof HostStream ? cpuFor(pair, options.pin()) : -1;
        this.lapOnStream = stream instanceof HostStream;
        if (cpu >= 0) {
            int c = cpu;
            // A task on the stream pins the stream's own thread (and records the pin for other jobs to see).
            stream.launch(() -> CpuShare.pinCurrentThread(c));
            stream.synchronize();
        }
    }

    /** @return the CPU this rank's stream thread runs on, or -1 when not pinned */
    int pinnedCpu() {
        return cpu;
    }

    /**
     * @return the CPU this rank's stream thread is pinned to: the rank's own free CPU of the host's CPU share (none
     * when the job's ranks and other jobs' outnumber the CPUs, or another job pinned them), or -1
     */
    static int cpuFor(Pair pair, boolean pin) {
        if (!pin || !ThreadAffinity.isSupported() || ThreadAffinity.allowedCpus().size() < 2) {
            return -1;
        }
        return CpuShare.cpuFor(pair.bootstrap.jobId(), pair.rank);
    }

    /** A window's requests and the event recorded after it. */
    private record Window(List<MpRequest> requests, int iterations, Event done) {
    }

    @Override
    public long run(int bytes, int iters, RoundTrips trips) {
        MemorySegment out = messages.send(bytes);
        MemorySegment in = messages.recv(bytes);
        int peer = pair.peer;
        boolean initiator = pair.initiator;
        ArrayDeque<MpRequest> posted = new ArrayDeque<>();
        ArrayDeque<Window> windows = new ArrayDeque<>();
        MpDescQueue queue = mp.descQueue();
        int recvPosted = 0;
        int queued = 0;
        int reaped = 0;
        // Receives first, then meet: the first ping finds the responder's receives posted.
        recvPosted = postReceives(posted, in, recvPosted, reaped, iters);
        pair.barrier();
        long start = System.nanoTime();
        trips.begin(start);
        while (reaped < iters) {
            recvPosted = postReceives(posted, in, recvPosted, reaped, iters);
            try {
                queued = queueWindows(posted, windows, queue, out, bytes, queued, iters, trips);
            } catch (StreamFailedException e) {
                // The stream failed while this thread queued more work on it (a check of an earlier window).
                throw failure(e, windows.peek());
            }
            Window w = windows.remove();
            // Sleep between checks: spinning, or blocking until the stream wakes us, would cost the streams
            // a core. The last window is the end of the run: wait for it without sleeping past it.
            if (queued < iters || !windows.isEmpty()) {
                while (!w.done.isDone()) {
                    LockSupport.parkNanos(POLL_PARK_NANOS);
                }
            }
            try {
                w.done.synchronize();
            } catch (StreamFailedException e) {
                throw failure(e, w);
            }
            mp.waitAll(w.requests);
            reaped += w.iterations;
        }
        long elapsed = System.nanoTime() - start;
        return initiator ? elapsed : 0;
    }

    /** Queues windows of iterations on the stream until {@link #WINDOWS_AHEAD} are queued; returns the new count. */
    private int queueWindows(ArrayDeque<MpRequest> posted, ArrayDeque<Window> windows, MpDescQueue queue,
                             MemorySegment out, int bytes, int queued, int iters, RoundTrips trips) {
        int peer = pair.peer;
        boolean initiator = pair.initiator;
        while (queued < iters && windows.size() < WINDOWS_AHEAD) {
            int n = Math.min(WINDOW, iters - queued);
            List<MpRequest> reqs = new ArrayList<>(2 * n);
            for (int k = 0; k < n; k++) {
                int i = queued + k;
                MpRequest recv = posted.remove();
                MpRequest send = mp.sendPrepare(out, peer, reg);
                if (initiator) {
                    messages.produceOn(queue, stream, bytes, i);
                    queue.addSend(send).addWaitRecv(recv);
                    messages.consumeOn(queue, stream, bytes, i);
                    if (lapOnStream) {
                        // The stream's thread marks the end of each round trip: a host task, a clock read and a store.
                        Messages.flush(queue, stream);
                        stream.launch(trips.lapTask());
                    }
                } else {
                    queue.addWaitRecv(recv);
                    messages.consumeOn(queue, stream, bytes, i);
                    messages.produceOn(queue, stream, bytes, i);
                    queue.addSend(send);
                }
                reqs.add(recv);
                reqs.add(send);
            }
            if (queue.size() > 0) {
                queue.postOnStream(stream);
            }
            windows.add(new Window(reqs, n, stream.record()));
            queued += n;
        }
        return queued;
    }

    private int postReceives(ArrayDeque<MpRequest> posted, MemorySegment in, int recvPosted, int reaped, int iters) {
        while (recvPosted < iters && recvPosted - reaped < RECV_AHEAD) {
            posted.add(mp.irecv(in, pair.peer, reg));
            recvPosted++;
        }
        return recvPosted;
    }

    /**
     * The cause of a stream failure (a validation mismatch, a wait timeout) as this loop's failure. A
     * receive that completed with an error (the peer died: its receives are flushed) also satisfies the
     * stream's wait, and the check after it then sees a stale buffer: name the failed receive first.
     */
    private RuntimeException failure(StreamFailedException e, Window w) {
        if (!(e.getCause() instanceof Pattern.MismatchException m)) {
            return e;
        }
        if (w == null) {
            return m;
        }
        try {
            MpRequest[] recvs = w.requests.stream().filter(r -> r.kind() == MpRequest.Kind.RECV).toArray(MpRequest[]::new);
            mp.progress(recvs);
            for (MpRequest r : recvs) {
                if (r.status() != null && r.status() != CompletionStatus.SUCCESS) {
                    return new IllegalStateException(where + ": " + r + " completed with an error (has the peer failed?);"
                            + " the data check after it then failed: " + m.getMessage(), m);
                }
            }
        } catch (RuntimeException ignored) {
            // the mismatch is the failure to report
        }
        return m;
    }

    @Override
    public void close() {
        stream.close();
    }
}
