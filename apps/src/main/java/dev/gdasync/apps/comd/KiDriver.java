package dev.gdasync.apps.comd;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.KiExecutor;
import dev.gdasync.ki.KiLaunch;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiExchangeWork;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpKiExport;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code ki}, the kernel-initiated model: each axis exchange is one launch of the fused exchange kernel
 * ({@code gds_ki_exchange}, docs/ki.md) on the host KI executor. The CPU prepares both sends (at the face's capacity:
 * the size is known only once the kernel packed) and exports them with the waits for the two receives posted a round
 * ahead; in the kernel a pack block packs each face and rings its send, the receiver block waits for both receives,
 * and an unpack block takes them in once the receiver opened the barrier and both faces are packed (the unpack
 * fills cells the pack reads). The CPU joins the launch and reaps.
 */
final class KiDriver extends SyncDriver {
    /** Blocks that pack and ring: one per rank is enough on a small machine (two faces per launch). */
    static final int PACK_BLOCKS = 1;
    /** Blocks that unpack. */
    static final int UNPACK_BLOCKS = 1;

    private static final int PACK_FAILED = Integer.MIN_VALUE;

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
        // The unpack blocks pass the barrier once both receives completed, which may be before this rank's pack blocks
        // are done reading the cells the unpack fills: they also wait until both faces are packed.
        AtomicInteger packed = new AtomicInteger();
        KiExchangeWork work = new KiExchangeWork() {
            @Override
            public void pack(int sendIndex) {
                try {
                    if (sendIndex == 0) {
                        halo.load(faceM, s.sendM);
                    } else {
                        halo.load(faceP, s.sendP);
                    }
                    packed.incrementAndGet();
                } catch (RuntimeException | Error e) {
                    packed.set(PACK_FAILED);
                    throw e;
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
                awaitPacked(packed);
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

    /** Spins, then yields, until both faces are packed; bounded by the wait timeout. */
    private void awaitPacked(AtomicInteger packed) {
        long deadline = System.nanoTime() + timeoutNs;
        for (int spins = 0; packed.get() < 2; spins++) {
            if (packed.get() == PACK_FAILED) {
                throw new IllegalStateException("not unpacking: packing this exchange failed");
            }
            if (spins < 1000) {
                Thread.onSpinWait();
            } else if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the pack blocks did not finish within " + timeoutNs / 1_000_000 + " ms");
            } else {
                Thread.yield();
            }
        }
    }

    @Override
    public void close() {
        slots.close();
    }
}
