package dev.gdasync.apps.collectives;

import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.coll.msccl.MscclConfig;
import dev.gdasync.libmp.coll.msccl.MscclKiLauncher;

import java.time.Duration;

/** The ki model's executor and launcher: a rank's host KI executor runs the interpreter's launches. */
final class KiLaunch {
    private KiLaunch() {
    }

    /**
     * Block threads also run the NIC's work for their rings, and idle in waits as the interpreter's streams do
     * ({@link MscclConfig#WAIT_BACKOFF}): ranks share few CPUs with the NIC agents.
     */
    static HostKiExecutor executor(Mp mp) {
        return HostKiExecutor.create("collectives-ki-r" + mp.rank(),
                HostKiExecutor.Options.defaults().withAfterRing(mp::progressStoreRings)
                        .withWaitBackoff(MscclConfig.WAIT_BACKOFF));
    }

    static MscclKiLauncher launcher(HostKiExecutor executor) {
        return MscclKiLauncher.of(executor, l -> executor.msccl(l.table(), l.state(), l.program(), l.blocks(),
                l.firstTile(), l.endTile()).join(Duration.ofMinutes(5)));
    }
}
