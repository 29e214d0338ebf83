package dev.gdasync.apps.collectives;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.msccl.Collective;
import dev.gdasync.libmp.coll.msccl.MscclConfig;
import dev.gdasync.libmp.coll.msccl.MscclKiLauncher;
import dev.gdasync.libmp.coll.msccl.MscclProgram;
import dev.gdasync.libmp.coll.msccl.MscclPrograms;
import dev.gdasync.libmp.coll.msccl.MscclRuntime;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.coll.reduce.ReducingCollectives;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Optional;

/**
 * The check mode: every loaded program's collective on int32 data, at three counts it is selected for (one element
 * per chunk, 257, 16411) and at one it is not (the built-in runs), each checked element by element on every rank;
 * rank 0 prints one line per run. Each program runs in a runtime of its own, so every file is exercised even when
 * an earlier one would be selected for the same calls. Without programs, the built-ins of all four collectives are
 * checked, with reduce and broadcast. Each model of {@code --mode} runs the whole check: host (blocking calls), sa
 * (the calls enqueued on a host stream, read after the stream is synchronized) and ki (run by the blocks of the
 * rank's host KI executor).
 */
final class ProgramCheck {
    private final Mp mp;
    private final Collectives coll;
    private final Communicator comm;
    private final MscclPrograms programs;
    private final MscclConfig config;
    private final List<String> modes;
    private MscclRuntime rt;
    /** The caller's stream of the sa model; null while checking the other models. */
    private HostStream stream;
    /** The KI executor's launcher of the ki model; null while checking the other models. */
    private MscclKiLauncher ki;

    ProgramCheck(Collectives coll, MscclPrograms programs, MscclConfig config, List<String> modes) {
        this.modes = modes;
        this.mp = coll.mp();
        this.coll = coll;
        this.comm = coll.world();
        this.programs = programs;
        this.config = config;
    }

    /** @return whether every run was exact on every rank, in every model */
    boolean run() {
        boolean ok = true;
        for (String mode : modes) {
            stream = mode.equals("sa") ? HostStream.create("collectives-r" + comm.rank()) : null;
            HostKiExecutor executor = mode.equals("ki") ? KiLaunch.executor(mp) : null;
            ki = executor == null ? null : KiLaunch.launcher(executor);
            try {
                say("collectives: model " + mode + (stream != null ? " (enqueued on a host stream)"
                        : ki != null ? " (run by the blocks of the host KI executor)" : " (blocking)"));
                ok &= runModel();
            } finally {
                if (stream != null) {
                    stream.close();
                }
                if (executor != null) {
                    executor.close();
                }
            }
        }
        return ok;
    }

    private boolean runModel() {
        boolean ok = true;
        List<MscclProgram> all = programs.programs();
        say("collectives: " + all.size() + " program(s) loaded, " + comm.size() + " ranks");
        try (ReducingCollectives tally = ReducingCollectives.of(comm)) {
            if (all.isEmpty()) {
                rt = MscclRuntime.open(coll, programs, config);
                for (Collective c : Collective.values()) {
                    ok &= check(tally, null, c, false, 1001);
                }
                ok &= checkRooted(tally, 1001);
                rt.close();
            }
            for (MscclProgram p : all) {
                if (p.ngpus() != comm.size()) {
                    say("collectives: " + p + " needs " + p.ngpus() + " ranks; skipped on " + comm.size());
                    continue;
                }
                // A runtime of its own, so that an earlier program for the same calls does not shadow it.
                rt = MscclRuntime.open(coll, MscclPrograms.of(List.of(p)), config);
                long unit = p.collective() == Collective.ALLREDUCE ? p.nchunksperloop()
                        : p.nchunksperloop() / gcd(p.nchunksperloop(), p.ngpus());
                for (long k : new long[] {1, 257, 16411}) {
                    long count = unit * k;
                    if (count * 4 >= p.minBytes() && count * 4 < p.maxBytes()) {
                        ok &= check(tally, p, p.collective(), p.inPlace(), count);
                    }
                }
                long outside = unit > 1 ? unit * 257 + 1
                        : p.maxBytes() != Long.MAX_VALUE ? p.maxBytes() / 4 + 1 : p.minBytes() > 0 ? 1 : -1;
                if (outside > 0) {
                    ok &= check(tally, p, p.collective(), p.inPlace(), outside);
                } else {
                    say("collectives: " + p.name() + ": every count is in its range and divides into its chunks");
                }
                rt.close();
            }
        }
        say(ok ? "collectives: all results exact on every rank" : "collectives: SOME RESULTS WRONG");
        return ok;
    }

    /** Runs one collective of {@code count} (NCCL's count) and checks it; prints what ran. */
    private boolean check(ReducingCollectives tally, MscclProgram p, Collective c, boolean inPlace, long count) {
        int n = comm.size();
        int me = comm.rank();
        long big = c == Collective.ALLREDUCE ? count : count * n;
        MemorySegment a = mp.allocate(Math.max(8, 4 * big));
        MemorySegment b = mp.allocate(Math.max(8, 4 * big));
        MpRegistration ar = mp.register(a);
        MpRegistration br = mp.register(b);
        long wrong = 0;
        Optional<MscclProgram> ran;
        try {
            long blk = 4 * count;
            switch (c) {
                case ALLREDUCE -> {
                    fill(a, me, 0, count);
                    ran = stream != null
                            ? rt.allreduceOnStream(comm, a, ar, inPlace ? a : b, inPlace ? ar : br, count,
                                    DataType.INT32, ReduceOp.SUM, stream)
                            : ki != null ? rt.allreduceKi(comm, a, ar, inPlace ? a : b, inPlace ? ar : br, count,
                                    DataType.INT32, ReduceOp.SUM, ki)
                            : rt.allreduce(comm, a, ar, inPlace ? a : b, inPlace ? ar : br, count, DataType.INT32,
                                    ReduceOp.SUM);
                    synchronize();
                    MemorySegment out = inPlace ? a : b;
                    for (long i = 0; i < count; i++) {
                        wrong += out.getAtIndex(ValueLayout.JAVA_INT, i) != sum(n, i) ? 1 : 0;
                    }
                }
                case ALLGATHER -> {
                    MemorySegment send = inPlace ? b.asSlice(me * blk, blk) : a;
                    fill(send, me, 0, count);
                    MpRegistration sr = inPlace ? br : ar;
                    ran = stream != null ? rt.allgatherOnStream(comm, send, sr, b, br, count, DataType.INT32, stream)
                            : ki != null ? rt.allgatherKi(comm, send, sr, b, br, count, DataType.INT32, ki)
                            : rt.allgather(comm, send, sr, b, br, count, DataType.INT32);
                    synchronize();
                    for (int r = 0; r < n; r++) {
                        for (long i = 0; i < count; i++) {
                            wrong += b.getAtIndex(ValueLayout.JAVA_INT, r * count + i) != in(r, i) ? 1 : 0;
                        }
                    }
                }
                case ALLTOALL -> {
                    fill(a, me, 0, big);
                    MemorySegment o = inPlace ? a : b;
                    MpRegistration or = inPlace ? ar : br;
                    ran = stream != null ? rt.alltoallOnStream(comm, a, ar, o, or, count, DataType.INT32, stream)
                            : ki != null ? rt.alltoallKi(comm, a, ar, o, or, count, DataType.INT32, ki)
                            : rt.alltoall(comm, a, ar, o, or, count, DataType.INT32);
                    synchronize();
                    MemorySegment out = inPlace ? a : b;
                    for (int r = 0; r < n; r++) {
                        for (long i = 0; i < count; i++) {
                            wrong += out.getAtIndex(ValueLayout.JAVA_INT, r * count + i) != in(r, me * count + i) ? 1 : 0;
                        }
                    }
                }
                case REDUCE_SCATTER -> {
                    fill(a, me, 0, big);
                    MemorySegment out = inPlace ? a.asSlice(me * blk, blk) : b;
                    MpRegistration or = inPlace ? ar : br;
                    ran = stream != null ? rt.reduceScatterOnStream(comm, a, ar, out, or, count, DataType.INT32,
                            ReduceOp.SUM, stream)
                            : ki != null ? rt.reduceScatterKi(comm, a, ar, out, or, count, DataType.INT32,
                                    ReduceOp.SUM, ki)
                            : rt.reduceScatter(comm, a, ar, out, or, count, DataType.INT32, ReduceOp.SUM);
                    synchronize();
                    for (long i = 0; i < count; i++) {
                        wrong += out.getAtIndex(ValueLayout.JAVA_INT, i) != sum(n, me * count + i) ? 1 : 0;
                    }
                }
                default -> throw new IllegalStateException(c.toString());
            }
            b.set(ValueLayout.JAVA_LONG, 0, wrong);
            tally.allreduce(b.asSlice(0, 8), br, b.asSlice(0, 8), br, 1, DataType.INT64, ReduceOp.SUM);
            long allWrong = b.get(ValueLayout.JAVA_LONG, 0);
            String what = ran.map(x -> "MSCCL program '" + x.name() + "'").orElse("the built-in algorithm");
            say(String.format("collectives: %-14s %s%s of %d int32 (%d B): ran %s%s: %s", c.xml(),
                    inPlace ? "in place" : "out of place", p == null ? "" : " [" + p.name() + "]", count, 4 * count,
                    what, p != null && ran.isEmpty() ? " (outside the program's counts)" : "",
                    allWrong == 0 ? "exact on all " + n + " ranks" : allWrong + " WRONG elements"));
            return allWrong == 0;
        } finally {
            mp.deregister(ar);
            mp.deregister(br);
            mp.free(a);
            mp.free(b);
        }
    }

    /**
     * Reduce to the last rank and broadcast from it (always built-ins: the tree, blocking; a generated tree program on
     * a stream and on the KI executor), checked like the others.
     */
    private boolean checkRooted(ReducingCollectives tally, long count) {
        int n = comm.size();
        int me = comm.rank();
        int root = n - 1;
        MemorySegment a = mp.allocate(Math.max(8, 4 * count));
        MemorySegment b = mp.allocate(Math.max(8, 4 * count));
        MpRegistration ar = mp.register(a);
        MpRegistration br = mp.register(b);
        try {
            fill(a, me, 0, count);
            if (stream != null) {
                rt.reduceOnStream(comm, a, ar, b, br, count, DataType.INT32, ReduceOp.SUM, root, stream);
            } else if (ki != null) {
                rt.reduceKi(comm, a, ar, b, br, count, DataType.INT32, ReduceOp.SUM, root, ki);
            } else {
                rt.reduce(comm, a, ar, b, br, count, DataType.INT32, ReduceOp.SUM, root);
            }
            synchronize();
            long wrong = 0;
            for (long i = 0; me == root && i < count; i++) {
                wrong += b.getAtIndex(ValueLayout.JAVA_INT, i) != sum(n, i) ? 1 : 0;
            }
            boolean ok = report(tally, b, br, wrong, "reduce to rank " + root + " of " + count + " int32");
            fill(a, me, 7, count);
            if (stream != null) {
                rt.broadcastOnStream(comm, a, ar, count, DataType.INT32, root, stream);
            } else if (ki != null) {
                rt.broadcastKi(comm, a, ar, count, DataType.INT32, root, ki);
            } else {
                rt.broadcast(comm, a, ar, count, DataType.INT32, root);
            }
            synchronize();
            wrong = 0;
            for (long i = 0; i < count; i++) {
                wrong += a.getAtIndex(ValueLayout.JAVA_INT, i) != in(root, 7 + i) ? 1 : 0;
            }
            return ok & report(tally, b, br, wrong, "broadcast from rank " + root + " of " + count + " int32");
        } finally {
            mp.deregister(ar);
            mp.deregister(br);
            mp.free(a);
            mp.free(b);
        }
    }

    private boolean report(ReducingCollectives tally, MemorySegment b, MpRegistration br, long wrong, String what) {
        b.set(ValueLayout.JAVA_LONG, 0, wrong);
        tally.allreduce(b.asSlice(0, 8), br, b.asSlice(0, 8), br, 1, DataType.INT64, ReduceOp.SUM);
        long allWrong = b.get(ValueLayout.JAVA_LONG, 0);
        say("collectives: " + what + ": ran the built-in tree: "
                + (allWrong == 0 ? "exact on all " + comm.size() + " ranks" : allWrong + " WRONG elements"));
        return allWrong == 0;
    }

    /** The sa model: the result is read by the CPU, so it waits for the stream first. */
    private void synchronize() {
        if (stream != null) {
            stream.synchronize();
        }
    }

    static int in(int rank, long i) {
        return rank * 100_000 + (int) i * 3 + 1;
    }

    private static int sum(int n, long i) {
        int s = 0;
        for (int r = 0; r < n; r++) {
            s += in(r, i);
        }
        return s;
    }

    private static void fill(MemorySegment m, int rank, long from, long count) {
        for (long i = 0; i < count; i++) {
            m.setAtIndex(ValueLayout.JAVA_INT, i, in(rank, from + i));
        }
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    private void say(String line) {
        if (comm.rank() == 0) {
            System.out.println(line);
        }
    }
}
