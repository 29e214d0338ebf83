package dev.gdasync.libmp.mpj;

import mpi.Cartcomm;
import mpi.Datatype;
import mpi.Graphcomm;
import mpi.Group;
import mpi.Intercomm;
import mpi.Intracomm;
import mpi.MPI;
import mpi.Prequest;
import mpi.Request;
import mpi.ShiftParms;
import mpi.Status;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An MPJ Express program that uses only the mpiJava 1.2 API (nothing of gdasync): the conformance cases of
 * {@link MpjOverGdasyncTest}, run one after the other on every rank. Prints {@code OK CASE} or {@code FAIL CASE: WHY}
 * per case, and {@code DONE rank R of N} after MPI.Finalize. Arguments (after MPJ's): the case names to run, or none
 * for every case.
 */
public final class MpjConformanceMain {
    interface Case {
        void run(int rank, int size) throws Exception;
    }

    private MpjConformanceMain() {
    }

    public static void main(String[] args) throws Exception {
        String[] mine = MPI.Init(args);
        int rank = MPI.COMM_WORLD.Rank();
        int size = MPI.COMM_WORLD.Size();
        Map<String, Case> cases = cases();
        List<String> run = mine.length == 0 ? new ArrayList<>(cases.keySet()) : Arrays.asList(mine);
        for (String name : run) {
            Case c = cases.get(name);
            if (c == null) {
                System.out.println("FAIL " + name + ": no such case");
                continue;
            }
            try {
                c.run(rank, size);
                MPI.COMM_WORLD.Barrier();
                System.out.println("OK " + name);
            } catch (Throwable e) {
                System.out.println("FAIL " + name + ": " + e);
                e.printStackTrace(System.out);
            }
        }
        MPI.Finalize();
        System.out.println("DONE rank " + rank + " of " + size);
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    private static Map<String, Case> cases() {
        Map<String, Case> m = new LinkedHashMap<>();
        m.put("ring", MpjConformanceMain::ring);
        m.put("large", MpjConformanceMain::large);
        m.put("wildcards", MpjConformanceMain::wildcards);
        m.put("order", MpjConformanceMain::order);
        m.put("probe", MpjConformanceMain::probe);
        m.put("ssend", MpjConformanceMain::ssend);
        m.put("waitany", MpjConformanceMain::waitany);
        m.put("persistent", MpjConformanceMain::persistent);
        m.put("sendrecv", MpjConformanceMain::sendrecv);
        m.put("collectives", MpjConformanceMain::collectives);
        m.put("communicators", MpjConformanceMain::communicators);
        m.put("intercomm", MpjConformanceMain::intercomm);
        m.put("topologies", MpjConformanceMain::topologies);
        m.put("datatypes", MpjConformanceMain::datatypes);
        m.put("objects", MpjConformanceMain::objects);
        m.put("self", MpjConformanceMain::self);
        m.put("vcollectives", MpjConformanceMore::vcollectives);
        m.put("testany", MpjConformanceMore::testany);
        m.put("groups", MpjConformanceMore::groups);
        m.put("cartsub", MpjConformanceMore::cartsub);
        m.put("merge", MpjConformanceMore::merge);
        m.put("iprobeall", MpjConformanceMore::iprobeAll);
        m.put("rendezvous", MpjConformanceLarge::rendezvousSizes);
        m.put("manylarge", MpjConformanceLarge::rendezvousMany);
        m.put("heldlarge", MpjConformanceLarge::rendezvousHeld);
        m.put("largetrunc", MpjConformanceLarge::largeTruncation);
        m.put("cancel", MpjConformanceCancel::cancel);
        m.put("blocking", MpjConformanceBlocking::blocking);
        m.put("badargs", MpjConformanceMain::badArguments);
        return m;
    }

    /** Every rank sends 16 ints to the next and receives from the previous. */
    static void ring(int rank, int size) {
        int[] out = new int[16];
        for (int i = 0; i < out.length; i++) {
            out[i] = rank * 1000 + i;
        }
        int[] in = new int[16];
        int next = (rank + 1) % size;
        int prev = (rank + size - 1) % size;
        Request r = MPI.COMM_WORLD.Irecv(in, 0, 16, MPI.INT, prev, 3);
        MPI.COMM_WORLD.Send(out, 0, 16, MPI.INT, next, 3);
        Status s = r.Wait();
        check(s.source == prev && s.tag == 3, "status " + s.source + "/" + s.tag);
        check(s.Get_count(MPI.INT) == 16, "count " + s.Get_count(MPI.INT));
        for (int i = 0; i < 16; i++) {
            check(in[i] == prev * 1000 + i, "element " + i + " = " + in[i]);
        }
    }

    /** 0 and 1 exchange 1 MiB of doubles both ways at once (many fragments each way), then 3 bytes, then nothing. */
    static void large(int rank, int size) {
        if (rank > 1) {
            return;
        }
        int peer = 1 - rank;
        int n = 128 * 1024;
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = rank + i * 0.5;
        }
        double[] in = new double[n];
        Request rs = MPI.COMM_WORLD.Isend(out, 0, n, MPI.DOUBLE, peer, 9);
        MPI.COMM_WORLD.Recv(in, 0, n, MPI.DOUBLE, peer, 9);
        rs.Wait();
        for (int i = 0; i < n; i++) {
            check(in[i] == peer + i * 0.5, "element " + i + " = " + in[i]);
        }
        byte[] b = {1, 2, (byte) rank};
        byte[] bi = new byte[3];
        MPI.COMM_WORLD.Sendrecv(b, 0, 3, MPI.BYTE, peer, 10, bi, 0, 3, MPI.BYTE, peer, 10);
        check(bi[2] == peer && bi[0] == 1, "bytes " + Arrays.toString(bi));
        Status s = MPI.COMM_WORLD.Sendrecv(b, 0, 0, MPI.BYTE, peer, 11, bi, 0, 3, MPI.BYTE, peer, 11);
        check(s.Get_count(MPI.BYTE) == 0, "empty count " + s.Get_count(MPI.BYTE));
    }

    /** Rank 0 receives one message from every other rank with ANY_SOURCE and ANY_TAG; the statuses say who and what. */
    static void wildcards(int rank, int size) {
        if (rank == 0) {
            boolean[] seen = new boolean[size];
            for (int k = 1; k < size; k++) {
                int[] v = new int[2];
                Status s = MPI.COMM_WORLD.Recv(v, 0, 2, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG);
                check(s.source == v[0] && s.tag == 100 + v[0] && v[1] == v[0] * 7, "status " + s.source + "/" + s.tag
                        + " for " + Arrays.toString(v));
                check(!seen[s.source], "twice from " + s.source);
                seen[s.source] = true;
            }
            // A receive from a given source with ANY_TAG takes that source's message only.
            int[] v = new int[2];
            Request r = MPI.COMM_WORLD.Irecv(v, 0, 2, MPI.INT, size - 1, MPI.ANY_TAG);
            MPI.COMM_WORLD.Barrier();
            Status s = r.Wait();
            check(s.source == size - 1 && s.tag == 55 && v[0] == size - 1, "source-only wildcard " + s.source + "/" + s.tag);
        } else {
            MPI.COMM_WORLD.Send(new int[] {rank, rank * 7}, 0, 2, MPI.INT, 0, 100 + rank);
            MPI.COMM_WORLD.Barrier();
            if (rank == size - 1) {
                MPI.COMM_WORLD.Send(new int[] {rank, 0}, 0, 2, MPI.INT, 0, 55);
            }
        }
    }

    /** 200 messages on two tags from 1 to 0: each tag's messages arrive in the order sent, whatever is received first. */
    static void order(int rank, int size) {
        int n = 100;
        if (rank == 1) {
            // Non-blocking: a standard send may wait for its receive, and rank 0 receives tag 2 first.
            Request[] rs = new Request[2 * n];
            for (int i = 0; i < n; i++) {
                rs[2 * i] = MPI.COMM_WORLD.Isend(new int[] {i}, 0, 1, MPI.INT, 0, 1);
                rs[2 * i + 1] = MPI.COMM_WORLD.Isend(new int[] {i}, 0, 1, MPI.INT, 0, 2);
            }
            Request.Waitall(rs);
        } else if (rank == 0) {
            int[] v = new int[1];
            for (int i = 0; i < n; i++) {
                MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 1, 2);
                check(v[0] == i, "tag 2 message " + i + " was " + v[0]);
            }
            for (int i = 0; i < n; i++) {
                Status s = MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, MPI.ANY_SOURCE, MPI.ANY_TAG);
                check(v[0] == i && s.tag == 1, "tag 1 message " + i + " was " + v[0] + " tag " + s.tag);
            }
        }
    }

    /** Probe, Iprobe and Get_count before the receive. */
    static void probe(int rank, int size) {
        if (rank == 1) {
            MPI.COMM_WORLD.Send(new double[37], 0, 37, MPI.DOUBLE, 0, 5);
        } else if (rank == 0) {
            Status s = MPI.COMM_WORLD.Probe(1, 5);
            check(s.source == 1 && s.tag == 5, "probe status " + s.source + "/" + s.tag);
            check(s.Get_count(MPI.DOUBLE) == 37, "probed count " + s.Get_count(MPI.DOUBLE));
            Status again = MPI.COMM_WORLD.Iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG);
            check(again != null && again.source == 1, "iprobe finds it too");
            check(MPI.COMM_WORLD.Iprobe(1, 6) == null, "iprobe for another tag finds nothing");
            double[] d = new double[37];
            MPI.COMM_WORLD.Recv(d, 0, 37, MPI.DOUBLE, 1, 5);
            check(MPI.COMM_WORLD.Iprobe(1, 5) == null, "the message was received");
        }
    }

    /** A synchronous send completes only once the receiver matched it. */
    static void ssend(int rank, int size) {
        if (rank == 0) {
            Request r = MPI.COMM_WORLD.Issend(new int[] {42}, 0, 1, MPI.INT, 1, 8);
            for (int i = 0; i < 200; i++) {
                check(r.Test() == null, "Issend completed before rank 1 posted its receive");
            }
            MPI.COMM_WORLD.Send(new int[] {1}, 0, 1, MPI.INT, 1, 7); // go
            r.Wait();
            MPI.COMM_WORLD.Ssend(new int[] {43}, 0, 1, MPI.INT, 1, 8);
            MPI.Buffer_attach(java.nio.ByteBuffer.allocateDirect(4096));
            MPI.COMM_WORLD.Bsend(new int[] {44}, 0, 1, MPI.INT, 1, 8);
            MPI.Buffer_detach();
        } else if (rank == 1) {
            int[] v = new int[1];
            MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 0, 7);
            MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 0, 8);
            check(v[0] == 42, "issend payload " + v[0]);
            MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 0, 8);
            check(v[0] == 43, "ssend payload " + v[0]);
            MPI.COMM_WORLD.Recv(v, 0, 1, MPI.INT, 0, 8);
            check(v[0] == 44, "bsend payload " + v[0]);
        }
    }

    /** Waitany, Waitsome, Testall over receives that complete in reverse order of posting. */
    static void waitany(int rank, int size) {
        if (rank == 1) {
            for (int t = 3; t >= 0; t--) {
                MPI.COMM_WORLD.Send(new int[] {t}, 0, 1, MPI.INT, 0, t);
            }
            for (int t = 0; t < 4; t++) {
                MPI.COMM_WORLD.Send(new int[] {t}, 0, 1, MPI.INT, 0, 20 + t);
            }
        } else if (rank == 0) {
            int[][] v = new int[4][1];
            Request[] rs = new Request[4];
            for (int t = 0; t < 4; t++) {
                rs[t] = MPI.COMM_WORLD.Irecv(v[t], 0, 1, MPI.INT, 1, t);
            }
            boolean[] done = new boolean[4];
            for (int k = 0; k < 4; k++) {
                Status s = Request.Waitany(rs);
                check(!done[s.index], "index " + s.index + " twice");
                done[s.index] = true;
                check(v[s.index][0] == s.index && s.tag == s.index, "waitany index " + s.index + " value " + v[s.index][0]);
            }
            Request[] more = new Request[4];
            for (int t = 0; t < 4; t++) {
                more[t] = MPI.COMM_WORLD.Irecv(v[t], 0, 1, MPI.INT, 1, 20 + t);
            }
            Status[] some = Request.Waitsome(more);
            check(some != null && some.length >= 1, "waitsome returned " + (some == null ? null : some.length));
            Status[] all;
            int spins = 0;
            while ((all = Request.Testall(more)) == null) {
                spins++;
            }
            check(all.length == 4 || spins >= 0, "testall");
            for (int t = 0; t < 4; t++) {
                check(v[t][0] == t, "waitsome/testall value " + t + " = " + v[t][0]);
            }
        }
    }

    /** Send_init/Recv_init started three times. */
    static void persistent(int rank, int size) {
        if (rank > 1) {
            return;
        }
        int[] buf = new int[4];
        Prequest p = rank == 0 ? MPI.COMM_WORLD.Send_init(buf, 0, 4, MPI.INT, 1, 30)
                : MPI.COMM_WORLD.Recv_init(buf, 0, 4, MPI.INT, 0, 30);
        for (int round = 0; round < 3; round++) {
            if (rank == 0) {
                Arrays.fill(buf, round + 10);
            }
            p.Start();
            p.Wait();
            if (rank == 1) {
                check(buf[3] == round + 10, "round " + round + " got " + buf[3]);
            }
        }
    }

    /** Sendrecv and Sendrecv_replace around the ring. */
    static void sendrecv(int rank, int size) {
        int next = (rank + 1) % size;
        int prev = (rank + size - 1) % size;
        long[] out = {rank, rank * 2L};
        long[] in = new long[2];
        Status s = MPI.COMM_WORLD.Sendrecv(out, 0, 2, MPI.LONG, next, 4, in, 0, 2, MPI.LONG, prev, 4);
        check(in[1] == prev * 2L && s.source == prev, "sendrecv got " + Arrays.toString(in));
        int[] x = {rank};
        MPI.COMM_WORLD.Sendrecv_replace(x, 0, 1, MPI.INT, next, 5, prev, 5);
        check(x[0] == prev, "sendrecv_replace got " + x[0]);
    }

    /** Bcast, Reduce, Allreduce, Gather, Scatter, Allgather, Alltoall, Scan. */
    static void collectives(int rank, int size) {
        Intracomm w = MPI.COMM_WORLD;
        int[] b = {rank == 0 ? 77 : 0, rank == 0 ? 78 : 0};
        w.Bcast(b, 0, 2, MPI.INT, 0);
        check(b[0] == 77 && b[1] == 78, "bcast " + Arrays.toString(b));
        int[] one = {rank + 1};
        int[] sum = new int[1];
        w.Allreduce(one, 0, sum, 0, 1, MPI.INT, MPI.SUM);
        check(sum[0] == size * (size + 1) / 2, "allreduce " + sum[0]);
        double[] dmax = new double[1];
        w.Reduce(new double[] {rank * 1.5}, 0, dmax, 0, 1, MPI.DOUBLE, MPI.MAX, size - 1);
        check(rank != size - 1 || dmax[0] == (size - 1) * 1.5, "reduce max " + dmax[0]);
        int[] gathered = new int[size];
        w.Gather(new int[] {rank * 3}, 0, 1, MPI.INT, gathered, 0, 1, MPI.INT, 0);
        for (int r = 0; rank == 0 && r < size; r++) {
            check(gathered[r] == r * 3, "gather " + Arrays.toString(gathered));
        }
        int[] toScatter = new int[size];
        for (int r = 0; r < size; r++) {
            toScatter[r] = r + 100;
        }
        int[] got = new int[1];
        w.Scatter(toScatter, 0, 1, MPI.INT, got, 0, 1, MPI.INT, 0);
        check(got[0] == rank + 100, "scatter " + got[0]);
        int[] all = new int[size];
        w.Allgather(new int[] {rank}, 0, 1, MPI.INT, all, 0, 1, MPI.INT);
        for (int r = 0; r < size; r++) {
            check(all[r] == r, "allgather " + Arrays.toString(all));
        }
        int[] a2aOut = new int[size];
        for (int r = 0; r < size; r++) {
            a2aOut[r] = rank * 10 + r;
        }
        int[] a2aIn = new int[size];
        w.Alltoall(a2aOut, 0, 1, MPI.INT, a2aIn, 0, 1, MPI.INT);
        for (int r = 0; r < size; r++) {
            check(a2aIn[r] == r * 10 + rank, "alltoall " + Arrays.toString(a2aIn));
        }
        int[] scan = new int[1];
        w.Scan(new int[] {1}, 0, scan, 0, 1, MPI.INT, MPI.SUM);
        check(scan[0] == rank + 1, "scan " + scan[0]);
    }

    /** Split (even and odd ranks), Dup (clone) and Create from a group, each with a collective on it. */
    static void communicators(int rank, int size) {
        Intracomm half = MPI.COMM_WORLD.Split(rank % 2, rank);
        int[] sum = new int[1];
        half.Allreduce(new int[] {rank}, 0, sum, 0, 1, MPI.INT, MPI.SUM);
        int expected = 0;
        for (int r = rank % 2; r < size; r += 2) {
            expected += r;
        }
        check(sum[0] == expected && half.Rank() == rank / 2, "split sum " + sum[0] + " rank " + half.Rank());
        Intracomm dup = (Intracomm) MPI.COMM_WORLD.clone();
        int[] v = {rank};
        dup.Bcast(v, 0, 1, MPI.INT, size - 1);
        check(v[0] == size - 1, "dup bcast " + v[0]);
        // A message on the duplicate does not match a receive on the world: contexts differ.
        if (rank == 0) {
            Request first = dup.Isend(new int[] {5}, 0, 1, MPI.INT, 1, 0); // rank 1 receives it second
            MPI.COMM_WORLD.Send(new int[] {6}, 0, 1, MPI.INT, 1, 0);
            first.Wait();
        } else if (rank == 1) {
            int[] x = new int[1];
            MPI.COMM_WORLD.Recv(x, 0, 1, MPI.INT, 0, 0);
            check(x[0] == 6, "world receive took " + x[0]);
            dup.Recv(x, 0, 1, MPI.INT, 0, 0);
            check(x[0] == 5, "dup receive took " + x[0]);
        }
        Group g = MPI.COMM_WORLD.Group().Incl(new int[] {0, 1});
        Intracomm pair = MPI.COMM_WORLD.Create(g);
        if (rank <= 1) {
            int[] s2 = new int[1];
            pair.Allreduce(new int[] {10 + rank}, 0, s2, 0, 1, MPI.INT, MPI.SUM);
            check(s2[0] == 21 && pair.Size() == 2, "create sum " + s2[0]);
        }
    }

    /** Two halves joined by an intercommunicator; each rank of the low half sends to the high half's same rank. */
    static void intercomm(int rank, int size) {
        int color = rank < size / 2 ? 0 : 1;
        Intracomm local = MPI.COMM_WORLD.Split(color, rank);
        int remoteLeader = color == 0 ? size / 2 : 0;
        Intercomm inter = MPI.COMM_WORLD.Create_intercomm(local, 0, remoteLeader, 77);
        check(inter.Remote_size() == (color == 0 ? size - size / 2 : size / 2), "remote size " + inter.Remote_size());
        int lr = local.Rank();
        if (color == 0 && lr < inter.Remote_size()) {
            inter.Send(new int[] {rank}, 0, 1, MPI.INT, lr, 3);
        } else if (color == 1 && lr < inter.Remote_size()) {
            int[] x = new int[1];
            Status s = inter.Recv(x, 0, 1, MPI.INT, lr, 3);
            check(x[0] == lr && s.source == lr, "intercomm got " + x[0] + " from " + s.source);
        }
    }

    /** A periodic 1-D Cartesian ring (Shift, Coords) and a star graph (Neighbours). */
    static void topologies(int rank, int size) {
        Cartcomm cart = MPI.COMM_WORLD.Create_cart(new int[] {size}, new boolean[] {true}, false);
        ShiftParms sp = cart.Shift(0, 1);
        check(sp.rank_dest == (rank + 1) % size && sp.rank_source == (rank + size - 1) % size,
                "shift " + sp.rank_source + " -> " + sp.rank_dest);
        check(cart.Coords(rank)[0] == rank, "coords " + Arrays.toString(cart.Coords(rank)));
        int[] in = new int[1];
        cart.Sendrecv(new int[] {rank}, 0, 1, MPI.INT, sp.rank_dest, 1, in, 0, 1, MPI.INT, sp.rank_source, 1);
        check(in[0] == sp.rank_source, "cart sendrecv " + in[0]);
        // Star: 0 linked to every other rank.
        int[] index = new int[size];
        List<Integer> edges = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            if (r == 0) {
                for (int k = 1; k < size; k++) {
                    edges.add(k);
                }
            } else {
                edges.add(0);
            }
            index[r] = edges.size();
        }
        Graphcomm graph = MPI.COMM_WORLD.Create_graph(index, edges.stream().mapToInt(Integer::intValue).toArray(), false);
        int[] nb = graph.Neighbours(rank);
        check(rank == 0 ? nb.length == size - 1 : nb.length == 1 && nb[0] == 0, "neighbours " + Arrays.toString(nb));
        int[] sum = new int[1];
        graph.Allreduce(new int[] {1}, 0, sum, 0, 1, MPI.INT, MPI.SUM);
        check(sum[0] == size, "graph allreduce " + sum[0]);
    }

    /** A column of a 4x4 matrix (Vector), Contiguous and Indexed types. */
    static void datatypes(int rank, int size) {
        if (rank > 1) {
            return;
        }
        Datatype column = Datatype.Vector(4, 1, 4, MPI.INT);
        column.Commit();
        Datatype pair = Datatype.Contiguous(2, MPI.DOUBLE);
        pair.Commit();
        Datatype picks = Datatype.Indexed(new int[] {1, 2}, new int[] {0, 5}, MPI.INT);
        picks.Commit();
        if (rank == 0) {
            int[] m = new int[16];
            for (int i = 0; i < 16; i++) {
                m[i] = i;
            }
            MPI.COMM_WORLD.Send(m, 1, 1, column, 1, 1); // column 1: 1, 5, 9, 13
            MPI.COMM_WORLD.Send(new double[] {1.5, 2.5, 3.5, 4.5}, 0, 2, pair, 1, 2);
            MPI.COMM_WORLD.Send(m, 0, 1, picks, 1, 3); // m[0], m[5], m[6]
        } else {
            int[] col = new int[4];
            MPI.COMM_WORLD.Recv(col, 0, 4, MPI.INT, 0, 1);
            check(Arrays.equals(col, new int[] {1, 5, 9, 13}), "column " + Arrays.toString(col));
            double[] d = new double[4];
            Status s = MPI.COMM_WORLD.Recv(d, 0, 2, pair, 0, 2);
            check(d[3] == 4.5 && s.Get_count(pair) == 2, "contiguous " + Arrays.toString(d) + " count " + s.Get_count(pair));
            int[] into = new int[16];
            MPI.COMM_WORLD.Recv(into, 0, 1, picks, 0, 3);
            check(into[0] == 0 && into[5] == 5 && into[6] == 6 && into[1] == 0, "indexed " + Arrays.toString(into));
        }
    }

    /** MPI.OBJECT: serializable objects, from a small string to a large array. */
    static void objects(int rank, int size) {
        if (rank == 0) {
            Object[] out = {"hello from 0", new int[] {1, 2, 3}, new byte[200_000]};
            ((byte[]) out[2])[199_999] = 9;
            for (int r = 1; r < size; r++) {
                MPI.COMM_WORLD.Send(out, 0, 3, MPI.OBJECT, r, 6);
            }
        } else {
            Object[] in = new Object[3];
            Status s = MPI.COMM_WORLD.Recv(in, 0, 3, MPI.OBJECT, 0, 6);
            check("hello from 0".equals(in[0]) && ((int[]) in[1])[2] == 3 && ((byte[]) in[2])[199_999] == 9,
                    "objects " + Arrays.toString(in));
            check(s.Get_count(MPI.OBJECT) == 3, "object count " + s.Get_count(MPI.OBJECT));
        }
        Object[] mine = {"rank " + rank};
        Object[] root = new Object[size];
        MPI.COMM_WORLD.Gather(mine, 0, 1, MPI.OBJECT, root, 0, 1, MPI.OBJECT, 0);
        for (int r = 0; rank == 0 && r < size; r++) {
            check(("rank " + r).equals(root[r]), "gathered objects " + Arrays.toString(root));
        }
    }

    /** A rank sends to itself, standard and synchronous (the receive posted first). */
    static void self(int rank, int size) {
        int[] in = new int[1];
        MPI.COMM_WORLD.Isend(new int[] {rank + 5}, 0, 1, MPI.INT, rank, 12);
        MPI.COMM_WORLD.Recv(in, 0, 1, MPI.INT, rank, 12);
        check(in[0] == rank + 5, "self " + in[0]);
        Request r = MPI.COMM_WORLD.Irecv(in, 0, 1, MPI.INT, rank, 13);
        MPI.COMM_WORLD.Ssend(new int[] {rank + 6}, 0, 1, MPI.INT, rank, 13);
        r.Wait();
        check(in[0] == rank + 6, "self ssend " + in[0]);
    }

    /**
     * Bad arguments get MPJ's exception with a message that says what is wrong; nothing is sent. The truncation's
     * message is printed ({@code truncation: MESSAGE}): each device words it its own way.
     */
    static void badArguments(int rank, int size) {
        String m = null;
        try {
            MPI.COMM_WORLD.Send(new int[1], 0, 1, MPI.INT, size, 1);
        } catch (xdev.XDevException e) {
            m = String.valueOf(e.getMessage());
        }
        check(m != null && m.contains(String.valueOf(size)), "a send to rank " + size + " must fail naming it: " + m);
        // A message larger than the receive buffer: truncation, reported on the receive.
        if (rank <= 1) {
            int peer = 1 - rank;
            String t = null;
            MPI.COMM_WORLD.Isend(new int[8], 0, 8, MPI.INT, peer, 14);
            try {
                MPI.COMM_WORLD.Recv(new int[2], 0, 2, MPI.INT, peer, 14);
            } catch (RuntimeException e) {
                t = String.valueOf(e.getMessage());
            }
            check(t != null, "an 8-int message into a 2-int receive must fail");
            System.out.println("truncation: " + t);
        }
    }
}
