package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.KiCopyWork;
import dev.gdasync.ki.KiExchange;
import dev.gdasync.ki.KiLaunchChecks;
import dev.gdasync.ki.KiTemplateArgs;

import java.util.List;
import java.util.Objects;

/**
 * The argument checks of the CUDA executor's launches: those of every executor ({@link KiLaunchChecks}),
 * and what only the built CUDA kernels need, made before anything changes (no registration, no status
 * cleared, no launch).
 */
final class LaunchChecks {
    private LaunchChecks() {
    }

    /** @throws IllegalArgumentException if the ping-pong cannot run over the table with these arguments */
    static void pingPong(KiTable table, int count, long computeNs, long timeoutNs) {
        KiLaunchChecks.pingPong(table, count, computeNs, timeoutNs);
    }

    /**
     * @return the arguments, copied
     * @throws IllegalArgumentException if the table has fewer templates than argument sets
     */
    static List<KiTemplateArgs> sendTemplates(KiTable table, List<KiTemplateArgs> args) {
        return KiLaunchChecks.sendTemplates(table, args);
    }

    /**
     * @return the exchange's work, as copies
     * @throws IllegalArgumentException if the work is not {@link KiCopyWork}, does not match the table, or the
     *                                  timeout is out of range
     */
    static KiCopyWork exchange(KiTable table, KiExchange exchange, long timeoutNs) {
        Objects.requireNonNull(exchange, "exchange");
        if (!(exchange.work() instanceof KiCopyWork work)) {
            throw new IllegalArgumentException("the CUDA exchange kernel runs KiCopyWork (copies between "
                    + "device-visible buffers), got " + exchange.work().getClass().getName() + ": custom work needs a "
                    + "user kernel built with device.cuh, or the host KI executor");
        }
        KiLaunchChecks.exchange(table, exchange, timeoutNs);
        return work;
    }
}
