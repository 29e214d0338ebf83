package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.ShmemKiLayout;
import dev.gdasync.ki.KiLaunchChecks;
import dev.gdasync.ki.kernels.KiCopyWork;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiTemplateArgs;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

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

    /**
     * @param table       the launch's table
     * @param state       the state {@code Shmem.kiPrepare} wrote for this executor
     * @param blocks      the launch's blocks
     * @param tableDevice the table's device address (what the state must name)
     * @param pe          a PE the kernel addresses, or -1 for none
     * @throws IllegalArgumentException if the state is not one for this table, these blocks and this executor, or the
     *                                  PE is out of range
     */
    static void shmemState(KiTable table, MemorySegment state, int blocks, long tableDevice, int pe) {
        Objects.requireNonNull(table, "table must not be null");
        Objects.requireNonNull(state, "state must not be null");
        if (!state.isNative() || state.byteSize() < ShmemKiLayout.bytes(1, Math.max(1, blocks))
                || state.get(JAVA_INT, ShmemKiLayout.S_MAGIC) != ShmemKiLayout.MAGIC
                || state.get(JAVA_INT, ShmemKiLayout.S_VERSION) != ShmemKiLayout.VERSION
                || state.get(JAVA_INT, ShmemKiLayout.S_BLOCKS) != blocks) {
            throw new IllegalArgumentException(state + " is not a shmem KI state for " + blocks + " blocks (prepare it "
                    + "with Shmem.kiPrepare and launch as many blocks as it was prepared for)");
        }
        if (state.get(JAVA_LONG, ShmemKiLayout.S_TABLE) != tableDevice) {
            throw new IllegalArgumentException("the shmem KI state names the table at 0x"
                    + Long.toHexString(state.get(JAVA_LONG, ShmemKiLayout.S_TABLE)) + ", but this table's device address is "
                    + "0x" + Long.toHexString(tableDevice) + ": prepare it with Shmem.kiPrepare(thisExecutor, ...)");
        }
        int n = state.get(JAVA_INT, ShmemKiLayout.S_N_PES);
        if (pe != -1 && (pe < 0 || pe >= n)) {
            throw new IllegalArgumentException("PE " + pe + " is out of range: the state has " + n + " PEs");
        }
    }

    /**
     * @param what    the argument's name
     * @param segment the argument
     * @param bytes   the bytes the kernel uses of it
     * @return the segment
     * @throws IllegalArgumentException if it is not native or is shorter than that
     */
    static MemorySegment kernelMemory(String what, MemorySegment segment, long bytes) {
        Objects.requireNonNull(segment, what + " must not be null");
        if (!segment.isNative() || segment.byteSize() < bytes) {
            throw new IllegalArgumentException(what + " must be native memory of at least " + bytes + " bytes, got "
                    + segment);
        }
        return segment;
    }

    /**
     * @throws IllegalArgumentException if a count is out of range
     */
    static void positive(String what, long value) {
        if (value < 1) {
            throw new IllegalArgumentException(what + " must be >= 1, got " + value);
        }
    }

    /**
     * @throws IllegalArgumentException if the arena does not match the table, or a bound is out of range
     */
    static void msccl(dev.gdasync.ki.msccl.MscclKernelTable table, MemorySegment arena, int threadsPerBlock, long spinLimit,
                      Duration timeout) {
        Objects.requireNonNull(table, "table must not be null");
        Objects.requireNonNull(arena, "arena must not be null");
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (!arena.isNative() || arena.byteSize() != table.arenaBytes()) {
            throw new IllegalArgumentException("the arena must be native memory of the table's " + table.arenaBytes()
                    + " bytes, got " + arena);
        }
        if (threadsPerBlock < 1 || threadsPerBlock > 1024) {
            throw new IllegalArgumentException("threadsPerBlock must be in 1..1024, got " + threadsPerBlock);
        }
        positive("spinLimit", spinLimit);
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
    }
}
