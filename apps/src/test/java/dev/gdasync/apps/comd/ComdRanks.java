package dev.gdasync.apps.comd;

import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.ki.KiExecutor;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.LocalBootstrap;
import dev.gdasync.libmp.cli.CommandLines;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/** Runs CoMD on ranks that are threads of this JVM, each with its own Mp over the software NIC, in one libmp mode. */
final class ComdRanks {
    private ComdRanks() {
    }

    /** @return the options of a command line (CoMD's options and --mode) */
    static ComdOptions options(String... args) {
        ComdCommand c = new ComdCommand();
        CommandLines.parseOrThrow(c.commandLine(), args);
        return c.options();
    }

    /** @return the options of a command line given as one string */
    static ComdOptions options(String line) {
        return options(line.strip().split("\\s+"));
    }

    /**
     * Runs one mode on {@code o.ranks()} thread ranks.
     *
     * @param base  the folder for the shared-memory files
     * @param o     the run
     * @param mode  host, sa or ki
     * @param hooks what the run lets the test do (called on every rank)
     * @return rank 0's result
     */
    static RunResult run(Path base, ComdOptions o, Mode mode, ComdRun.Hooks hooks) throws Exception {
        int n = o.ranks();
        Potential pot = Comd.potential(o);
        Comd.sanityChecks(o, pot, n);
        List<Bootstrap> boots = LocalBootstrap.group(n, Duration.ofSeconds(60));
        MpConfig config = MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base))
                .withQueuePairs(new QueuePairConfig(1024, 1024, 2048)).withWaitTimeout(Duration.ofSeconds(30));
        AtomicReferenceArray<Throwable> failures = new AtomicReferenceArray<>(n);
        RunResult[] results = new RunResult[n];
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            Bootstrap boot = boots.get(r);
            int rank = r;
            threads.add(Thread.ofPlatform().name("comd-rank-" + r).start(() -> {
                try (boot; Mp mp = Mp.init(boot, config)) {
                    KiExecutor ki = mode == Mode.KI ? HostKiExecutor.create("comd-test-ki-" + rank,
                            HostKiExecutor.Options.defaults().withAfterRing(mp::progressStoreRings)) : null;
                    try (LibmpCollectives coll = new LibmpCollectives(mp)) {
                        results[rank] = ComdRun.run(o, pot, coll, Comd.driverOf(mode, mp, ki), mode.label(), null, hooks);
                    } finally {
                        if (ki != null) {
                            ki.close();
                        }
                    }
                } catch (Throwable e) {
                    failures.set(rank, e);
                    boot.abort("rank " + rank + " failed: " + e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(300));
            if (t.isAlive()) {
                throw new AssertionError(t.getName() + " did not finish within 300 s");
            }
        }
        for (int r = 0; r < n; r++) {
            if (failures.get(r) != null) {
                throw new AssertionError("rank " + r + " of " + o + " in " + mode + " failed", failures.get(r));
            }
        }
        return results[0];
    }

    /** @return the command line with {@code extra} appended */
    static String[] with(String line, String... extra) {
        String[] a = line.strip().split("\\s+");
        String[] out = Arrays.copyOf(a, a.length + extra.length);
        System.arraycopy(extra, 0, out, a.length, extra.length);
        return out;
    }
}
