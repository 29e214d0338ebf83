package dev.gdasync.apps.comd;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.KiExchange;
import dev.gdasync.ki.KiExchangeWork;
import dev.gdasync.ki.KiExecutor;
import dev.gdasync.ki.KiLaunch;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpKiExport;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * {@code ki}, the kernel-initiated model: each axis exchange is one launch of the fused exchange kernel
 * ({@code gds_ki_exchange}, docs/ki.md) on the host KI executor. The CPU prepares both sends (at the face's capacity:
 * the size is known only once the kernel packed) and exports them with the waits for the two receives posted a round
 * ahead; in the kernel a pack block packs each face and rings its send, the receiver block waits for both receives,
 * and an unpack block takes them in once the receiver opened the barrier. The CPU joins the launch and reaps.
 */
final class KiDriver extends SyncDriver {
    /** Blocks that pack and ring: one per rank is enough on a small machine (two faces per launch). */
    static final int PACK_BLOCKS = 1;
    /** Blocks that unpack. */
    static final int UNPACK_BLOCKS = 1;

    private final Mp mp;
    private final MpSlots slots;
    private final KiExecutor executor;
    private final long timeoutNs;

    KiDriver(Mp mp, KiExecutor executor, List<Halo> halos, int rounds) {
        super(halos);
        this.mp = mp;
        this.executor = executor;
        this.slots = new MpSlots(mp, halos, rounds);
        this.timeoutNs = mp.config().waitTimeout().toNanos();
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
        MpRequest sendM = mp.sendPrepare(s.sendM, s.nbrM, slots.reg(s));
        MpRequest sendP = mp.sendPrepare(s.sendP, s.nbrP, slots.reg(s));
        MpRequest recvP = s.postedP[par];
        MpRequest recvM = s.postedM[par];
        MpKiExport ki = mp.kiExport(executor);
        ki.addSend(sendM);
        ki.addSend(sendP);
        ki.addWait(recvP);
        ki.addWait(recvM);
        if (s.table == null) {
            s.table = mp.allocate(ki.byteSize());
        }
        KiTable table = ki.writeTo(s.table);
        MemorySegment inM = s.recvM[par];
        MemorySegment inP = s.recvP[par];
        KiExchangeWork work = new KiExchangeWork() {
            @Override
            public void pack(int sendIndex) {
                if (sendIndex == 0) {
                    halo.load(faceM, s.sendM);
                } else {
                    halo.load(faceP, s.sendP);
                }
            }

            @Override
            public int interiorChunks() {
                return 0;
            }

            @Override
            public void interior(int chunk) {
                // no interior work: the next axis needs this one's halo
            }

            @Override
            public int unpackCount() {
                return 2;
            }

            @Override
            public void unpack(int index) {
                if (index == 0) {
                    halo.unload(faceM, inM);
                } else {
                    halo.unload(faceP, inP);
                }
            }
        };
        KiLaunch launch = executor.exchange(table, new KiExchange(PACK_BLOCKS, UNPACK_BLOCKS, work), timeoutNs);
        launch.join();
        mp.waitAll(recvP, recvM, sendM, sendP);
        return true;
    }

    @Override
    public void close() {
        slots.close();
    }
}
