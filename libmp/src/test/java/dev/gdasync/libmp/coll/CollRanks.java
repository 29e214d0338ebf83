package dev.gdasync.libmp.coll;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.LocalBootstrap;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/** Runs a job's ranks as threads of this JVM, each with its own Mp and Collectives; reports the first failure. */
final class CollRanks {
    interface Body {
        void run(Collectives coll) throws Exception;
    }

    private CollRanks() {
    }

    static void run(int n, Path base, Body body) throws Exception {
        MpConfig config = MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base))
                .withWaitTimeout(Duration.ofSeconds(20));
        List<Bootstrap> boots = LocalBootstrap.group(n, Duration.ofSeconds(30));
        AtomicReferenceArray<Throwable> failures = new AtomicReferenceArray<>(n);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            Bootstrap boot = boots.get(r);
            int rank = r;
            threads.add(Thread.ofPlatform().name("coll-rank-" + r).start(() -> {
                try (boot; Mp mp = Mp.init(boot, config); Collectives coll = Collectives.open(mp)) {
                    body.run(coll);
                } catch (Throwable e) {
                    failures.set(rank, e);
                    boot.close();
                }
            }));
        }
        for (Thread t : threads) {
            t.join(180_000);
            if (t.isAlive()) {
                throw new AssertionError(t.getName() + " did not finish within 180 s");
            }
        }
        for (int r = 0; r < n; r++) {
            if (failures.get(r) != null) {
                throw new AssertionError("rank " + r + " failed: " + failures.get(r), failures.get(r));
            }
        }
    }

    /** The reference content of the byte at {@code i} of what {@code from} sends {@code to}. */
    static byte pattern(int from, int to, long i, int salt) {
        return (byte) (from * 31 + to * 7 + i * 13 + (i >>> 8) + salt);
    }
}
