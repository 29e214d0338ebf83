package dev.gdasync.libmp.mpj;

import mpi.Cartcomm;
import mpi.Comm;
import mpi.Group;
import mpi.Intercomm;
import mpi.Intracomm;
import mpi.MPI;
import mpi.Request;
import mpi.Status;

import java.util.Arrays;

import static dev.gdasync.libmp.mpj.MpjConformanceMain.check;

/** More cases of {@link MpjConformanceMain}, in the mpiJava 1.2 API only. */
final class MpjConformanceMore {
    private MpjConformanceMore() {
    }

    /** Gatherv, Scatterv, Allgatherv, Alltoallv, Reduce_scatter and MAXLOC: rank r contributes r + 1 elements. */
    static void vcollectives(int rank, int size) {
        Intracomm w = MPI.COMM_WORLD;
        int[] counts = new int[size];
        int[] displs = new int[size];
        int total = 0;
        for (int r = 0; r < size; r++) {
            counts[r] = r + 1;
            displs[r] = total;
            total += r + 1;
        }
        int[] mine = new int[rank + 1];
        Arrays.fill(mine, rank * 10);
        int[] all = new int[total];
        w.Allgatherv(mine, 0, rank + 1, MPI.INT, all, 0, counts, displs, MPI.INT);
        for (int r = 0; r < size; r++) {
            check(all[displs[r]] == r * 10 && all[displs[r] + r] == r * 10, "allgatherv " + Arrays.toString(all));
        }
        int[] atRoot = new int[total];
        w.Gatherv(mine, 0, rank + 1, MPI.INT, atRoot, 0, counts, displs, MPI.INT, 0);
        check(rank != 0 || Arrays.equals(atRoot, all), "gatherv " + Arrays.toString(atRoot));
        int[] back = new int[rank + 1];
        w.Scatterv(all, 0, counts, displs, MPI.INT, back, 0, rank + 1, MPI.INT, 0);
        check(back[rank] == rank * 10, "scatterv " + Arrays.toString(back));
        // Alltoallv: rank r sends r + 1 copies of (r, to) to every rank.
        int[] sc = new int[size];
        int[] sd = new int[size];
        int[] rc = new int[size];
        int[] rd = new int[size];
        for (int r = 0; r < size; r++) {
            sc[r] = rank + 1;
            sd[r] = r * (rank + 1);
            rc[r] = r + 1;
            rd[r] = displs[r];
        }
        int[] out = new int[size * (rank + 1)];
        for (int r = 0; r < size; r++) {
            Arrays.fill(out, sd[r], sd[r] + rank + 1, rank * 100 + r);
        }
        int[] in = new int[total];
        w.Alltoallv(out, 0, sc, sd, MPI.INT, in, 0, rc, rd, MPI.INT);
        for (int r = 0; r < size; r++) {
            check(in[rd[r]] == r * 100 + rank && in[rd[r] + r] == r * 100 + rank, "alltoallv " + Arrays.toString(in));
        }
        int[] ones = new int[size];
        Arrays.fill(ones, 1);
        int[] part = new int[1];
        int[] rsCounts = new int[size];
        Arrays.fill(rsCounts, 1);
        w.Reduce_scatter(ones, 0, part, 0, rsCounts, MPI.INT, MPI.SUM);
        check(part[0] == size, "reduce_scatter " + part[0]);
        int[] pair = {rank == size - 1 ? 99 : rank, rank};
        int[] best = new int[2];
        w.Allreduce(pair, 0, best, 0, 1, MPI.INT2, MPI.MAXLOC);
        check(best[0] == 99 && best[1] == size - 1, "maxloc " + Arrays.toString(best));
    }

    /** Testany and Testsome over receives that complete one by one. */
    static void testany(int rank, int size) {
        if (rank == 1) {
            for (int t = 0; t < 3; t++) {
                int[] go = new int[1];
                MPI.COMM_WORLD.Recv(go, 0, 1, MPI.INT, 0, 40);
                MPI.COMM_WORLD.Send(new int[] {t}, 0, 1, MPI.INT, 0, 41 + t);
            }
        } else if (rank == 0) {
            int[][] v = new int[3][1];
            Request[] rs = new Request[3];
            for (int t = 0; t < 3; t++) {
                rs[t] = MPI.COMM_WORLD.Irecv(v[t], 0, 1, MPI.INT, 1, 41 + t);
            }
            check(Request.Testany(rs) == null, "nothing sent yet, Testany finds nothing");
            MPI.COMM_WORLD.Send(new int[] {0}, 0, 1, MPI.INT, 1, 40);
            Status s;
            while ((s = Request.Testany(rs)) == null) {
                Thread.onSpinWait();
            }
            check(s.index == 0 && v[0][0] == 0, "testany index " + s.index);
            MPI.COMM_WORLD.Send(new int[] {0}, 0, 1, MPI.INT, 1, 40);
            MPI.COMM_WORLD.Send(new int[] {0}, 0, 1, MPI.INT, 1, 40);
            Request[] rest = {rs[1], rs[2]};
            int got = 0;
            while (got < 2) {
                Status[] some = Request.Testsome(rest);
                got += some == null ? 0 : some.length;
            }
            check(v[1][0] == 1 && v[2][0] == 2, "testsome values " + v[1][0] + " " + v[2][0]);
        }
    }

    /** Group algebra and comparisons. */
    static void groups(int rank, int size) {
        Group world = MPI.COMM_WORLD.Group();
        Group low = world.Incl(new int[] {0});
        Group high = world.Incl(new int[] {size - 1});
        Group both = Group.Union(low, high);
        check(both.Size() == 2, "union size " + both.Size());
        check(Group.Intersection(low, high).Size() == 0, "intersection of disjoint groups is empty");
        int[] t = Group.Translate_ranks(high, new int[] {0}, world);
        check(t[0] == size - 1, "translate " + Arrays.toString(t));
        check(Group.Compare(world, MPI.COMM_WORLD.Group()) == MPI.IDENT, "a group is identical to itself");
        Intracomm dup = (Intracomm) MPI.COMM_WORLD.clone();
        check(Comm.Compare(MPI.COMM_WORLD, dup) == MPI.CONGRUENT, "a duplicate is congruent");
        check(!MPI.COMM_WORLD.Test_inter(), "the world is no intercommunicator");
    }

    /** Dims_create, a 2-D Cartesian grid and its rows (Sub). */
    static void cartsub(int rank, int size) {
        int[] dims = new int[2];
        Cartcomm.Dims_create(size, dims);
        check(dims[0] * dims[1] == size, "dims " + Arrays.toString(dims));
        Cartcomm grid = MPI.COMM_WORLD.Create_cart(dims, new boolean[] {false, false}, false);
        check(grid.Topo_test() == MPI.CART, "topology " + grid.Topo_test());
        Cartcomm row = grid.Sub(new boolean[] {false, true});
        check(row.Size() == dims[1], "row size " + row.Size());
        int[] sum = new int[1];
        row.Allreduce(new int[] {1}, 0, sum, 0, 1, MPI.INT, MPI.SUM);
        check(sum[0] == dims[1], "row allreduce " + sum[0]);
    }

    /** An intercommunicator merged back into one intracommunicator. */
    static void merge(int rank, int size) {
        int color = rank % 2;
        Intracomm local = MPI.COMM_WORLD.Split(color, rank);
        Intercomm inter = MPI.COMM_WORLD.Create_intercomm(local, 0, color == 0 ? 1 : 0, 78);
        check(inter.Test_inter(), "an intercommunicator says so");
        Intracomm merged = inter.Merge(color == 1);
        check(merged.Size() == size, "merged size " + merged.Size());
        int[] sum = new int[1];
        merged.Allreduce(new int[] {rank}, 0, sum, 0, 1, MPI.INT, MPI.SUM);
        check(sum[0] == size * (size - 1) / 2, "merged allreduce " + sum[0]);
    }

    /** Rank 0 finds every other rank's message with Iprobe(ANY_SOURCE, ANY_TAG), then receives it by its status. */
    static void iprobeAll(int rank, int size) {
        if (rank != 0) {
            MPI.COMM_WORLD.Send(new long[rank], 0, rank, MPI.LONG, 0, 60 + rank);
            return;
        }
        boolean[] seen = new boolean[size];
        for (int k = 1; k < size; k++) {
            Status s;
            while ((s = MPI.COMM_WORLD.Iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG)) == null) {
                Thread.onSpinWait();
            }
            check(s.tag == 60 + s.source && s.Get_count(MPI.LONG) == s.source && !seen[s.source],
                    "probed " + s.source + "/" + s.tag + " count " + s.Get_count(MPI.LONG));
            seen[s.source] = true;
            long[] v = new long[s.source];
            MPI.COMM_WORLD.Recv(v, 0, s.source, MPI.LONG, s.source, s.tag);
        }
    }
}
