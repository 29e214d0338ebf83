package dev.gdasync.libmp.shmem;

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
        List<Bootstrap> boots = LocalBootstrap.group(n, Duration.ofSeconds(30));
        AtomicReferenceArray<Throwable> failures = new AtomicReferenceArray<>(n);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            Bootstrap boot = boots.get(r);
            int rank = r;
            threads.add(Thread.ofPlatform().name("pe-" + r).start(() -> {
                try (boot; Mp mp = Mp.init(boot, config); Shmem shmem = Shmem.init(mp, heapBytes)) {
                    body.run(shmem);
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
                throw new AssertionError("PE " + r + " failed: " + failures.get(r), failures.get(r));
            }
        }
    }
}
