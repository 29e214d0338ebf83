package dev.gdasync.libmp;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.LocalBootstrap;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/** Runs the ranks of a job as threads of this JVM, each with its own Mp, and reports the first failure. */
final class Ranks {
    /** What one rank does. */
    interface Body {
        void run(Mp mp) throws Exception;
    }

    private Ranks() {
    }

    static MpConfig config(Path base) {
        return MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base)).withWaitTimeout(Duration.ofSeconds(20));
    }

    static void run(int n, Path base, Body body) throws Exception {
        run(n, config(base), body);
    }

    static void run(int n, MpConfig config, Body body) throws Exception {
        List<Bootstrap> boots = LocalBootstrap.group(n, Duration.ofSeconds(30));
        AtomicReferenceArray<Throwable> failures = new AtomicReferenceArray<>(n);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            Bootstrap boot = boots.get(r);
            int rank = r;
            Thread t = Thread.ofPlatform().name("rank-" + r).start(() -> {
                try (boot; Mp mp = Mp.init(boot, config)) {
                    body.run(mp);
                } catch (Throwable e) {
                    failures.set(rank, e);
                    boot.close();
                }
            });
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(120));
            if (t.isAlive()) {
                throw new AssertionError(t.getName() + " did not finish within 120 s");
            }
        }
        for (int r = 0; r < n; r++) {
            Throwable f = failures.get(r);
            if (f != null) {
                AssertionError e = new AssertionError("rank " + r + " failed: " + f, f);
                for (int q = r + 1; q < n; q++) {
                    if (failures.get(q) != null) {
                        e.addSuppressed(failures.get(q));
                    }
                }
                throw e;
            }
        }
    }
}
