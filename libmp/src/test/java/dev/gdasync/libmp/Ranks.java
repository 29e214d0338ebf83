package dev.gdasync.libmp;

import dev.gdasync.gdsync.mlx5.CqWaitMode;
import dev.gdasync.gdsync.mlx5.provider.Mlx5Config;
import dev.gdasync.gdsync.nic.NicConfig;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.testutil.ThreadRanks;

import java.nio.file.Path;
import java.time.Duration;

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
        ThreadRanks.run(n, config, "rank", Duration.ofSeconds(120), body::run);
    }
}
