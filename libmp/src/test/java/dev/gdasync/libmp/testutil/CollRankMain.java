package dev.gdasync.libmp.testutil;

import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.coll.CollRequest;
import dev.gdasync.libmp.coll.CollectiveException;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.proxy.CollProxy;
import dev.gdasync.libmp.coll.offload.ProxyQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A rank of the offload launcher tests, run by its class name under {@code mprun --proxies}. Modes:
 * <ul>
 * <li>{@code check}: alltoall, allgather, bcast from every root (9000 B, 300 005 B) and a group ring
 * broadcast, each compared with the reference after its wait; on the offload engine the rank first computes without
 * calling test until the receive buffer is full; prints "offloaded BOOLEAN" and "collectives ok";</li>
 * <li>{@code switches}: every collective on each side of every switch point of the shared-memory path (prints
 * "shared BOOLEAN" and "switches ok");</li>
 * <li>{@code matrix}: the same for blocks of 1 B, 4 KiB, 64 KiB + 1, 1 MiB and 4 MiB (the size range; too
 * slow for CI on two CPUs, run by the big tests);</li>
 * <li>{@code victim V}: rank V prints "ready PID" and sleeps (to be killed); the others print "proxy PID" (their
 * host's proxy, on the offload engine), post an alltoall, print "posted PID", wait, and print "failed: MESSAGE" and
 * exit 3 when it fails;</li>
 * <li>{@code proxykill}: every rank prints "proxy PID" (read from the proxy's queue); rank 0 posts an alltoall
 * that rank 1 never joins and prints "posted"; the test kills the proxy; rank 0 prints "failed: MESSAGE" and exits
 * 3; the others sleep;</li>
 * <li>{@code noproxy}: prints "refused: MESSAGE" from the offload engine when the job has no proxy.</li>
 * </ul>
 */
public final class CollRankMain {
    private CollRankMain() {
    }

    public static void main(String[] args) throws Exception {
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(Duration.ofSeconds(30));
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot, cfg)) {
            if (args[0].equals("noproxy")) {
                try (Collectives c = Collectives.offload(mp)) {
                    System.out.println("unexpected: offload opened");
                } catch (IllegalStateException e) {
                    System.out.println("refused: " + e.getMessage());
                }
                return;
            }
            try (Collectives coll = Collectives.open(mp)) {
                Communicator world = coll.world();
                int me = world.rank();
                int n = world.size();
                switch (args[0]) {
                    case "check" -> {
                        boolean offloaded = coll.offloaded();
                        System.out.println("offloaded " + offloaded);
                        for (long bytes : new long[] {9000, 300_005}) {
                            CollChecks.alltoallAllgatherBcast(mp, world, bytes, offloaded);
                        }
                        CollChecks.ringBroadcast(mp, world, 70_000, offloaded);
                        System.out.println("collectives ok");
                    }
                    case "switches" -> {
                        System.out.println("shared " + world.sharedMemory());
                        CollChecks.everySwitch(mp, world);
                        System.out.println("switches ok");
                    }
                    case "matrix" -> {
                        boolean offloaded = coll.offloaded();
                        System.out.println("offloaded " + offloaded);
                        for (long bytes : new long[] {1, 4096, 65_537, 1 << 20, 4 << 20}) {
                            CollChecks.alltoallAllgatherBcast(mp, world, bytes, offloaded);
                            System.out.println("matrix " + bytes + " ok");
                        }
                        CollChecks.ringBroadcast(mp, world, 4 << 20, offloaded);
                        System.out.println("collectives ok");
                    }
                    case "victim" -> {
                        if (me == Integer.parseInt(args[1])) {
                            System.out.println("ready " + ProcessHandle.current().pid());
                            Thread.sleep(120_000);
                            return;
                        }
                        if (coll.offloaded()) {
                            System.out.println("proxy " + attach().proxyPid());
                        }
                        waitForFailure(mp, world, n);
                    }
                    case "proxykill" -> {
                        ProxyQueue q = attach();
                        System.out.println("proxy " + q.proxyPid());
                        if (me == 0) {
                            waitForFailure(mp, world, n);
                        }
                        Thread.sleep(120_000);
                    }
                    default -> throw new IllegalArgumentException(args[0]);
                }
            }
        }
    }

    private static void waitForFailure(Mp mp, Communicator world, int n) {
        MemorySegment send = mp.allocate(n * 100_000L);
        MemorySegment recv = mp.allocate(n * 100_000L);
        CollRequest r = world.ialltoall(send, mp.register(send), recv, mp.register(recv), 100_000);
        System.out.println("posted " + ProcessHandle.current().pid());
        try {
            world.wait(r);
            System.out.println("unexpected: the alltoall finished");
        } catch (CollectiveException e) {
            System.out.println("failed: " + e.getMessage());
            System.out.flush();
            Runtime.getRuntime().halt(3);
        }
    }

    private static ProxyQueue attach() throws Exception {
        Path queue = Path.of(Files.readString(Path.of(System.getenv(CollProxy.LOCATOR_ENV))).trim());
        return ProxyQueue.attach(ShmDirectory.mapExisting(queue, false, Arena.ofAuto()));
    }
}
