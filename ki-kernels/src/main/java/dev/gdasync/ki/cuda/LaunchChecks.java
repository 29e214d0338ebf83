package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.KiCopyWork;
import dev.gdasync.ki.KiExchange;
import dev.gdasync.ki.KiTemplateArgs;

import java.util.List;
import java.util.Objects;

/**
 * The argument checks of the CUDA executor's launches, made before anything changes (no registration, no
 * status cleared, no launch): a bad argument raises an {@link IllegalArgumentException} that says what is
 * wrong.
 */
final class LaunchChecks {
    private LaunchChecks() {
    }

    /**
     * @throws IllegalArgumentException if the ping-pong cannot run over the table with these arguments
     */
    static void pingPong(KiTable table, int count, long computeNs, long timeoutNs) {
        Objects.requireNonNull(table, "table");
        if (count < 0) {
            throw new IllegalArgumentException("ping-pong count must be >= 0, got " + count);
        }
        if (count > table.sendCount() || count > table.waitCount()) {
            throw new IllegalArgumentException("ping-pong of " + count + " iterations needs " + count + " send and "
                    + count + " wait entries, the table has " + table.sendCount() + " sends and " + table.waitCount()
                    + " waits");
        }
        if (computeNs < 0) {
            throw new IllegalArgumentException("ping-pong compute time must be >= 0 ns, got " + computeNs);
        }
        timeout("ping-pong", timeoutNs, 1);
    }

    /**
     * @return the arguments, copied
     * @throws IllegalArgumentException if the table has fewer templates than argument sets
     * @throws NullPointerException     if an argument set is null
     */
    static List<KiTemplateArgs> sendTemplates(KiTable table, List<KiTemplateArgs> args) {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(args, "args");
        List<KiTemplateArgs> copy = List.copyOf(args);
        if (copy.size() > table.templateCount()) {
            throw new IllegalArgumentException(copy.size() + " template sends need " + copy.size()
                    + " template entries, the table has " + table.templateCount());
        }
        return copy;
    }

    /**
     * @return the exchange's work, as copies
     * @throws IllegalArgumentException if the work is not {@link KiCopyWork}, does not match the table, or the
     *                                  timeout is out of range
     */
    static KiCopyWork exchange(KiTable table, KiExchange exchange, long timeoutNs) {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(exchange, "exchange");
        if (!(exchange.work() instanceof KiCopyWork work)) {
            throw new IllegalArgumentException("the CUDA exchange kernel runs KiCopyWork (copies between "
                    + "device-visible buffers), got " + exchange.work().getClass().getName() + ": custom work needs a "
                    + "user kernel built with device.cuh, or the host KI executor");
        }
        int pack = work.packCopies().size();
        if (pack != 0 && pack != table.sendCount()) {
            throw new IllegalArgumentException("the exchange work has " + pack + " pack copies, the table has "
                    + table.sendCount() + " send entries: give one pack copy per send entry, or none");
        }
        // The kernel bounds its ordering and barrier waits by timeout_ns x (count + 1) in 64 bits.
        timeout("exchange", timeoutNs, Math.max(table.sendCount(), table.waitCount()) + 1L);
        return work;
    }

    private static void timeout(String kernel, long timeoutNs, long multiple) {
        if (timeoutNs <= 0) {
            throw new IllegalArgumentException(kernel + " timeout must be > 0 ns, got " + timeoutNs);
        }
        if (timeoutNs > Long.MAX_VALUE / multiple) {
            throw new IllegalArgumentException(kernel + " timeout of " + timeoutNs + " ns is too large: the kernel "
                    + "multiplies it by " + multiple + " in 64 bits");
        }
    }
}
