package dev.gdasync.apps.pingpong;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.bootstrap.Bootstrap;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The two ranks of the ping-pong: this rank's {@link Mp}, its send and receive buffers (one registration),
 * and the out-of-band steps both ranks take in lockstep through the bootstrap.
 *
 * <p>Rank 0 is the initiator: it sends first, times the runs and decides when a warm-up has lasted long
 * enough. Rank 1 is the responder.
 */
final class Pair implements AutoCloseable {
    final Bootstrap bootstrap;
    final Mp mp;
    final int rank;
    final int peer;
    final boolean initiator;
    final MemorySegment sendBuffer;
    final MemorySegment recvBuffer;
    final MpRegistration reg;

    Pair(Bootstrap bootstrap, Mp mp, int maxBytes) {
        this.bootstrap = bootstrap;
        this.mp = mp;
        this.rank = mp.rank();
        this.peer = 1 - rank;
        this.initiator = rank == 0;
        long slot = (maxBytes + 4095L) & -4096L;
        MemorySegment mem = mp.allocate(2 * slot);
        this.reg = mp.register(mem);
        this.sendBuffer = mem.asSlice(0, slot);
        this.recvBuffer = mem.asSlice(slot, slot);
    }

    /** @return the first {@code bytes} of the send buffer */
    MemorySegment send(int bytes) {
        return sendBuffer.asSlice(0, bytes);
    }

    /** @return the first {@code bytes} of the receive buffer */
    MemorySegment recv(int bytes) {
        return recvBuffer.asSlice(0, bytes);
    }

    /** Returns once both ranks are here. */
    void barrier() {
        bootstrap.barrier();
    }

    /**
     * Rank 0's decision, known to both ranks when this returns (a collective).
     *
     * @param mine rank 0's decision; ignored on rank 1
     * @return rank 0's decision
     */
    boolean decide(boolean mine) {
        List<byte[]> all = bootstrap.allGather(initiator ? new byte[]{(byte) (mine ? 1 : 0)} : new byte[0]);
        byte[] root = all.get(0);
        if (root.length != 1) {
            throw new IllegalStateException("rank 0 sent no decision: are both ranks running the same pingpong arguments?");
        }
        return root[0] == 1;
    }

    /**
     * Whether every rank says yes, on both ranks alike (outside timed runs: it goes through the bootstrap).
     *
     * @param mine this rank's answer
     * @return whether both ranks answered yes
     */
    boolean allAgree(boolean mine) {
        List<byte[]> all = bootstrap.allGather(new byte[]{(byte) (mine ? 1 : 0)});
        for (byte[] b : all) {
            if (b.length != 1) {
                throw new IllegalStateException("a rank sent no answer: are both ranks running the same arguments?");
            }
            if (b[0] != 1) {
                return false;
            }
        }
        return true;
    }

    /** Closes the Mp (a barrier, then the NIC). */
    @Override
    public void close() {
        mp.close();
    }
}
