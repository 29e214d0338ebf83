package dev.gdasync.libmp.testutil;

import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.coll.CollRequest;
import dev.gdasync.libmp.coll.CollectiveException;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.Group;
import dev.gdasync.libmp.coll.offload.CollProxy;
import dev.gdasync.libmp.coll.offload.ProxyQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A rank of the offload launcher tests ({@code collrank}), under {@code mprun --proxies}. Modes:
 * <ul>
 * <li>{@code check}: alltoall, allgather, bcast from every root (1 B, 9000 B, 300 005 B) and a group ring
 * broadcast, each compared with the reference after its wait; on the offload engine the rank first computes without
 * calling test until the receive buffer is full; prints "offloaded BOOLEAN" and "collectives ok";</li>
 * <li>{@code victim V}: rank V prints "ready PID" and sleeps (to be killed); the others post an alltoall, print
 * "posted PID", wait, and print "failed: MESSAGE" and exit 3 when it fails;</li>
 * <li>{@code proxykill}: every rank prints "proxy PID" (read from the proxy's queue); rank 0 posts an alltoall
 * that rank 1 never joins and prints "posted"; the test kills the proxy; rank 0 prints "failed: MESSAGE" and exits
 * 3; the others sleep;</li>
 * <li>{@code noproxy}: prints "refused: MESSAGE" from the offload engine when the job has no proxy.</li>
 * </ul>
 */
public final class CollRankMain {
    private static boolean offloaded;

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
                        offloaded = coll.offloaded();
                        System.out.println("offloaded " + offloaded);
                        for (long bytes : new long[] {1, 9000, 300_005}) {
                            check(mp, world, bytes);
                        }
                        ring(mp, world);
                        System.out.println("collectives ok");
                    }
                    case "victim" -> {
                        if (me == Integer.parseInt(args[1])) {
                            System.out.println("ready " + ProcessHandle.current().pid());
                            Thread.sleep(120_000);
                            return;
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

    private static byte pattern(int from, int to, long i) {
        return (byte) (from * 31 + to * 7 + i * 13 + (i >>> 8));
    }

    private static void check(Mp mp, Communicator world, long bytes) {
        int me = world.rank();
        int n = world.size();
        MemorySegment send = mp.allocate(n * bytes);
        MemorySegment recv = mp.allocate(n * bytes);
        MpRegistration sr = mp.register(send);
        MpRegistration rr = mp.register(recv);
        byte[] expect = new byte[(int) (n * bytes)];
        for (int j = 0; j < n; j++) {
            for (long i = 0; i < bytes; i++) {
                send.set(ValueLayout.JAVA_BYTE, j * bytes + i, pattern(me, j, i));
                expect[(int) (j * bytes + i)] = pattern(j, me, i);
            }
        }
        CollRequest r = world.ialltoall(send, sr, recv, rr, bytes);
        computeUntil(recv, expect, "alltoall " + bytes);
        world.wait(r);
        same(recv, expect, "alltoall " + bytes);
        for (int j = 0; j < n; j++) {
            for (long i = 0; i < bytes; i++) {
                expect[(int) (j * bytes + i)] = pattern(j, 0, i);
            }
        }
        r = world.iallgather(send.asSlice(0, bytes), sr, recv, rr);
        computeUntil(recv, expect, "allgather " + bytes);
        world.wait(r);
        same(recv, expect, "allgather " + bytes);
        for (int root = 0; root < n; root++) {
            byte[] b = new byte[(int) bytes];
            MemorySegment buf = recv.asSlice(0, bytes);
            for (long i = 0; i < bytes; i++) {
                b[(int) i] = pattern(root, 77, i);
                buf.set(ValueLayout.JAVA_BYTE, i, me == root ? b[(int) i] : 0);
            }
            r = world.ibcast(buf, rr, root);
            computeUntil(buf, b, "bcast " + bytes + " from " + root);
            world.wait(r);
            same(buf, b, "bcast " + bytes + " from " + root);
        }
        world.allgather(send.asSlice(0, 1), sr, recv.asSlice(0, n), rr);
    }

    private static void ring(Mp mp, Communicator world) {
        int me = world.rank();
        int n = world.size();
        MemorySegment buf = mp.allocate(70_000);
        MpRegistration reg = mp.register(buf);
        byte[] expect = new byte[70_000];
        for (int i = 0; i < expect.length; i++) {
            expect[i] = pattern(0, 5, i);
            buf.set(ValueLayout.JAVA_BYTE, i, me == 0 ? expect[i] : 0);
        }
        Group g = world.groupStart();
        if (me == 0) {
            g.send(buf, reg, 1);
        } else {
            int got = g.recv(buf, reg, me - 1);
            if (me + 1 < n) {
                g.send(buf, reg, me + 1, got);
            }
        }
        g.groupEnd();
        CollRequest r = g.groupCall();
        computeUntil(buf, expect, "ring broadcast");
        world.wait(r);
        same(buf, expect, "ring broadcast");
    }

    private static void same(MemorySegment buf, byte[] expect, String what) {
        long at = buf.asSlice(0, expect.length).mismatch(MemorySegment.ofArray(expect));
        if (at >= 0) {
            throw new AssertionError(what + ": byte " + at + " differs from the reference");
        }
    }

    /** Offload: computes without test until the buffer is full. Host: nothing (the wait after it moves the data). */
    private static void computeUntil(MemorySegment buf, byte[] expect, String what) {
        if (!offloaded) {
            return;
        }
        MemorySegment want = MemorySegment.ofArray(expect);
        long deadline = System.nanoTime() + 30_000_000_000L;
        double sink = 0;
        while (buf.asSlice(0, expect.length).mismatch(want) >= 0) {
            for (int i = 0; i < 1000; i++) {
                sink += Math.sqrt(i + sink);
            }
            Thread.yield();
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + ": not filled within 30 s without test calls " + sink);
            }
        }
    }
}
