package dev.gdasync.apps.hpgmg;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.comm.Comm;
import dev.gdasync.libmp.comm.Datatype;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code host}: the MPI model on libmp, as the COMM path of the LibMP HPGMG port. The CPU posts every receive
 * and announces it to the peer (the comm layer's ready handshake), packs, waits for each peer's
 * announcement and sends, runs the local blocks, waits for everything and unpacks.
 */
class HostTransport implements Transport {
    final Mp mp;
    final Comm comm;

    HostTransport(Mp mp, Comm comm) {
        this.mp = mp;
        this.comm = comm;
    }

    @Override
    public String mode() {
        return "host";
    }

    @Override
    public int rank() {
        return mp.rank();
    }

    @Override
    public int size() {
        return mp.size();
    }

    @Override
    public void compute(Runnable work) {
        work.run();
    }

    /**
     * The registered memory of a message, made on first use. Call it on the rank's own thread only: the Mp is
     * driven by one thread, and a kernel that ran it on a stream or executor thread would race with the CPU's
     * first use of the same message (two allocations, the kernel packing one while the send rings the other).
     * Kernels take the segments from {@link #segments}, resolved before they are queued.
     *
     * @return the registered memory of a message
     */
    MemorySegment segment(CommPlan.Message m) {
        if (m.state == null) {
            m.state = mp.allocate(Math.max(8L, 8L * m.count()));
        }
        return (MemorySegment) m.state;
    }

    /** @return the registered memory of each message, made now on this (the rank's) thread where missing */
    MemorySegment[] segments(CommPlan.Message[] messages) {
        MemorySegment[] out = new MemorySegment[messages.length];
        for (int i = 0; i < messages.length; i++) {
            out[i] = segment(messages[i]);
        }
        return out;
    }

    static void toSegment(CommPlan.Message m, MemorySegment seg) {
        MemorySegment.copy(m.buf, 0, seg, ValueLayout.JAVA_DOUBLE, 0, m.count());
    }

    static void fromSegment(MemorySegment seg, CommPlan.Message m) {
        MemorySegment.copy(seg, ValueLayout.JAVA_DOUBLE, 0, m.buf, 0, m.count());
    }

    static void pack(CommPlan.Message m, Kernel pack) {
        for (Block b : m.blocks) {
            pack.apply(b);
        }
    }

    static void unpack(CommPlan.Message m, Kernel unpack) {
        for (Block b : m.blocks) {
            unpack.apply(b);
        }
    }

    @Override
    public void run(CommPlan plan, Kernel pack, Kernel local, Kernel unpack) {
        runNow(plan, pack, local, unpack);
    }

    @Override
    public void runNow(CommPlan plan, Kernel pack, Kernel local, Kernel unpack) {
        if (!plan.remote()) {
            Transport.runLocal(plan, local);
            return;
        }
        List<MpRequest> reqs = new ArrayList<>(plan.sends.length + plan.recvs.length);
        for (CommPlan.Message m : plan.recvs) {
            reqs.add(comm.irecv(segment(m), m.count(), Datatype.DOUBLE, m.peer));
            comm.sendReady(m.peer);
        }
        for (CommPlan.Message m : plan.sends) {
            pack(m, pack);
            toSegment(m, segment(m));
        }
        for (CommPlan.Message m : plan.sends) {
            comm.waitReady(m.peer);
            reqs.add(comm.isend(segment(m), m.count(), Datatype.DOUBLE, m.peer));
        }
        Transport.runLocal(plan, local);
        comm.waitAll(reqs);
        for (CommPlan.Message m : plan.recvs) {
            fromSegment(segment(m), m);
            unpack(m, unpack);
        }
    }

    @Override
    public void sync() {
    }

    @Override
    public void barrier() {
        mp.barrier();
    }

    @Override
    public void close() {
    }
}
