package dev.gdasync.libmp.coll.reduce;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.shm.ShmChannel;
import dev.gdasync.libmp.testutil.ThreadRanks;

import java.nio.file.Path;
import java.time.Duration;

/** Runs a job's ranks as threads of this JVM, each with its Collectives and world reducing collectives. */
final class ReduceRanks {
    interface Body {
        void run(Collectives coll, ReducingCollectives red) throws Exception;
    }

    private ReduceRanks() {
    }

    static void run(int n, Path base, Body body) throws Exception {
        MpConfig config = MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base))
                .withWaitTimeout(Duration.ofSeconds(20));
        ThreadRanks.run(n, config, "reduce-rank", Duration.ofSeconds(180), mp -> {
            try (Collectives coll = Collectives.open(mp);
                 ReducingCollectives red = ReducingCollectives.of(coll.world())) {
                if (coll.world().sharedMemory() != (ShmChannel.enabled() && n > 1)) {
                    throw new AssertionError("the shared-memory path was " + (coll.world().sharedMemory() ? "" : "not ")
                            + "taken");
                }
                body.run(coll, red);
            }
        });
    }
}
