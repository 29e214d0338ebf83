package dev.gdasync.apps.gdsyncpingpong;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.HostStream;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/** The timed ping-pong loops, one per ring mode, run by both sides. */
final class PingPongLoops {
    /** Iterations handed to the stream as one descriptor list. */
    static final int WINDOW = 128;
    /** Windows kept queued on the stream. */
    static final int WINDOWS_AHEAD = 4;
    /** Receives kept posted ahead of the ping-pong. */
    static final int RECV_AHEAD = 896;
    /** How long the CPU sleeps between checks of a window's event. */
    static final long POLL_PARK_NANOS = 250_000;

    private PingPongLoops() {
    }

    /** One timed loop of the CPU-rung ping-pong; the initiator returns the elapsed nanoseconds. */
    static long cpu(Side s, int iters, boolean initiator) {
        QueuePair qp = s.qp("cpu");
        long start = System.nanoTime();
        if (initiator) {
            for (int i = 0; i < iters; i++) {
                qp.postRecv(s.recv);
                qp.postSend(s.send);
                s.awaitOne(qp.recvCq());
                s.awaitOne(qp.sendCq());
            }
        } else {
            // The first receive was posted before the run started.
            for (int i = 0; i < iters; i++) {
                s.awaitOne(qp.recvCq());
                if (i + 1 < iters) {
                    qp.postRecv(s.recv);
                }
                qp.postSend(s.send);
                s.awaitOne(qp.sendCq());
            }
        }
        return System.nanoTime() - start;
    }

    /**
     * One timed loop of the stream-rung ping-pong. The CPU prepares windows of iterations ahead and
     * hands them to the stream; the stream rings each send and waits for each receive itself. The CPU
     * only reaps a window's completions after the stream passed it.
     */
    static long stream(Side s, HostStream stream, int iters, boolean initiator, WaitRequest firstWait) {
        QueuePair qp = s.qp("stream");
        long start = System.nanoTime();
        List<Event> events = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        ArrayDeque<WaitRequest> recvWaits = new ArrayDeque<>();
        int done = 0;
        int queued = 0;
        int reaped = 0;
        long recvReaped = 0;
        long sendReaped = 0;
        // The responder posted its first receive, and prepared its wait, before the run.
        int recvPosted = 0;
        if (firstWait != null) {
            recvWaits.add(firstWait);
            recvPosted = 1;
        }
        while (reaped < iters) {
            // Receives go up far ahead, as applications pre-post them, so a send never waits for one.
            // Each receive's wait is prepared with it (as LibMP's irecv does): the CQE is then held for
            // the stream's wait and the CPU cannot reap it first.
            while (recvPosted < iters && recvPosted - reaped < RECV_AHEAD) {
                qp.postRecv(s.recv);
                recvWaits.add(qp.prepareWaitCq(qp.recvCq()));
                recvPosted++;
            }
            // Keep WINDOWS_AHEAD windows queued, so the stream never waits for the CPU to prepare.
            while (queued < iters && events.size() - done < WINDOWS_AHEAD) {
                int n = Math.min(WINDOW, iters - queued);
                // A window goes to the stream as one descriptor list, one batch of memops.
                List<Descriptor> window = new ArrayList<>(2 * n);
                for (int i = 0; i < n; i++) {
                    WaitRequest wait = recvWaits.remove();
                    SendRequest send = qp.prepareSend(s.send);
                    if (initiator) {
                        window.add(new Descriptor.Send(send));
                        window.add(new Descriptor.Wait(wait));
                    } else {
                        window.add(new Descriptor.Wait(wait));
                        window.add(new Descriptor.Send(send));
                    }
                }
                stream.post(window);
                events.add(stream.record());
                sizes.add(n);
                queued += n;
            }
            // Poll the event with short sleeps: a CPU that spins or is woken by the stream would take a
            // core from the streams, which do the ping-pong.
            Event event = events.get(done);
            while (!event.isDone()) {
                LockSupport.parkNanos(POLL_PARK_NANOS);
            }
            event.synchronize();
            int n = sizes.get(done);
            // Reap at least this window; completions of the next one may come along.
            while (recvReaped < reaped + n) {
                recvReaped += s.reap(qp.recvCq());
            }
            while (sendReaped < reaped + n) {
                sendReaped += s.reap(qp.sendCq());
            }
            reaped += n;
            done++;
        }
        return System.nanoTime() - start;
    }
}
