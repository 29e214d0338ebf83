package dev.gdasync.libmp.ga;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.testutil.ThreadRanks;

import java.nio.file.Path;
import java.time.Duration;

/** Runs a job's ranks as threads of this JVM, each with its own Mp and GlobalArrays runtime; reports the first failure. */
final class GaRanks {
    interface Body {
        void run(GlobalArrays ga) throws Exception;
    }

    private GaRanks() {
    }

    static void run(int n, Path base, Body body) throws Exception {
        MpConfig config = MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base))
                .withWaitTimeout(Duration.ofSeconds(20));
        ThreadRanks.run(n, config, "ga-rank", Duration.ofSeconds(180), mp -> {
            try (GlobalArrays ga = new GlobalArrays(mp)) {
                body.run(ga);
            }
        });
    }
}
