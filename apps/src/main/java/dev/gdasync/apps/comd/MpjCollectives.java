package dev.gdasync.apps.comd;

import mpi.Intracomm;
import mpi.MPI;

/** Reductions over MPJ Express ({@code Allgather}, then the sum in rank order, as every mode does). */
final class MpjCollectives implements Collectives {
    private final Intracomm world;

    MpjCollectives(Intracomm world) {
        this.world = world;
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
    public double[][] allGather(double[] mine) {
        int n = mine.length;
        double[] all = new double[n * size()];
        world.Allgather(mine, 0, n, MPI.DOUBLE, all, 0, n, MPI.DOUBLE);
        double[][] out = new double[size()][n];
        for (int r = 0; r < out.length; r++) {
            System.arraycopy(all, r * n, out[r], 0, n);
        }
        return out;
    }

    @Override
    public void barrier() {
        world.Barrier();
    }
}
