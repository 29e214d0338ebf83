package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.coll.CollectiveException;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.testutil.Misuse;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The misuse suite of the MSCCL runtime between two rank processes (run by {@link MscclMisuseProcessTest}): ranks
 * that loaded different programs, that call one program with different counts or the rooted built-ins with
 * different roots, and, after agreeing on two kinds, call one each. Each case asserts the exact message on each
 * rank, that it came at once (the runtime's timeout is 60 s), that the buffers' guard bytes and the receive buffer
 * are unchanged (for a disagreement found during a run, the guards and the input: the program's local steps may have
 * written its output, as docs/msccl.md says), and what the runtime promises afterwards: the built-in collectives of
 * the same Collectives work after a refused agreement, and the runtime refuses further runs after a failed one.
 */
public final class MscclMisuseMain {
    private static final int COUNT = 64;
    private static final int GUARDS = 256;
    private static final byte GUARD = (byte) 0xA5;

    private MscclMisuseMain() {
    }

    /**
     * @param args none
     */
    public static void main(String[] args) {
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(Duration.ofSeconds(60));
        EnvBootstrap boot = EnvBootstrap.fromEnvironment();
        Mp mp = Mp.init(boot, cfg);
        Collectives coll = Collectives.host(mp);
        new Suite(mp, coll).run();
        System.out.flush();
        // A runtime refuses runs after a failed one, and its close waits for nothing: end here.
        Runtime.getRuntime().halt(0);
    }

    private static final class Suite {
        final Collectives coll;
        final Communicator w;
        final int me;
        final MemorySegment all;
        final MemorySegment a;
        final MemorySegment b;
        final MpRegistration reg;
        final Misuse m = new Misuse();
        final MscclConfig config = MscclConfig.defaults().withTimeout(Duration.ofSeconds(60));

        Suite(Mp mp, Collectives coll) {
            this.coll = coll;
            w = coll.world();
            me = w.rank();
            all = mp.allocate(3L * GUARDS + 8L * COUNT);
            reg = mp.register(all);
            a = all.asSlice(GUARDS, 4L * COUNT);
            b = all.asSlice(2L * GUARDS + 4L * COUNT, 4L * COUNT);
            reset();
        }

        void reset() {
            all.fill(GUARD);
            for (int i = 0; i < COUNT; i++) {
                a.setAtIndex(JAVA_INT, i, me + 1);
                b.setAtIndex(JAVA_INT, i, -7);
            }
        }

        /** The guards and the input are as they were (an MSCCL program's local steps may have written its output). */
        String guardsAndInput() {
            for (int i = 0; i < GUARDS; i++) {
                if (all.get(JAVA_BYTE, i) != GUARD || all.get(JAVA_BYTE, GUARDS + 4L * COUNT + i) != GUARD
                        || all.get(JAVA_BYTE, 2L * GUARDS + 8L * COUNT + i) != GUARD) {
                    return "rank " + me + ": a guard byte changed";
                }
            }
            for (int i = 0; i < COUNT; i++) {
                if (a.getAtIndex(JAVA_INT, i) != me + 1) {
                    return "rank " + me + ": input element " + i + " changed";
                }
            }
            return null;
        }

        String canaries() {
            for (int i = 0; i < GUARDS; i++) {
                if (all.get(JAVA_BYTE, i) != GUARD || all.get(JAVA_BYTE, GUARDS + 4L * COUNT + i) != GUARD
                        || all.get(JAVA_BYTE, 2L * GUARDS + 8L * COUNT + i) != GUARD) {
                    return "rank " + me + ": a guard byte changed";
                }
            }
            for (int i = 0; i < COUNT; i++) {
                if (a.getAtIndex(JAVA_INT, i) != me + 1 || b.getAtIndex(JAVA_INT, i) != -7) {
                    return "rank " + me + ": element " + i + " changed";
                }
            }
            return null;
        }

        /** The communicator's built-in collectives still work after the refusal. */
        String builtinsWork() {
            w.allreduce(a, reg, b, reg, COUNT, DataType.INT32, ReduceOp.SUM);
            int got = b.getAtIndex(JAVA_INT, 0);
            reset();
            w.barrier();
            return got == 3 ? null : "rank " + me + ": the built-in allreduce after the refusal gave " + got;
        }

        MscclRuntime runtime(boolean program) {
            return MscclRuntime.open(coll, program ? MscclPrograms.of(List.of(AllPairsPrograms.of(Collective.ALLREDUCE,
                    2, false), AllPairsPrograms.of(Collective.ALLGATHER, 2, false))) : MscclPrograms.none(), config);
        }

        static final String AGREE = " but other ranks chose otherwise: load the same programs and pass the same count,"
                + " type, operator and root on every rank, in the same form";

        String chose(String what) {
            return "rank " + me + " of communicator 0 of 2 ranks (world [0, 1]) chose " + what + AGREE;
        }

        static final String PROGRAM = "with MSCCL program 'builtin_allpairs_allreduce'";

        void run() {
            Misuse.Check canaries = this::canaries;
            Misuse.Check builtins = this::builtinsWork;
            MscclRuntime differentPrograms = runtime(me == 0);
            m.expect("programs-differ", IllegalStateException.class, chose("allreduce of 64 INT32 SUM out of place,"
                    + " blocking, on communicator 0, " + (me == 0 ? PROGRAM : "with the built-in algorithm")),
                    () -> differentPrograms.allreduce(w, a, reg, b, reg, COUNT, DataType.INT32, ReduceOp.SUM),
                    canaries, builtins);
            MscclRuntime counts = runtime(true);
            m.expect("counts-differ", IllegalStateException.class, chose("allreduce of " + (me == 0 ? COUNT : COUNT / 2)
                    + " INT32 SUM out of place, blocking, on communicator 0, " + PROGRAM),
                    () -> counts.allreduce(w, a, reg, b, reg, me == 0 ? COUNT : COUNT / 2, DataType.INT32,
                            ReduceOp.SUM), canaries, builtins);
            MscclRuntime roots = runtime(false);
            m.expect("broadcast-roots-differ", IllegalStateException.class, chose("broadcast from rank " + me
                    + " of 64 INT32 out of place, blocking, on communicator 0, with the built-in algorithm"),
                    () -> roots.broadcast(w, b, reg, COUNT, DataType.INT32, me), canaries, builtins);
            MscclRuntime later = runtime(true);
            later.allreduce(w, a, reg, b, reg, COUNT, DataType.INT32, ReduceOp.SUM);
            later.allgather(w, a.asSlice(0, 4L * COUNT / 2), reg, b, reg, COUNT / 2, DataType.INT32);
            reset();
            w.barrier();
            String allreduce = "allreduce of 64 INT32 SUM out of place, blocking, on communicator 0, " + PROGRAM;
            String allgather = "allgather of 32 INT32 out of place, blocking, on communicator 0, with MSCCL program"
                    + " 'builtin_allpairs_allgather'";
            String mine = me == 0 ? allreduce : allgather;
            String theirs = me == 0 ? allgather : allreduce;
            m.expect("later-kinds-differ", CollectiveException.class, "rank " + me + " of communicator 0 of 2 ranks"
                    + " (world [0, 1]): " + mine + " (its call #3), ...", () -> {
                if (me == 0) {
                    later.allreduce(w, a, reg, b, reg, COUNT, DataType.INT32, ReduceOp.SUM);
                } else {
                    later.allgather(w, a.asSlice(0, 4L * COUNT / 2), reg, b, reg, COUNT / 2, DataType.INT32);
                }
            }, this::guardsAndInput);
            m.expect("refused-after-a-failed-run", IllegalStateException.class, "an earlier run failed, so the"
                    + " connections are out of step: rank " + me + " of communicator 0 of 2 ranks (world [0, 1]): " + mine
                    + " (its call #3), ...",
                    () -> later.allreduce(w, a, reg, b, reg, COUNT, DataType.INT32, ReduceOp.SUM), this::guardsAndInput);
            m.done();
        }
    }
}
