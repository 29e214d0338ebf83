package dev.gdasync.apps.comd;

import mpi.Intracomm;
import mpi.MPI;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * {@code mpj}: CoMD's own exchange on MPJ Express: per axis, pack both faces, then two blocking {@code Sendrecv}s (send
 * minus and receive from plus; send plus and receive from minus), as CoMD's sendReceiveParallel, then unpack.
 */
final class MpjDriver extends SyncDriver {
    private static final int TAG = 0;
    private final Intracomm world;
    private final byte[] sendM;
    private final byte[] sendP;
    private final byte[] recvM;
    private final byte[] recvP;
    private final int rank;

    MpjDriver(Intracomm world, List<Halo> halos) {
        super(halos);
        this.world = world;
        this.rank = world.Rank();
        long cap = 0;
        for (Halo h : halos) {
            for (int face = 0; face < 6; face++) {
                cap = Math.max(cap, h.capacity(face));
            }
        }
        sendM = new byte[(int) cap];
        sendP = new byte[(int) cap];
        recvM = new byte[(int) cap];
        recvP = new byte[(int) cap];
    }

    @Override
    public void beginRound() {
        // blocking exchanges post nothing ahead
    }

    @Override
    boolean exchangeRemote(Halo halo, int axis) {
        int faceM = 2 * axis;
        int faceP = faceM + 1;
        int nbrM = halo.nbrRank[faceM];
        int nbrP = halo.nbrRank[faceP];
        if (nbrM == rank && nbrP == rank) {
            return false;
        }
        int nM = halo.load(faceM, MemorySegment.ofArray(sendM));
        int nP = halo.load(faceP, MemorySegment.ofArray(sendP));
        int cap = (int) halo.capacity(faceP);
        world.Sendrecv(sendM, 0, nM, MPI.BYTE, nbrM, TAG, recvP, 0, cap, MPI.BYTE, nbrP, TAG);
        world.Sendrecv(sendP, 0, nP, MPI.BYTE, nbrP, TAG, recvM, 0, (int) halo.capacity(faceM), MPI.BYTE, nbrM, TAG);
        halo.unload(faceM, MemorySegment.ofArray(recvM));
        halo.unload(faceP, MemorySegment.ofArray(recvP));
        return true;
    }

    @Override
    public void close() {
        // heap buffers only
    }
}
