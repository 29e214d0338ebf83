package dev.gdasync.libmp.testutil;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.LocalBootstrap;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Runs the ranks of a job as threads of this JVM, each with its own bootstrap and Mp, and reports every rank's failure
 * (the lowest rank's as the cause, the others suppressed and named in the message). A failing rank closes its
 * bootstrap, so the others' waits fail instead of hanging. The libmp test suites' runners (plain Mp, global arrays,
 * collectives, shmem) put their runtime on top of this.
 */
public final class ThreadRanks {
    /** What one rank does with its Mp. */
    public interface Body {
        /**
         * @param mp the rank's Mp, closed after this returns
         * @throws Exception anything: reported as the rank's failure
         */
        void run(Mp mp) throws Exception;
    }

    private ThreadRanks() {
    }

    /**
     * @param n      the ranks
     * @param config every rank's Mp configuration
     * @param name   the threads' name and the failures' noun, such as "rank" or "PE"
     * @param join   how long each thread may take
     * @param body   what each rank does
     * @throws Exception an {@link AssertionError} naming the first rank that failed or did not finish
     */
    public static void run(int n, MpConfig config, String name, Duration join, Body body) throws Exception {
        List<Bootstrap> boots = LocalBootstrap.group(n, Duration.ofSeconds(30));
        AtomicReferenceArray<Throwable> failures = new AtomicReferenceArray<>(n);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            Bootstrap boot = boots.get(r);
            int rank = r;
            threads.add(Thread.ofPlatform().name(name + "-" + r).start(() -> {
                try (boot; Mp mp = Mp.init(boot, config)) {
                    body.run(mp);
                } catch (Throwable e) {
                    failures.set(rank, e);
                    boot.close();
                }
            }));
        }
        for (Thread t : threads) {
            t.join(join.toMillis());
            if (t.isAlive()) {
                throw new AssertionError(t.getName() + " did not finish within " + join.toSeconds() + " s");
            }
        }
        for (int r = 0; r < n; r++) {
            Throwable f = failures.get(r);
            if (f != null) {
                // Every failing rank in the message: the first by number is often only the echo of another's
                // failure (its bootstrap closed), and a CI log shows the message alone.
                StringBuilder message = new StringBuilder(name + " " + r + " failed: " + f);
                for (int q = r + 1; q < n; q++) {
                    if (failures.get(q) != null) {
                        message.append("; ").append(name).append(' ').append(q).append(" failed: ").append(failures.get(q));
                    }
                }
                AssertionError e = new AssertionError(message.toString(), f);
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
