package dev.gdasync.apps.collectives;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.msccl.Collective;
import dev.gdasync.libmp.coll.msccl.MscclKiLauncher;
import dev.gdasync.libmp.coll.msccl.MscclRuntime;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.coll.reduce.ReducingCollectives;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The gdasync side of the benchmark on one rank: the methods of each collective, one call of a method, a timed loop
 * of them and a checked call on fresh data, on two registered buffers: {@code a} (allreduce in place, alltoall's send,
 * bcast) and {@code b} (alltoall's receive, allgather in place, {@code ranks} times the largest size).
 *
 * <p>Methods: {@code msccl} (the blocking program, where the runtime selects one), {@code built-in}
 * ({@link ReducingCollectives}; the barrier: {@link Communicator#barrier()}), and on a host stream and from the KI
 * executor the program ({@code msccl-sa}, {@code msccl-ki}) or, where none fits, the runtime's generated built-in
 * ({@code allpairs-sa}/{@code -ki}; bcast: {@code tree-sa}/{@code -ki}). The barrier has no stream or KI form.
 */
final class BenchCalls implements AutoCloseable {
    /** How long the last rank enters a checked barrier after the others: a barrier that lets them out sooner fails. */
    private static final long BARRIER_SKEW_NANOS = 1_000_000;

    private final Mp mp;
    private final Communicator comm;
    private final MscclRuntime rt;
    private final ReducingCollectives builtin;
    private final HostStream stream;
    private final MscclKiLauncher ki;
    private final MemorySegment a;
    private final MemorySegment b;
    private final MpRegistration ar;
    private final MpRegistration br;

    /**
     * @param mp       the rank's Mp
     * @param comm     the communicator
     * @param rt       the MSCCL runtime
     * @param stream   the sa methods' stream
     * @param ki       the ki methods' launcher
     * @param maxBytes the largest size
     */
    BenchCalls(Mp mp, Communicator comm, MscclRuntime rt, HostStream stream, MscclKiLauncher ki, long maxBytes) {
        this.mp = mp;
        this.comm = comm;
        this.rt = rt;
        this.stream = stream;
        this.ki = ki;
        this.builtin = ReducingCollectives.of(comm);
        this.a = mp.allocate(Math.max(16, maxBytes));
        this.b = mp.allocate(Math.max(16, maxBytes * comm.size()));
        this.ar = mp.register(a);
        this.br = mp.register(b);
    }

    /**
     * @param c     the case
     * @param modes the models asked for (host, sa, ki)
     * @return the methods of the models, in order: host the program and the built-in, sa and ki the program (or the
     * generated built-in) on a stream and from the KI executor
     */
    List<String> methods(BenchCase c, List<String> modes) {
        boolean program = programFits(c);
        List<String> m = new ArrayList<>();
        if (modes.contains("host")) {
            if (program) {
                m.add("msccl");
            }
            m.add("built-in");
        }
        if (c.collective().sized()) {
            String generated = c.collective() == BenchCollective.BCAST ? "tree-" : "allpairs-";
            for (String model : List.of("sa", "ki")) {
                if (modes.contains(model)) {
                    m.add((program ? "msccl-" : generated) + model);
                }
            }
        }
        return m;
    }

    /** Whether the runtime would run a program for this call (the same rule it applies itself). */
    private boolean programFits(BenchCase c) {
        int n = comm.size();
        long count = c.count(n);
        return switch (c.collective()) {
            case ALLREDUCE -> rt.programs().select(Collective.ALLREDUCE, true, n, count * 4, count).isPresent();
            case ALLTOALL -> rt.programs().select(Collective.ALLTOALL, false, n, count * 4, count * n).isPresent();
            case ALLGATHER -> rt.programs().select(Collective.ALLGATHER, true, n, count * 4, count * n).isPresent();
            default -> false;
        };
    }

    /**
     * A timed loop: every rank fills its input, all start together after a barrier, run {@code calls} calls and
     * wait for the stream.
     *
     * @return the slowest rank's microseconds per collective
     */
    double time(BenchCase c, String method, int calls) {
        long count = c.count(comm.size());
        fill(c.collective(), count);
        comm.barrier();
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            once(c.collective(), method, count);
        }
        stream.synchronize();
        double mine = (System.nanoTime() - t0) / 1e3 / calls;
        MemorySegment w = b.asSlice(0, 8);
        w.set(ValueLayout.JAVA_DOUBLE, 0, mine);
        builtin.allreduce(w, br, w, br, 1, DataType.FLOAT64, ReduceOp.MAX);
        return w.get(ValueLayout.JAVA_DOUBLE, 0);
    }

    /**
     * Rank 0's answer to a yes-or-no question, on every rank (a broadcast of the built-ins).
     *
     * @param yes rank 0's answer; the others' is ignored
     * @return rank 0's answer
     */
    boolean agree(boolean yes) {
        MemorySegment w = b.asSlice(0, 4);
        w.set(ValueLayout.JAVA_INT, 0, yes ? 1 : 0);
        builtin.broadcast(w, br, 1, DataType.INT32, 0);
        return w.get(ValueLayout.JAVA_INT, 0) == 1;
    }

    /**
     * Whether every rank answers yes, on every rank (an allreduce of the built-ins).
     *
     * @param yes this rank's answer
     * @return whether all ranks said yes
     */
    boolean allAgree(boolean yes) {
        MemorySegment w = b.asSlice(0, 4);
        w.set(ValueLayout.JAVA_INT, 0, yes ? 1 : 0);
        builtin.allreduce(w, br, w, br, 1, DataType.INT32, ReduceOp.MIN);
        return w.get(ValueLayout.JAVA_INT, 0) == 1;
    }

    /**
     * One call on fresh data, checked element by element on this rank (the barrier: no rank left it before the last
     * one, held back, entered it). A rank that finds a wrong result says so on its standard error.
     *
     * @return whether this rank's result was right
     */
    boolean verify(BenchCase c, String method) {
        int n = comm.size();
        int me = comm.rank();
        long count = c.count(n);
        if (c.collective() == BenchCollective.BARRIER) {
            return verifyBarrier(method);
        }
        fill(c.collective(), count);
        once(c.collective(), method, count);
        stream.synchronize();
        long wrong = 0;
        for (long i = 0; i < c.collective().resultInts(count, n); i++) {
            wrong += actual(c.collective(), i) != c.collective().expected(me, n, count, i) ? 1 : 0;
        }
        if (wrong > 0) {
            System.err.println("collectives: rank " + me + ": " + method + " " + c.collective().label() + " of "
                    + count + " int32: " + wrong + " wrong elements");
        }
        return wrong == 0;
    }

    private boolean verifyBarrier(String method) {
        if (comm.rank() == comm.size() - 1) {
            long until = System.nanoTime() + BARRIER_SKEW_NANOS;
            while (System.nanoTime() < until) {
                LockSupport.parkNanos(until - System.nanoTime());
            }
        }
        long entry = System.nanoTime();
        once(BenchCollective.BARRIER, method, 0);
        long exit = System.nanoTime();
        MemorySegment w = b.asSlice(0, 16);
        w.setAtIndex(ValueLayout.JAVA_LONG, 0, entry);
        w.setAtIndex(ValueLayout.JAVA_LONG, 1, -exit);
        builtin.allreduce(w, br, w, br, 2, DataType.INT64, ReduceOp.MAX);
        long lastEntry = w.getAtIndex(ValueLayout.JAVA_LONG, 0);
        long firstExit = -w.getAtIndex(ValueLayout.JAVA_LONG, 1);
        if (firstExit < lastEntry) {
            System.err.println("collectives: rank " + comm.rank() + ": " + method + " barrier: a rank left it "
                    + (lastEntry - firstExit) + " ns before the last one entered");
            return false;
        }
        return true;
    }

    /** The input of every call of a case: fresh values (bcast: only the root's; the others' buffer is overwritten). */
    private void fill(BenchCollective c, long count) {
        int me = comm.rank();
        int n = comm.size();
        switch (c) {
            case ALLREDUCE -> fillInts(a, 0, me, count);
            case ALLTOALL -> fillInts(a, 0, me, count * n);
            case ALLGATHER -> fillInts(b, me * count, me, count);
            case BCAST -> {
                if (me == 0) {
                    fillInts(a, 0, 0, count);
                } else {
                    a.asSlice(0, 4 * count).fill((byte) -1);
                }
            }
            case BARRIER -> {
            }
        }
    }

    private static void fillInts(MemorySegment m, long from, int rank, long count) {
        for (long i = 0; i < count; i++) {
            m.setAtIndex(ValueLayout.JAVA_INT, from + i, ProgramCheck.in(rank, i));
        }
    }

    /** @return element {@code i} of the result on this rank */
    private int actual(BenchCollective c, long i) {
        return (c == BenchCollective.ALLREDUCE || c == BenchCollective.BCAST ? a : b).getAtIndex(ValueLayout.JAVA_INT, i);
    }

    private void once(BenchCollective c, String method, long count) {
        long blk = 4 * count;
        MemorySegment mine = b.asSlice(comm.rank() * blk, blk);
        if (method.endsWith("-sa")) {
            // Enqueued: a timed loop queues them back to back and waits for the stream once at its end.
            switch (c) {
                case ALLREDUCE -> rt.allreduceOnStream(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM, stream);
                case ALLTOALL -> rt.alltoallOnStream(comm, a, ar, b, br, count, DataType.INT32, stream);
                case ALLGATHER -> rt.allgatherOnStream(comm, mine, br, b, br, count, DataType.INT32, stream);
                case BCAST -> rt.broadcastOnStream(comm, a, ar, count, DataType.INT32, 0, stream);
                case BARRIER -> throw new IllegalArgumentException("the barrier has no stream form");
            }
        } else if (method.endsWith("-ki")) {
            // Run by the KI executor's blocks: the call returns when the launch ended.
            switch (c) {
                case ALLREDUCE -> rt.allreduceKi(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM, ki);
                case ALLTOALL -> rt.alltoallKi(comm, a, ar, b, br, count, DataType.INT32, ki);
                case ALLGATHER -> rt.allgatherKi(comm, mine, br, b, br, count, DataType.INT32, ki);
                case BCAST -> rt.broadcastKi(comm, a, ar, count, DataType.INT32, 0, ki);
                case BARRIER -> throw new IllegalArgumentException("the barrier has no KI form");
            }
        } else if (method.equals("msccl")) {
            switch (c) {
                case ALLREDUCE -> rt.allreduce(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM).orElseThrow();
                case ALLTOALL -> rt.alltoall(comm, a, ar, b, br, count, DataType.INT32).orElseThrow();
                case ALLGATHER -> rt.allgather(comm, mine, br, b, br, count, DataType.INT32).orElseThrow();
                default -> throw new IllegalArgumentException("no MSCCL program runs " + c.label());
            }
        } else {
            switch (c) {
                case ALLREDUCE -> builtin.allreduce(a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM);
                case ALLTOALL -> builtin.alltoall(a, ar, b, br, count, DataType.INT32);
                case ALLGATHER -> builtin.allgather(mine, br, b, br, count, DataType.INT32);
                case BCAST -> builtin.broadcast(a, ar, count, DataType.INT32, 0);
                case BARRIER -> comm.barrier();
            }
        }
    }

    /** Frees the buffers and the built-ins' scratch. */
    @Override
    public void close() {
        builtin.close();
        mp.deregister(ar);
        mp.deregister(br);
        mp.free(a);
        mp.free(b);
    }
}
