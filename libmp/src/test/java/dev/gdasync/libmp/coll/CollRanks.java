package dev.gdasync.libmp.coll;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.LocalBootstrap;
import dev.gdasync.libmp.proxy.CollProxy;
import dev.gdasync.libmp.coll.shm.ShmChannel;
import dev.gdasync.libmp.testutil.CollChecks;
import dev.gdasync.libmp.testutil.ThreadRanks;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Runs a job's ranks as threads of this JVM, each with its own Mp and Collectives; reports the first failure. */
final class CollRanks {
    interface Body {
        void run(Collectives coll) throws Exception;
    }

    private CollRanks() {
    }

    static void run(int n, Path base, Body body) throws Exception {
        ThreadRanks.run(n, config(base), "coll-rank", Duration.ofSeconds(180), mp -> {
            try (Collectives coll = Collectives.host(mp)) {
                // Ranks of one JVM map each other's memory: the path is the shared-memory one unless turned off.
                assertEquals(ShmChannel.enabled() && n > 1, coll.world().sharedMemory(), "the path taken");
                body.run(coll);
            }
        });
    }

    /**
     * Runs the ranks on the host engine with the shared-memory path turned off (the message path, as between hosts),
     * the property set for this JVM's ranks while they run.
     */
    static void runMessages(int n, Path base, Body body) throws Exception {
        String was = System.getProperty(ShmChannel.ENABLED_PROPERTY);
        System.setProperty(ShmChannel.ENABLED_PROPERTY, "off");
        try {
            run(n, base, coll -> {
                assertFalse(coll.world().sharedMemory(), "the shared-memory path was turned off");
                body.run(coll);
            });
        } finally {
            if (was == null) {
                System.clearProperty(ShmChannel.ENABLED_PROPERTY);
            } else {
                System.setProperty(ShmChannel.ENABLED_PROPERTY, was);
            }
        }
    }

    /** Runs the ranks on the host engine, checking that they took the shared-memory path. */
    static void runShared(int n, Path base, Body body) throws Exception {
        run(n, base, coll -> {
            assertTrue(coll.world().sharedMemory(), "ranks on one host map each other's memory");
            body.run(coll);
        });
    }

    /** Runs the ranks on the offload engine, with a collective proxy on a thread of this JVM (a NIC of its own). */
    static void runOffload(int n, Path base, Body body) throws Exception {
        try (CollProxy proxy = startProxy(n, base, CollProxy.DEFAULT_THRESHOLD)) {
            ThreadRanks.run(n, config(base), "coll-rank", Duration.ofSeconds(180), mp -> {
                try (Collectives coll = Collectives.offload(mp, locator(base))) {
                    body.run(coll);
                }
            });
        }
    }

    /**
     * Runs the ranks on the offload engine with one proxy per "host" (rank r on host r % hosts), each proxy on a
     * thread of this JVM, the proxies linked through a bootstrap of their own, every rank attached to its host's
     * proxy. One machine's namespace: the links and the writes into another host's ranks use shared memory here, the
     * matching across proxies is the same as between network namespaces (the launcher tests run those).
     */
    static void runOffloadHosts(int n, int hosts, Path base, Body body) throws Exception {
        int[] placement = new int[n];
        for (int r = 0; r < n; r++) {
            placement[r] = r % hosts;
        }
        List<Bootstrap> boots = LocalBootstrap.group(hosts, Duration.ofSeconds(30));
        List<CompletableFuture<CollProxy>> made = new ArrayList<>();
        for (int g = 0; g < hosts; g++) {
            Bootstrap boot = boots.get(g);
            Path locator = locator(base).resolveSibling("coll-proxy-locator-h" + g);
            made.add(CompletableFuture.supplyAsync(() -> new CollProxy(SwNicConfig.defaults().withShmBase(base)
                    .withJobId("coll-proxy-test-h" + boot.rank()), placement, boot, locator, CollProxy.DEFAULT_THRESHOLD)
                    .start(), Executors.newVirtualThreadPerTaskExecutor()));
        }
        List<CollProxy> proxies = new ArrayList<>();
        try {
            for (CompletableFuture<CollProxy> f : made) {
                proxies.add(f.get(60, TimeUnit.SECONDS));
            }
            ThreadRanks.run(n, config(base), "coll-rank", Duration.ofSeconds(180), mp -> {
                Path locator = locator(base).resolveSibling("coll-proxy-locator-h" + placement[mp.rank()]);
                try (Collectives coll = Collectives.offload(mp, locator)) {
                    body.run(coll);
                }
            });
        } finally {
            proxies.forEach(CollProxy::close);
        }
    }

    static CollProxy startProxy(int n, Path base, long threshold) {
        return new CollProxy(SwNicConfig.defaults().withShmBase(base).withJobId("coll-proxy-test"), n, locator(base),
                threshold).start();
    }

    static Path locator(Path base) {
        return base.resolve("coll-proxy-locator");
    }

    static MpConfig config(Path base) {
        return MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base)).withWaitTimeout(Duration.ofSeconds(20));
    }

    /**
     * Rank 0 broadcasts 64 bytes, rank 1 expects 32: the receiver's request (on the offload engine both ranks')
     * fails with the size, the receiver's block stays unwritten, and the next collective works.
     */
    static void disagreeingBcast(Collectives coll) {
        Communicator world = coll.world();
        Mp mp = coll.mp();
        MemorySegment buf = mp.allocate(64);
        MpRegistration reg = mp.register(buf);
        int me = world.rank();
        buf.fill((byte) (me == 0 ? 9 : 3));
        CollRequest r = world.ibcast(me == 0 ? buf : buf.asSlice(0, 32), reg, 0);
        if (world.sharedMemory()) {
            // Every rank reads every other's call before any data moves: both fail at once, naming both calls.
            String mine = "bcast of " + (me == 0 ? 64 : 32) + " bytes from root 0";
            String theirs = "bcast of " + (me == 0 ? 32 : 64) + " bytes from root 0";
            assertEquals(mine + " (#0 on communicator 0, rank " + me + " of 2): rank " + (1 - me) + " called " + theirs
                    + " as its #0: the ranks disagree; nothing was written",
                    assertThrows(CollectiveException.class, () -> world.wait(r)).getMessage());
        } else if (!coll.offloaded()) {
            // The message path: the receiver compares the call in the root's header with its own; the root, whose
            // part only sends, reads the receiver's posted call once its sends were delivered (ranks of one host).
            String mine = "bcast of " + (me == 0 ? 64 : 32) + " bytes from root 0";
            String theirs = "bcast of " + (me == 0 ? 32 : 64) + " bytes from root 0";
            assertEquals(mine + " (#0 on communicator 0, rank " + me + " of 2): rank " + (1 - me) + " called " + theirs
                    + " as its #0: the ranks disagree", assertThrows(CollectiveException.class, () -> world.wait(r))
                    .getMessage());
        } else {
            String why = "ibcast #0 on communicator 0: rank 0 sent 64 bytes but rank 1 expects 32 from it; the block was"
                    + " not written" + (coll.offloaded() ? " (reported by the collective proxy to rank " + me + ")" : "");
            if (me == 0 && !coll.offloaded()) {
                world.wait(r);
            } else {
                assertEquals(why, assertThrows(CollectiveException.class, () -> world.wait(r)).getMessage());
            }
        }
        for (long i = 0; i < 64; i++) {
            assertEquals((byte) (me == 0 ? 9 : 3), buf.get(ValueLayout.JAVA_BYTE, i), "unwritten at " + i);
        }
        MemorySegment one = buf.asSlice(0, 8);
        world.bcast(one, reg, 1);
        assertEquals((byte) 3, one.get(ValueLayout.JAVA_BYTE, 7), "the next collective works");
    }

    /** The reference content of the byte at {@code i} of what {@code from} sends {@code to}. */
    static byte pattern(int from, int to, long i, int salt) {
        return CollChecks.pattern(from, to, i, salt);
    }
}
