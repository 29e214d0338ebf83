package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.testutil.ThreadRanks;

import java.nio.file.Path;
import java.time.Duration;

/** Runs a job's PEs as threads of this JVM, each with its own Mp and Shmem runtime; reports the first failure. */
final class ShmemRanks {
    interface Body {
        void run(Shmem shmem) throws Exception;
    }

    private ShmemRanks() {
    }

    static MpConfig config(Path base, Duration waitTimeout) {
        return MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base)).withWaitTimeout(waitTimeout);
    }

    static void run(int n, Path base, long heapBytes, Body body) throws Exception {
        run(n, config(base, Duration.ofSeconds(20)), heapBytes, body);
    }

    static void run(int n, MpConfig config, long heapBytes, Body body) throws Exception {
        ThreadRanks.run(n, config, "pe", Duration.ofSeconds(180), mp -> {
            try (Shmem shmem = Shmem.init(mp, heapBytes)) {
                body.run(shmem);
            }
        });
    }
}
