package dev.gdasync.apps.pingpong;

import dev.gdasync.ki.HostKiExecutor;
import dev.gdasync.ki.KiExecutor;

import java.io.PrintStream;

/** Picks the executor of the {@code ki} mode: the GPU when there is one, else the host KI executor. */
final class KiExecutors {
    private KiExecutors() {
    }

    /**
     * @param name      names the executor's threads
     * @param cpus      CPUs to pin the host executor's kernel thread to, or none
     * @param afterRing the host executor's after-ring hook (the NIC's {@code progressStoreRings})
     * @param out       where to say which executor runs, or null to stay quiet
     * @return the executor
     */
    static KiExecutor open(String name, int[] cpus, Runnable afterRing, PrintStream out) {
        // The kernel thread runs the NIC's work for its own rings: on a machine with few CPUs, waiting for
        // the agent thread to be scheduled costs far more than the work itself (docs/ki.md, "On the host").
        KiExecutor host = HostKiExecutor.create(name, HostKiExecutor.Options.defaults().withCpus(cpus).withAfterRing(afterRing));
        if (out != null) {
            out.println("ki: host KI executor (kernel threads " + (cpus.length > 0 ? "pinned to distinct CPUs" : "not pinned") + ")");
        }
        return host;
    }
}
