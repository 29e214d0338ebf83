package dev.gdasync.libmp.coll;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.coll.offload.CollProxy;
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
        ThreadRanks.run(n, config(base), "coll-rank", Duration.ofSeconds(180), mp -> {
            try (Collectives coll = Collectives.host(mp)) {
                body.run(coll);
            }
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

    /** The reference content of the byte at {@code i} of what {@code from} sends {@code to}. */
    static byte pattern(int from, int to, long i, int salt) {
        return (byte) (from * 31 + to * 7 + i * 13 + (i >>> 8) + salt);
    }
}
