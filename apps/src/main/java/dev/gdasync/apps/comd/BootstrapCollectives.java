package dev.gdasync.apps.comd;

import dev.gdasync.libmp.bootstrap.Bootstrap;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/** Reductions over libmp's bootstrap (an all-gather of each rank's values). */
final class BootstrapCollectives implements Collectives {
    private final Bootstrap boot;

    BootstrapCollectives(Bootstrap boot) {
        this.boot = boot;
    }

    @Override
    public int rank() {
        return boot.rank();
    }

    @Override
    public int size() {
        return boot.size();
    }

    @Override
    public double[][] allGather(double[] mine) {
        ByteBuffer b = ByteBuffer.allocate(8 * mine.length).order(ByteOrder.LITTLE_ENDIAN);
        for (double v : mine) {
            b.putDouble(v);
        }
        List<byte[]> all = boot.allGather(b.array());
        double[][] out = new double[all.size()][];
        for (int r = 0; r < out.length; r++) {
            ByteBuffer in = ByteBuffer.wrap(all.get(r)).order(ByteOrder.LITTLE_ENDIAN);
            if (in.remaining() != 8 * mine.length) {
                throw new IllegalStateException("rank " + r + " sent " + in.remaining() / 8 + " values to a reduction of "
                        + mine.length + ": are all ranks running the same comd arguments?");
            }
            out[r] = new double[mine.length];
            for (int i = 0; i < mine.length; i++) {
                out[r][i] = in.getDouble();
            }
        }
        return out;
    }

    @Override
    public void barrier() {
        boot.barrier();
    }
}
