package dev.gdasync.ki;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.kernels.KiCopyWork;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiExchangeWork;
import dev.gdasync.ki.kernels.KiTemplateArgs;

import java.util.List;
import java.util.Objects;

/**
 * The argument checks every executor makes before a launch changes anything (no status cleared, nothing
 * registered or run): a bad argument raises an {@link IllegalArgumentException} that says what is wrong.
 * The host and CUDA executors share them, so a launch is refused the same way on both.
 */
public final class KiLaunchChecks {
    private KiLaunchChecks() {
    }

    /**
     * @param table     the table
     * @param count     iterations
     * @param computeNs busy work per receive
     * @param timeoutNs the bound of each wait
     * @throws IllegalArgumentException if the ping-pong cannot run over the table with these arguments
     */
    public static void pingPong(KiTable table, int count, long computeNs, long timeoutNs) {
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
     * @param table the table
     * @param args  the dynamic fields of each templated send
     * @return the arguments, copied
     * @throws IllegalArgumentException if the table has fewer templates than argument sets
     * @throws NullPointerException     if an argument set is null
     */
    public static List<KiTemplateArgs> sendTemplates(KiTable table, List<KiTemplateArgs> args) {
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
     * @param table     the table
     * @param exchange  blocks and work
     * @param timeoutNs the bound of each wait
     * @throws IllegalArgumentException if the work does not match the table or the blocks, or the timeout is
     *                                  out of range
     */
    public static void exchange(KiTable table, KiExchange exchange, long timeoutNs) {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(exchange, "exchange");
        KiExchangeWork w = exchange.work();
        if (w instanceof KiCopyWork work) {
            int pack = work.packCopies().size();
            if (pack != 0 && pack != table.sendCount()) {
                throw new IllegalArgumentException("the exchange work has " + pack + " pack copies, the table has "
                        + table.sendCount() + " send entries: give one pack copy per send entry, or none");
            }
        }
        if (w.unpackCount() < 0 || w.interiorChunks() < 0) {
            throw new IllegalArgumentException("the exchange work's unpack steps and interior chunks must be >= 0, got "
                    + w.unpackCount() + " and " + w.interiorChunks());
        }
        if (w.unpackCount() > 0 && exchange.unpackBlocks() == 0) {
            throw new IllegalArgumentException("the exchange work has " + w.unpackCount()
                    + " unpack steps and no unpack blocks to run them");
        }
        // The kernels bound their ordering and barrier waits by timeout_ns x (count + 1) in 64 bits.
        timeout("exchange", timeoutNs, Math.max(table.sendCount(), table.waitCount()) + 1L);
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
