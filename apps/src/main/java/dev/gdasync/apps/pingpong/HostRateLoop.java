package dev.gdasync.apps.pingpong;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code host} message rate, the MPI model (OSU's {@code osu_mbw_mr} with one pair): per window rank 0 calls
 * {@code isend} {@code window} times, waits for all of them, then for the acknowledgement; rank 1 waits for the
 * window's receives, sends the acknowledgement (4 bytes), and posts the receives of the window after the next.
 *
 * <p>Receives are posted two windows ahead, so no send finds its receive missing (the software NIC would stall it and
 * retry, where MPI would buffer it as unexpected), and rank 1 acknowledges a window as soon as its receives completed,
 * then posts the receives of the window after the next while rank 0 sends the next: reposting is off the critical path,
 * as it is for an MPI library whose unexpected-message queue takes early sends. Every message of a window lands in the
 * same receive buffer, as in OSU's benchmark. The acknowledgement travels in the first bytes of the buffers the other
 * direction leaves unused.
 */
final class HostRateLoop implements Loop {
    /** The acknowledgement's size. */
    static final int ACK_BYTES = 4;

    private final Pair pair;
    private final Mp mp;
    private final int window;

    HostRateLoop(Pair pair, int window) {
        this.pair = pair;
        this.mp = pair.mp;
        this.window = window;
    }

    @Override
    public long run(int bytes, int iters, RoundTrips trips) {
        MemorySegment out = pair.send(bytes);
        MemorySegment in = pair.recv(bytes);
        int peer = pair.peer;
        List<MpRequest> reqs = new ArrayList<>(window);
        if (pair.initiator) {
            MemorySegment ack = pair.recv(ACK_BYTES);
            MpRequest ackRecv = mp.irecv(ack, peer, pair.reg);
            pair.barrier(); // the first window's receives are posted
            long start = System.nanoTime();
            trips.begin(start);
            for (int i = 0; i < iters; i++) {
                for (int k = 0; k < window; k++) {
                    reqs.add(mp.isend(out, peer, pair.reg));
                }
                mp.waitAll(reqs);
                reqs.clear();
                mp.wait(ackRecv);
                // The next acknowledgement comes only after the next window: its receive is posted in time.
                ackRecv = i + 1 < iters ? mp.irecv(ack, peer, pair.reg) : null;
                trips.lap();
            }
            return System.nanoTime() - start;
        }
        MemorySegment ack = pair.send(ACK_BYTES);
        List<MpRequest> current = postWindow(in, new ArrayList<>(window));
        List<MpRequest> next = new ArrayList<>(window);
        if (iters > 1) {
            postWindow(in, next);
        }
        pair.barrier();
        for (int i = 0; i < iters; i++) {
            mp.waitAll(current);
            current.clear();
            // The next window's receives are posted already: acknowledge at once, and post the window after it while
            // the sender sends the next one (off the critical path, as an MPI library's unexpected-message queue is).
            MpRequest sent = mp.isend(ack, peer, pair.reg);
            if (i + 2 < iters) {
                postWindow(in, current);
            }
            List<MpRequest> t = current;
            current = next;
            next = t;
            mp.wait(sent);
        }
        return 0;
    }

    private List<MpRequest> postWindow(MemorySegment in, List<MpRequest> into) {
        for (int k = 0; k < window; k++) {
            into.add(mp.irecv(in, pair.peer, pair.reg));
        }
        return into;
    }
}
