package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.libmp.Mp;

import java.time.Duration;

/** The host KI executor of one test rank and the launcher that runs the MSCCL KI form on it. */
final class KiRanks {
    private KiRanks() {
    }

    /** An executor whose block threads also run the NIC's work for their rings (few CPUs here). */
    static HostKiExecutor executor(Mp mp) {
        return HostKiExecutor.create("msccl-ki-" + mp.rank(),
                HostKiExecutor.Options.defaults().withAfterRing(mp::progressStoreRings)
                        .withWaitBackoff(MscclConfig.WAIT_BACKOFF));
    }

    static MscclKiLauncher launcher(HostKiExecutor executor) {
        return MscclKiLauncher.of(executor, l -> executor.msccl(l.table(), l.state(), l.program(), l.blocks(),
                l.firstTile(), l.endTile()).join(Duration.ofSeconds(120)));
    }
}
