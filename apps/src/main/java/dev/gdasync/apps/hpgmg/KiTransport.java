package dev.gdasync.apps.hpgmg;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;
import dev.gdasync.ki.KiExecutor;
import dev.gdasync.ki.KiLaunch;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiExchangeWork;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpKiExport;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.comm.Comm;
import dev.gdasync.libmp.comm.Datatype;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code ki}: kernel-initiated, as the GPU-initiated path of the LibMP HPGMG port. The CPU posts the receives,
 * announces them, waits for the peers' announcements (the exchange template has no ready wait before a
 * send, see docs/hpgmg.md) and exports the sends and the receive completions into a KI table; one fused
 * exchange launch on the KI executor then packs and rings each send (pack blocks), runs the local blocks as
 * interior work (all blocks), waits for the receives (receiver block) and unpacks (unpack block).
 */
final class KiTransport extends HostTransport {
    private final KiExecutor executor;
    private final long timeoutNs;
    private MemorySegment table;
    private long tableBytes;

    KiTransport(Mp mp, Comm comm, KiExecutor executor) {
        super(mp, comm);
        this.executor = executor;
        this.timeoutNs = mp.config().waitTimeout().toNanos();
    }

    @Override
    public String mode() {
        return "ki";
    }

    private MemorySegment table(int sends, int waits) {
        long bytes = KiTableLayout.bytes(Math.max(1, sends), Math.max(1, waits));
        if (table == null || tableBytes < bytes) {
            if (table != null) {
                mp.free(table);
            }
            table = mp.allocate(bytes);
            tableBytes = bytes;
        }
        return table;
    }

    @Override
    public void run(CommPlan plan, Kernel pack, Kernel local, Kernel unpack) {
        if (!plan.remote()) {
            Transport.runLocal(plan, local);
            return;
        }
        // Resolved on this thread: the executor's blocks must not make the registered memory (see segment).
        MemorySegment[] sendBufs = segments(plan.sends);
        MemorySegment[] recvBufs = segments(plan.recvs);
        List<MpRequest> recvs = new ArrayList<>(plan.recvs.length);
        for (int i = 0; i < plan.recvs.length; i++) {
            CommPlan.Message m = plan.recvs[i];
            recvs.add(comm.irecv(recvBufs[i], m.count(), Datatype.DOUBLE, m.peer));
            comm.sendReady(m.peer);
        }
        for (CommPlan.Message m : plan.sends) {
            comm.waitReady(m.peer);
        }
        MpKiExport export = mp.kiExport(executor);
        List<MpRequest> all = new ArrayList<>(recvs);
        for (int i = 0; i < plan.sends.length; i++) {
            CommPlan.Message m = plan.sends[i];
            all.add(comm.prepareIsend(export, sendBufs[i], m.count(), Datatype.DOUBLE, m.peer));
        }
        comm.prepareWaitAll(export, recvs);
        KiTable t = export.writeTo(table(plan.sends.length, recvs.size()));
        KiExchangeWork work = new KiExchangeWork() {
            @Override
            public void pack(int sendIndex) {
                CommPlan.Message m = plan.sends[sendIndex];
                HostTransport.pack(m, pack);
                toSegment(m, sendBufs[sendIndex]);
            }

            @Override
            public int interiorChunks() {
                return plan.local.length;
            }

            @Override
            public void interior(int chunk) {
                local.apply(plan.local[chunk]);
            }

            @Override
            public int unpackCount() {
                return plan.recvs.length;
            }

            @Override
            public void unpack(int index) {
                CommPlan.Message m = plan.recvs[index];
                fromSegment(recvBufs[index], m);
                HostTransport.unpack(m, unpack);
            }
        };
        int packBlocks = Math.max(1, plan.sends.length);
        KiLaunch launch = executor.exchange(t, new KiExchange(packBlocks, plan.recvs.length > 0 ? 1 : 0, work), timeoutNs);
        launch.join();
        comm.waitAll(all);
    }

    @Override
    public void close() {
        executor.close();
    }
}
