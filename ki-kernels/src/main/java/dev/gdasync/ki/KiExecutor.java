package dev.gdasync.ki;

import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableExecutor;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiTemplateArgs;

import java.util.List;

/**
 * Runs the KI templates over KI descriptor tables: {@link dev.gdasync.ki.exec.HostKiExecutor} on Java threads, or the CUDA
 * kernels on a GPU. Both read the same table and the same work descriptions and report failures the
 * same way, in the table's status fields (see {@code docs/ki.md}).
 *
 * <p>Launches run in the order they were made, one after another, like kernels on one CUDA stream:
 * export tables with {@code KiTable.builder(executor)} (or libmp's {@code kiExport(executor)}) so that a
 * queue pair's sends may continue from one table into the next. An executor runs one launch at a time per table; a table is launched again only after the
 * previous launch over it ended (its status is cleared at launch).
 */
public interface KiExecutor extends KiTableExecutor, AutoCloseable {

    /** @return what runs the kernels, for messages ("host", or the GPU's name) */
    @Override
    String name();

    /** @return how this executor names memory: export tables for it with this map */
    @Override
    DeviceAddressMap addresses();

    /**
     * Launches the ping-pong kernel: one thread; for i in 0..count-1 the initiator sends entry i then
     * waits entry i, the responder waits entry i then sends entry i, with {@code computeNs} of busy work
     * between receive and reply.
     *
     * @param table     sends and waits, at least {@code count} of each
     * @param count     iterations
     * @param initiator whether this side sends first
     * @param computeNs busy work between a receive and the next send
     * @param timeoutNs the bound of each wait
     * @return the launch
     * @throws IllegalArgumentException if the table has fewer than {@code count} sends or waits
     */
    KiLaunch pingPong(KiTable table, int count, boolean initiator, long computeNs, long timeoutNs);

    /**
     * Launches the ping-pong kernel as {@link #pingPong(KiTable, int, boolean, long, long)} does, and where the
     * kernel can read the host's clock ({@link #timesWaits()}), has it store {@link System#nanoTime()} into
     * {@code waitEnds[i]} as iteration {@code i}'s wait ends: a benchmark's per-iteration timing, one store per
     * iteration. Elsewhere {@code waitEnds} is left untouched.
     *
     * @param table     sends and waits, at least {@code count} of each
     * @param count     iterations
     * @param initiator whether this side sends first
     * @param computeNs busy work between a receive and the next send
     * @param timeoutNs the bound of each wait
     * @param waitEnds  at least {@code count} entries; read them after the launch was joined
     * @return the launch
     * @throws IllegalArgumentException if the table has fewer than {@code count} sends or waits, or
     *                                  {@code waitEnds} fewer than {@code count} entries
     */
    default KiLaunch pingPong(KiTable table, int count, boolean initiator, long computeNs, long timeoutNs, long[] waitEnds) {
        if (waitEnds.length < count) {
            throw new IllegalArgumentException("waitEnds holds " + waitEnds.length + " entries, fewer than the " + count
                    + " iterations");
        }
        return pingPong(table, count, initiator, computeNs, timeoutNs);
    }

    /** @return whether the ping-pong kernel stores each wait's end in host clock time (the host executor's threads do) */
    default boolean timesWaits() {
        return false;
    }

    /**
     * Launches the exchange template: 1 receiver block, N pack-and-send blocks, M unpack blocks, interior
     * work spread over all, roles handed out by an atomic counter.
     *
     * @param table     the sends (one per pack step) and the waits (the receive completions)
     * @param exchange  blocks and work
     * @param timeoutNs the bound of each wait
     * @return the launch
     * @throws IllegalArgumentException if the work does not match the table
     * @throws KiException              if the blocks cannot all be resident at once
     */
    KiLaunch exchange(KiTable table, KiExchange exchange, long timeoutNs);

    /**
     * Launches the template-send kernel: one thread patches template entry i with {@code args.get(i)} and
     * rings it, in table order.
     *
     * @param table a table with at least {@code args.size()} templates
     * @param args  the dynamic fields of each send
     * @return the launch
     */
    KiLaunch sendTemplates(KiTable table, List<KiTemplateArgs> args);

    /** Releases the executor's threads or GPU resources; launches still running are waited for. */
    @Override
    void close();
}
