package dev.gdasync.apps.pingpong;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;

/**
 * {@code host}, the MPI model: the CPU posts, sends and waits, synchronously ({@code irecv}, {@code isend},
 * {@code wait}). Rank 0 sends and waits for the reply; rank 1 waits for the message and replies. The CPU
 * produces each message before its send and consumes each received one ({@link Messages}): with GPU buffers,
 * producing is a kernel and a synchronization of its stream.
 *
 * <p>Each rank keeps one receive posted beyond the one it waits for, so the next receive is always posted
 * before the reply goes out, and posting it is off the critical path: the initiator posts it while its
 * message travels, the responder after its reply left. The send runs on the posting thread (the software
 * NIC copies into the peer's posted buffer at once), so {@code wait} on it finds its completion; {@code wait}
 * on the receive spins on the completion queue.
 */
final class HostLoop implements Loop {
    private final Pair pair;
    private final Mp mp;
    private final Messages messages;
    private final MpRegistration reg;

    HostLoop(Pair pair, Messages messages) {
        this.pair = pair;
        this.mp = pair.mp;
        this.messages = messages;
        this.reg = messages.reg();
    }

    @Override
    public long run(int bytes, int iters, RoundTrips trips) {
        MemorySegment out = messages.send(bytes);
        MemorySegment in = messages.recv(bytes);
        int peer = pair.peer;
        if (pair.initiator) {
            MpRequest recv = mp.irecv(in, peer, reg);
            pair.barrier(); // the responder's first receives are posted
            long start = System.nanoTime();
            trips.begin(start);
            for (int i = 0; i < iters; i++) {
                messages.produce(bytes, i);
                MpRequest send = mp.isend(out, peer, reg);
                // While this message travels: post the next reply's receive and complete the send (the
                // NIC ran it on this thread), so neither is between the reply's arrival and the next send.
                MpRequest next = i + 1 < iters ? mp.irecv(in, peer, reg) : null;
                mp.wait(send);
                mp.wait(recv);
                messages.consume(bytes, i, recv.byteCount());
                trips.lap();
                recv = next;
            }
            return System.nanoTime() - start;
        }
        // One receive posted ahead of the one awaited: the next ping finds its receive posted before the
        // reply to this one goes out, and posting it is not between a receive and its reply.
        MpRequest recv = mp.irecv(in, peer, reg);
        MpRequest next = iters > 1 ? mp.irecv(in, peer, reg) : null;
        pair.barrier();
        for (int i = 0; i < iters; i++) {
            mp.wait(recv);
            messages.consume(bytes, i, recv.byteCount());
            messages.produce(bytes, i);
            MpRequest send = mp.isend(out, peer, reg);
            recv = next;
            next = i + 2 < iters ? mp.irecv(in, peer, reg) : null;
            mp.wait(send);
        }
        return 0;
    }
}
