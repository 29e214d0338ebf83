package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpDescQueue;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code sa} message rate: rank 0's host stream rings a window of sends, then waits for the acknowledgement; rank 1's
 * stream waits for the window's receives, then rings the acknowledgement. The CPU only prepares and reaps, as in the
 * ping-pong's {@link StreamLoop}:
 * <ul>
 * <li>it posts receives ahead (rank 1 the windows' messages, rank 0 the acknowledgements), one window more than it
 *     queues, so no send finds its receive missing;</li>
 * <li>it queues windows on the stream as one batch each ({@code sendPrepare}, sends and waits in an
 *     {@link MpDescQueue}), {@link #queuedWindows} of them ahead, followed on rank 0 by a host task that marks the
 *     window's end ({@link RoundTrips});</li>
 * <li>it checks the oldest window's event every {@link #PARK_NANOS} ns of sleep and reaps its requests with
 *     {@code waitAll}.</li>
 * </ul>
 */
final class StreamRateLoop implements Loop {
    /**
     * Sends kept queued on rank 0's stream, about: the windows ahead are this many messages. At the stream's
     * 8-byte pace (about 0.16 µs a message) 512 messages last about 80 µs, several of the CPU's sleeps, so the
     * stream does not run dry between two looks; 256 with the ping-pong's 250 µs sleep left it idle most of the
     * time (docs/bench/msgrate.md).
     */
    static final int MESSAGES_AHEAD = 512;
    /**
     * How long the CPU sleeps between checks of the oldest window: shorter than the ping-pong's, since here the
     * stream drains windows as fast as it can and the CPU must refill them before the queue runs out.
     */
    static final long PARK_NANOS = 20_000;

    private final Pair pair;
    private final Mp mp;
    private final int window;
    private final int queuedWindows;
    private final Stream stream;
    private final int cpu;

    StreamRateLoop(Pair pair, int window, boolean pin) {
        this.pair = pair;
        this.mp = pair.mp;
        this.window = window;
        this.queuedWindows = Math.max(2, MESSAGES_AHEAD / window);
        this.stream = HostStream.create("msgrate-sa-rank" + pair.rank);
        this.cpu = StreamLoop.cpuFor(pair, pin);
        if (cpu >= 0) {
            int c = cpu;
            stream.launch(() -> dev.gdasync.gdsync.concurrent.CpuShare.pinCurrentThread(c));
            stream.synchronize();
        }
    }

    /** @return the CPU this rank's stream thread runs on, or -1 when not pinned */
    int pinnedCpu() {
        return cpu;
    }

    /** A window's requests and the event recorded after it. */
    private record Window(List<MpRequest> requests, Event done) {
    }

    @Override
    public long run(int bytes, int iters, RoundTrips trips) {
        boolean initiator = pair.initiator;
        MemorySegment out = initiator ? pair.send(bytes) : pair.send(HostRateLoop.ACK_BYTES);
        MemorySegment in = initiator ? pair.recv(HostRateLoop.ACK_BYTES) : pair.recv(bytes);
        // Rank 0 receives one acknowledgement per window, rank 1 a window of messages.
        int recvsPerWindow = initiator ? 1 : window;
        ArrayDeque<MpRequest> posted = new ArrayDeque<>();
        ArrayDeque<Window> windows = new ArrayDeque<>();
        MpDescQueue queue = mp.descQueue();
        int postedWindows = postReceives(posted, in, recvsPerWindow, 0, 0, iters);
        int queued = 0;
        int reaped = 0;
        pair.barrier();
        long start = System.nanoTime();
        trips.begin(start);
        while (reaped < iters) {
            postedWindows = postReceives(posted, in, recvsPerWindow, postedWindows, reaped, iters);
            while (queued < iters && windows.size() < queuedWindows) {
                List<MpRequest> reqs = new ArrayList<>(window + 1);
                if (initiator) {
                    for (int k = 0; k < window; k++) {
                        MpRequest send = mp.sendPrepare(out, pair.peer, pair.reg);
                        queue.addSend(send);
                        reqs.add(send);
                    }
                    MpRequest ack = posted.remove();
                    queue.addWaitRecv(ack);
                    reqs.add(ack);
                    queue.postOnStream(stream);
                    stream.launch(trips.lapTask());
                } else {
                    for (int k = 0; k < window; k++) {
                        MpRequest recv = posted.remove();
                        queue.addWaitRecv(recv);
                        reqs.add(recv);
                    }
                    MpRequest ack = mp.sendPrepare(out, pair.peer, pair.reg);
                    queue.addSend(ack);
                    reqs.add(ack);
                    queue.postOnStream(stream);
                }
                windows.add(new Window(reqs, stream.record()));
                queued++;
            }
            Window w = windows.remove();
            // Sleep between checks, as the ping-pong's CPU does: spinning would take a core from the streams.
            if (queued < iters || !windows.isEmpty()) {
                while (!w.done.isDone()) {
                    LockSupport.parkNanos(PARK_NANOS);
                }
            }
            w.done.synchronize();
            mp.waitAll(w.requests);
            reaped++;
        }
        long elapsed = System.nanoTime() - start;
        return initiator ? elapsed : 0;
    }

    /** Posts receives for windows up to one beyond those that may be queued; returns the windows posted. */
    private int postReceives(ArrayDeque<MpRequest> posted, MemorySegment in, int perWindow, int postedWindows, int reaped,
                             int iters) {
        while (postedWindows < iters && postedWindows - reaped < queuedWindows + 1) {
            for (int k = 0; k < perWindow; k++) {
                posted.add(mp.irecv(in, pair.peer, pair.reg));
            }
            postedWindows++;
        }
        return postedWindows;
    }

    @Override
    public void close() {
        stream.close();
    }
}
