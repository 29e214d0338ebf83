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

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;

/**
 * A rank program for {@link MscclProcessTest}, run by the launcher. {@code victim}: two ranks agree on an allreduce
 * program and run it twice; rank 1 then prints {@code ready PID} and sleeps until the test kills it, rank 0 prints
 * {@code posted}, calls once more, and prints {@code failed: MESSAGE} when the call fails (or {@code finished}).
 */
public final class MscclRankMain {
    private MscclRankMain() {
    }

    /**
     * @param args {@code victim}
     * @throws Exception anything
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].equals("victim")) {
            throw new IllegalArgumentException("usage: MscclRankMain victim");
        }
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(Duration.ofSeconds(60));
        EnvBootstrap boot = EnvBootstrap.fromEnvironment();
        Mp mp = Mp.init(boot, cfg);
        Collectives coll = Collectives.open(mp);
        MscclRuntime rt = MscclRuntime.open(coll, MscclPrograms.of(List.of(
                AllPairsPrograms.of(Collective.ALLREDUCE, 2, true))), MscclConfig.defaults()
                .withTimeout(Duration.ofSeconds(60)));
        Communicator comm = coll.world();
        MemorySegment a = mp.allocate(4 * 64);
        MpRegistration ar = mp.register(a);
        for (int i = 0; i < 2; i++) {
            rt.allreduce(comm, a, ar, a, ar, 64, DataType.INT32, ReduceOp.SUM).orElseThrow();
        }
        if (comm.rank() == 1) {
            System.out.println("ready " + ProcessHandle.current().pid());
            System.out.flush();
            Thread.sleep(Duration.ofMinutes(5));
            return;
        }
        System.out.println("posted");
        System.out.flush();
        try {
            rt.allreduce(comm, a, ar, a, ar, 64, DataType.INT32, ReduceOp.SUM);
            System.out.println("finished");
        } catch (CollectiveException e) {
            System.out.println("failed: " + e.getMessage());
        }
        System.out.flush();
        // The peer is gone: closing would wait for it in the collective close; the test has what it needs.
        Runtime.getRuntime().halt(0);
    }
}
