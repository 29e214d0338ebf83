package dev.gdasync.libmp.coll;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.testutil.ThreadRanks;

import java.nio.file.Path;
import java.time.Duration;

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
        ThreadRanks.run(n, config, "coll-rank", Duration.ofSeconds(180), mp -> {
            try (Collectives coll = Collectives.open(mp)) {
                body.run(coll);
            }
        });
    }

    /** The reference content of the byte at {@code i} of what {@code from} sends {@code to}. */
    static byte pattern(int from, int to, long i, int salt) {
        return (byte) (from * 31 + to * 7 + i * 13 + (i >>> 8) + salt);
    }
}
