package dev.gdasync.apps.comd;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRequest;

import java.util.List;

/**
 * {@code host}, libmp's MPI model: the CPU packs both faces, sends each with {@code isend} (the exact bytes packed),
 * waits for the two receives posted a round ahead ({@link MpSlots}), unpacks, and waits for its sends.
 */
final class HostDriver extends SyncDriver {
    private final Mp mp;
    private final MpSlots slots;

    HostDriver(Mp mp, List<Halo> halos, int rounds) {
        super(halos);
        this.mp = mp;
        this.slots = new MpSlots(mp, halos, rounds);
    }

    @Override
    public void beginRound() {
        slots.beginRound();
    }

    @Override
    boolean exchangeRemote(Halo halo, int axis) {
        MpSlots.Slot s = slots.slot(halo, axis);
        if (s == null) {
            return false;
        }
        int par = slots.round() & 1;
        int faceM = 2 * axis;
        int faceP = faceM + 1;
        int nM = halo.load(faceM, s.sendM);
        int nP = halo.load(faceP, s.sendP);
        MpRequest sendM = mp.isend(s.sendM.asSlice(0, nM), s.nbrM, slots.reg(s));
        MpRequest sendP = mp.isend(s.sendP.asSlice(0, nP), s.nbrP, slots.reg(s));
        mp.wait(s.postedP[par]);
        mp.wait(s.postedM[par]);
        halo.unload(faceM, s.recvM[par]);
        halo.unload(faceP, s.recvP[par]);
        mp.wait(sendM);
        mp.wait(sendP);
        return true;
    }

    @Override
    public void close() {
        slots.close();
    }
}
