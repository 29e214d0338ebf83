package dev.gdasync.apps.hpgmg;

import mpi.Intracomm;
import mpi.MPI;
import mpi.Request;

/**
 * {@code mpj}: upstream's MPI path on MPJ Express: Irecv every message, pack, Isend, local blocks, Waitall,
 * unpack. One tag: MPI keeps messages between two ranks in order, and both sides run plans in one order.
 */
final class MpjTransport implements Transport {
    private static final int TAG = 14;
    private final Intracomm world;

    MpjTransport(Intracomm world) {
        this.world = world;
    }

    @Override
    public String mode() {
        return "mpj";
    }

    @Override
    public int rank() {
        return world.Rank();
    }

    @Override
    public int size() {
        return world.Size();
    }

    @Override
    public void compute(Runnable work) {
        work.run();
    }

    @Override
    public void run(CommPlan plan, Kernel pack, Kernel local, Kernel unpack) {
        if (!plan.remote()) {
            Transport.runLocal(plan, local);
            return;
        }
        Request[] reqs = new Request[plan.recvs.length + plan.sends.length];
        int n = 0;
        for (CommPlan.Message m : plan.recvs) {
            reqs[n++] = world.Irecv(m.buf, 0, m.count(), MPI.DOUBLE, m.peer, TAG);
        }
        for (CommPlan.Message m : plan.sends) {
            HostTransport.pack(m, pack);
            reqs[n++] = world.Isend(m.buf, 0, m.count(), MPI.DOUBLE, m.peer, TAG);
        }
        Transport.runLocal(plan, local);
        Request.Waitall(reqs);
        for (CommPlan.Message m : plan.recvs) {
            HostTransport.unpack(m, unpack);
        }
    }

    @Override
    public void runNow(CommPlan plan, Kernel pack, Kernel local, Kernel unpack) {
        run(plan, pack, local, unpack);
    }

    @Override
    public void sync() {
    }

    @Override
    public void barrier() {
        world.Barrier();
    }

    @Override
    public void close() {
    }
}
