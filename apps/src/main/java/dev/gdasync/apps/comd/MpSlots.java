package dev.gdasync.apps.comd;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The libmp buffers and posted receives of a rank's exchanges, one slot per halo and axis that crosses to another
 * rank. Receives are posted one round ahead at the face's capacity: round {@code r + 1}'s when round {@code r} begins,
 * before any of its sends. A neighbor sends round {@code r + 1} only after it received this rank's round {@code r}
 * messages, so its sends always find their receives posted, with no ready handshake. Receive buffers alternate
 * between two sets by round parity; matching is per peer and FIFO, and receives are posted in the order the
 * neighbors send (per axis: from the plus neighbor, then from the minus neighbor).
 */
final class MpSlots implements AutoCloseable {
    /** One halo and axis: the send buffers of both faces and two rounds of receive buffers and requests. */
    static final class Slot {
        final Halo halo;
        final int axis;
        final int nbrM;
        final int nbrP;
        final MemorySegment sendM;
        final MemorySegment sendP;
        final MemorySegment[] recvM = new MemorySegment[2];
        final MemorySegment[] recvP = new MemorySegment[2];
        final MpRequest[] postedM = new MpRequest[2];
        final MpRequest[] postedP = new MpRequest[2];
        MemorySegment table;

        Slot(Halo halo, int axis, MemorySegment mem, long stride) {
            this.halo = halo;
            this.axis = axis;
            this.nbrM = halo.nbrRank[2 * axis];
            this.nbrP = halo.nbrRank[2 * axis + 1];
            long capM = halo.capacity(2 * axis);
            long capP = halo.capacity(2 * axis + 1);
            sendM = mem.asSlice(0, capM);
            sendP = mem.asSlice(stride, capP);
            for (int par = 0; par < 2; par++) {
                recvM[par] = mem.asSlice((2 + 2L * par) * stride, capM);
                recvP[par] = mem.asSlice((3 + 2L * par) * stride, capP);
            }
        }
    }

    private final Mp mp;
    private final int rounds;
    private final List<Halo> halos;
    private final Slot[] slots;
    private final List<MemorySegment> memory = new ArrayList<>();
    private final List<MpRegistration> regs = new ArrayList<>();
    final MpRegistration[] regOf;
    private int current = -1;

    /**
     * Allocates the slots and posts round 0's receives, then meets the other ranks (collective).
     *
     * @param mp     the Mp
     * @param halos  the halos, in the order a round exchanges them
     * @param rounds how many rounds the run has (no receive is posted past the last)
     */
    MpSlots(Mp mp, List<Halo> halos, int rounds) {
        this.mp = mp;
        this.rounds = rounds;
        this.halos = List.copyOf(halos);
        this.slots = new Slot[3 * halos.size()];
        this.regOf = new MpRegistration[slots.length];
        int rank = mp.rank();
        for (int h = 0; h < halos.size(); h++) {
            Halo halo = halos.get(h);
            for (int axis = 0; axis < 3; axis++) {
                if (halo.nbrRank[2 * axis] == rank && halo.nbrRank[2 * axis + 1] == rank) {
                    continue;
                }
                long stride = (Math.max(halo.capacity(2 * axis), halo.capacity(2 * axis + 1)) + 4095) & -4096L;
                MemorySegment mem = mp.allocate(6 * stride);
                memory.add(mem);
                MpRegistration reg = mp.register(mem);
                regs.add(reg);
                slots[3 * h + axis] = new Slot(halo, axis, mem, stride);
                regOf[3 * h + axis] = reg;
            }
        }
        if (rounds > 0) {
            post(0);
        }
        mp.barrier();
    }

    /** @return the slot of a halo and axis, or null when the axis stays on this rank */
    Slot slot(Halo halo, int axis) {
        return slots[3 * halos.indexOf(halo) + axis];
    }

    /** @return the registration of a slot's buffers */
    MpRegistration reg(Slot s) {
        return regOf[3 * halos.indexOf(s.halo) + s.axis];
    }

    /** @return the round in progress */
    int round() {
        return current;
    }

    /** Starts the next round: posts the receives of the round after it. */
    void beginRound() {
        current++;
        if (current >= rounds) {
            throw new IllegalStateException("round " + current + " of a run planned for " + rounds + " rounds");
        }
        if (current + 1 < rounds) {
            post(current + 1);
        }
    }

    private void post(int round) {
        int par = round & 1;
        for (Slot s : slots) {
            if (s != null) {
                MpRegistration reg = reg(s);
                s.postedP[par] = mp.irecv(s.recvP[par], s.nbrP, reg);
                s.postedM[par] = mp.irecv(s.recvM[par], s.nbrM, reg);
            }
        }
    }

    @Override
    public void close() {
        for (Slot s : slots) {
            if (s != null && s.table != null) {
                mp.free(s.table);
            }
        }
        for (MpRegistration r : regs) {
            mp.deregister(r);
        }
        for (MemorySegment m : memory) {
            mp.free(m);
        }
    }
}
