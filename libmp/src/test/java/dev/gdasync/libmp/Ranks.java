package dev.gdasync.libmp;

import dev.gdasync.gdsync.mlx5.CqWaitMode;
import dev.gdasync.gdsync.mlx5.provider.Mlx5Config;
import dev.gdasync.gdsync.nic.NicConfig;
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

    /**
     * The system property naming the provider the job's tests run on: {@code swnic} (the default) or {@code mlx5}
     * (the mlx5 provider on the software mlx5 device); the build runs the exercise once with each.
     */
    static final String NIC_PROPERTY = "gdasync.test.nic";

    static MpConfig config(Path base) {
        return MpConfig.defaults().withNic(nic(SwNicConfig.defaults().withShmBase(base))).withWaitTimeout(Duration.ofSeconds(20));
    }

    /** @return the tests' provider over a software NIC with these settings */
    static NicConfig nic(SwNicConfig sw) {
        return switch (System.getProperty(NIC_PROPERTY, SwNicConfig.PROVIDER)) {
            case Mlx5Config.PROVIDER -> new Mlx5Config(Mlx5Config.SOFT, 1, 0, CqWaitMode.OWNER, sw);
            case SwNicConfig.PROVIDER -> sw;
            default -> throw new IllegalArgumentException(NIC_PROPERTY + " must be swnic or mlx5, got "
                    + System.getProperty(NIC_PROPERTY));
        };
    }

    /** @return the configuration with another receiver-not-ready timeout on whichever provider it uses */
    static MpConfig withRnrTimeout(MpConfig config, Duration rnr) {
        return switch (config.nic()) {
            case SwNicConfig sw -> config.withNic(sw.withRnrTimeout(rnr));
            case Mlx5Config m -> config.withNic(m.withSoftware(m.software().withRnrTimeout(rnr)));
            default -> throw new IllegalArgumentException("no RNR timeout for " + config.nic());
        };
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
