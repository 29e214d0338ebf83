package dev.gdasync.apps.comd;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.Communicator;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * CoMD's reductions over libmp's collectives (the world communicator; on one host its shared-memory path, a few
 * microseconds per reduction where the bootstrap's TCP all-gather took a round trip to rank 0): the libmp models'
 * counterpart of MPJ Express's {@code Allgather}. Sums still add the gathered values in rank order, so every model
 * gets the same bits.
 */
final class LibmpCollectives implements Collectives, AutoCloseable {
    private final Mp mp;
    private final dev.gdasync.libmp.coll.Collectives coll;
    private final Communicator world;
    private MemorySegment buf;
    private MpRegistration reg;

    /**
     * @param mp this rank's Mp (collective: every rank opens its collectives here)
     */
    LibmpCollectives(Mp mp) {
        this.mp = mp;
        this.coll = dev.gdasync.libmp.coll.Collectives.host(mp);
        this.world = coll.world();
    }

    @Override
    public int rank() {
        return world.rank();
    }

    @Override
    public int size() {
        return world.size();
    }

    @Override
    public double[][] allGather(double[] mine) {
        int n = world.size();
        long bytes = 8L * mine.length;
        if (bytes == 0) {
            return new double[n][0];
        }
        ensure(bytes * (n + 1));
        MemorySegment send = buf.asSlice(0, bytes);
        MemorySegment all = buf.asSlice(bytes, bytes * n);
        MemorySegment.copy(mine, 0, send, ValueLayout.JAVA_DOUBLE, 0, mine.length);
        world.allgather(send, reg, all, reg);
        double[][] out = new double[n][];
        for (int r = 0; r < n; r++) {
            out[r] = all.asSlice(r * bytes, bytes).toArray(ValueLayout.JAVA_DOUBLE);
        }
        return out;
    }

    @Override
    public void barrier() {
        world.barrier();
    }

    private void ensure(long bytes) {
        if (buf == null || buf.byteSize() < bytes) {
            release();
            buf = mp.allocate(Math.max(4096, bytes));
            reg = mp.register(buf);
        }
    }

    private void release() {
        if (buf != null) {
            mp.deregister(reg);
            mp.free(buf);
            buf = null;
        }
    }

    /** Frees the buffer and closes the collectives (before the Mp). */
    @Override
    public void close() {
        release();
        coll.close();
    }
}
