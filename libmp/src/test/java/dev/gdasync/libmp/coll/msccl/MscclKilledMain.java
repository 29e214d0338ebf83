package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.testutil.KilledMidCall;

import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rank main of {@link MscclKilledMidCallTest}: an MSCCL program's allreduce blocking (the host interpreter), on a
 * host stream and from the host KI executor, and the runtime's built-in broadcast, made by ranks 0 and 2 while rank
 * 1 is killed (see {@link KilledMidCall}). Every rank runs each call once before, so the blocked call is a repeat
 * that makes no agreement.
 */
public final class MscclKilledMain {
    private static final int COUNT = 64;

    /** The cases by name. */
    public static final Map<String, KilledMidCall.Setup> CASES = new LinkedHashMap<>();
    static {
        CASES.put("allreduce", mp -> {
            Run r = new Run(mp, KilledMidCall.LAYER_TIMEOUT);
            KilledMidCall.BlockingCall call = () -> r.rt.allreduce(r.w, r.a, r.reg, r.a, r.reg, COUNT, DataType.INT32,
                    ReduceOp.SUM).orElseThrow();
            call.call();
            return call;
        });
        CASES.put("allreduceOnStream", mp -> {
            Run r = new Run(mp, KilledMidCall.LAYER_TIMEOUT);
            HostStream stream = HostStream.create("kill-msccl-" + mp.rank());
            KilledMidCall.BlockingCall call = () -> {
                r.rt.allreduceOnStream(r.w, r.a, r.reg, r.a, r.reg, COUNT, DataType.INT32, ReduceOp.SUM, stream)
                        .orElseThrow();
                stream.synchronize();
            };
            call.call();
            return call;
        });
        CASES.put("allreduceKi", mp -> {
            Run r = new Run(mp, KilledMidCall.LAYER_TIMEOUT);
            HostKiExecutor executor = KiRanks.executor(mp);
            MscclKiLauncher launcher = KiRanks.launcher(executor);
            KilledMidCall.BlockingCall call = () -> r.rt.allreduceKi(r.w, r.a, r.reg, r.a, r.reg, COUNT,
                    DataType.INT32, ReduceOp.SUM, launcher).orElseThrow();
            call.call();
            return call;
        });
        CASES.put("broadcast-builtin", mp -> {
            Run r = new Run(mp, KilledMidCall.LAYER_TIMEOUT);
            KilledMidCall.BlockingCall call = () -> r.rt.broadcast(r.w, r.a, r.reg, COUNT, DataType.INT32,
                    KilledMidCall.VICTIM);
            call.call();
            return call;
        });
    }

    private MscclKilledMain() {
    }

    /** A runtime with the all-pairs allreduce program for three ranks, and a registered buffer of COUNT int32; waits end after the timeout. */
    private static final class Run {
        final MscclRuntime rt;
        final Communicator w;
        final MemorySegment a;
        final MpRegistration reg;

        Run(Mp mp, java.time.Duration timeout) {
            Collectives coll = Collectives.host(mp);
            rt = MscclRuntime.open(coll, MscclPrograms.of(List.of(AllPairsPrograms.of(Collective.ALLREDUCE,
                    KilledMidCall.RANKS, true))), MscclConfig.defaults().withTimeout(timeout));
            w = coll.world();
            a = mp.allocate(4L * COUNT);
            reg = mp.register(a);
        }
    }

    /**
     * @param args see {@link KilledMidCall#rankMain}
     * @throws InterruptedException if interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        KilledMidCall.rankMain(args, CASES);
    }
}
