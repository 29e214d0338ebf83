package dev.gdasync.apps.hpgmg;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.comm.Comm;
import dev.gdasync.libmp.comm.Datatype;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code sa}: stream-asynchronous, as the ASYNC path of the LibMP HPGMG port. Compute and communication are
 * queued on one host stream; the CPU posts the receives ahead and the stream does the rest in order: announce
 * the receives, pack, wait for each peer's announcement and ring the send, local blocks, wait for the
 * receives, unpack, wait for the sends (the send buffers are packed again later). The CPU never waits inside
 * a level; it reaps the requests when it synchronizes for a reduction.
 */
final class StreamTransport extends HostTransport {
    private final HostStream stream;
    private final List<MpRequest> pending = new ArrayList<>();

    StreamTransport(Mp mp, Comm comm, HostStream stream) {
        super(mp, comm);
        this.stream = stream;
    }

    @Override
    public String mode() {
        return "sa";
    }

    @Override
    public void compute(Runnable work) {
        stream.launch(work);
    }

    @Override
    public void run(CommPlan plan, Kernel pack, Kernel local, Kernel unpack) {
        if (!plan.remote()) {
            stream.launch(() -> Transport.runLocal(plan, local));
            return;
        }
        // Resolved here, before anything is queued: the stream's kernels must not make the registered memory.
        MemorySegment[] sendBufs = segments(plan.sends);
        MemorySegment[] recvBufs = segments(plan.recvs);
        List<MpRequest> recvs = new ArrayList<>(plan.recvs.length);
        List<MpRequest> sends = new ArrayList<>(plan.sends.length);
        for (int i = 0; i < plan.recvs.length; i++) {
            CommPlan.Message m = plan.recvs[i];
            recvs.add(comm.irecv(recvBufs[i], m.count(), Datatype.DOUBLE, m.peer));
            comm.sendReadyOnStream(m.peer, stream);
        }
        stream.launch(() -> {
            for (int i = 0; i < plan.sends.length; i++) {
                pack(plan.sends[i], pack);
                toSegment(plan.sends[i], sendBufs[i]);
            }
        });
        for (int i = 0; i < plan.sends.length; i++) {
            CommPlan.Message m = plan.sends[i];
            comm.waitReadyOnStream(m.peer, stream);
            sends.add(comm.isendOnStream(sendBufs[i], m.count(), Datatype.DOUBLE, m.peer, stream));
        }
        stream.launch(() -> Transport.runLocal(plan, local));
        if (!recvs.isEmpty()) {
            comm.waitAllOnStream(recvs, stream);
        }
        stream.launch(() -> {
            for (int i = 0; i < plan.recvs.length; i++) {
                fromSegment(recvBufs[i], plan.recvs[i]);
                unpack(plan.recvs[i], unpack);
            }
        });
        if (!sends.isEmpty()) {
            comm.waitAllOnStream(sends, stream);
        }
        pending.addAll(recvs);
        pending.addAll(sends);
        if (pending.size() > 1024) {
            sync();
        }
    }

    @Override
    public void runNow(CommPlan plan, Kernel pack, Kernel local, Kernel unpack) {
        sync();
        super.runNow(plan, pack, local, unpack);
    }

    @Override
    public void sync() {
        stream.synchronize();
        if (!pending.isEmpty()) {
            comm.waitAll(pending);
            pending.clear();
        }
    }

    @Override
    public void close() {
        stream.close();
    }
}
