package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.memop.BarrierScope;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Turns memops into the operations a CUDA stream is given, as LibGDSync does, for one GPU's capabilities.
 *
 * <table>
 *   <caption>Translation</caption>
 *   <tr><th>memop</th><th>operations</th></tr>
 *   <tr><td>WRITE32 (barrier)</td><td>BARRIER(SYS) where the barrier operation exists, then WRITE_VALUE_32</td></tr>
 *   <tr><td>WRITE64</td><td>WRITE_VALUE_64 with 64-bit memops; else two WRITE_VALUE_32, low word then high,
 *       the first carrying the barrier</td></tr>
 *   <tr><td>WAIT32 / WAIT64</td><td>WAIT_VALUE_32 / _64 with GEQ, EQ, AND or NOR, plus FLUSH when the memop
 *       asks for it and the GPU can flush remote writes</td></tr>
 *   <tr><td>WRITE_MEMORY</td><td>aligned to 4 bytes at both ends: one WRITE_VALUE_32 per 4 bytes (the values
 *       carry the bytes); else a host copy when the stream reaches it</td></tr>
 *   <tr><td>BARRIER</td><td>BARRIER with the GPU or SYS scope; without the operation, a default-flag
 *       WRITE_VALUE_32 to a scratch word</td></tr>
 * </table>
 *
 * <p>Write flags: the v2 entry points this project calls ({@code cuStreamWriteValue32_v2},
 * {@code cuStreamBatchMemOp_v2}) refuse {@code CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER}, so with the v2 API
 * every write has the default flags and a barrier write is preceded by an explicit barrier operation.
 * With the v1 API (drivers before CUDA 11.7) the LibGDSync rule applies: a barrier write has the default
 * flags (which fence), a plain write {@code NO_MEMORY_BARRIER}.
 *
 * <p>A memop the GPU cannot execute (a NOR wait without NOR support, a 64-bit wait without 64-bit memops)
 * is refused before any address is translated, so a refused batch registers no memory.
 */
final class MemopTranslator {
    private static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final CudaCapabilities caps;
    private final DeviceAddressMap map;
    private final long fenceWord;

    /**
     * @param caps      the GPU's capabilities
     * @param map       translates memory words to device addresses
     * @param fenceWord the device address of a 32-bit scratch word, the target of the barrier fallback
     */
    MemopTranslator(CudaCapabilities caps, DeviceAddressMap map, long fenceWord) {
        this.caps = Objects.requireNonNull(caps, "caps");
        this.map = Objects.requireNonNull(map, "map");
        this.fenceWord = fenceWord;
    }

    /**
     * @param batch the memops, in order
     * @return their operations, in order
     * @throws IllegalArgumentException if the GPU cannot execute a memop of the batch; nothing was translated
     */
    List<DriverOp> translate(MemopBatch batch) {
        for (int i = 0, n = batch.size(); i < n; i++) {
            check(batch.get(i));
        }
        List<DriverOp> out = new ArrayList<>(batch.size() * 2);
        for (int i = 0, n = batch.size(); i < n; i++) {
            translate(batch.get(i), out);
        }
        return out;
    }

    /**
     * @param op a memop
     * @throws IllegalArgumentException if the GPU cannot execute it
     */
    void check(Memop op) {
        switch (op) {
            case Memop.Wait32 w -> checkCondition(w.condition(), w.target(), "WAIT32");
            case Memop.Wait64 w -> {
                if (!caps.memops64()) {
                    throw new IllegalArgumentException("WAIT64 on " + w.target() + " needs 64-bit stream memops "
                            + "(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS), which " + caps.device()
                            + " lacks: wait on a 32-bit word");
                }
                checkCondition(w.condition(), w.target(), "WAIT64");
            }
            default -> {
            }
        }
    }

    private void checkCondition(WaitCondition c, MemoryWord word, String op) {
        if (c == WaitCondition.NOR && !caps.waitNor()) {
            throw new IllegalArgumentException(op + " NOR on " + word + " needs CU_STREAM_WAIT_VALUE_NOR "
                    + "(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR), which " + caps.device()
                    + " lacks: wait with GEQ, EQ or AND");
        }
    }

    private void translate(Memop op, List<DriverOp> out) {
        switch (op) {
            case Memop.Write32 w -> write32(map.addressOf(w.target()), w.value(), w.barrier(), w, out);
            case Memop.Write64 w -> {
                long address = map.addressOf(w.target());
                if (caps.memops64()) {
                    preBarrier(w.barrier(), w, out);
                    out.add(new DriverOp(DriverOp.Kind.WRITE_VALUE_64, address, w.value(), writeFlags(w.barrier()), w));
                } else {
                    write32(address, (int) w.value(), w.barrier(), w, out);
                    write32(address + 4, (int) (w.value() >>> 32), false, w, out);
                }
            }
            case Memop.Wait32 w -> out.add(new DriverOp(DriverOp.Kind.WAIT_VALUE_32, map.addressOf(w.target()),
                    Integer.toUnsignedLong(w.value()), waitFlags(w.condition(), w.flush()), w));
            case Memop.Wait64 w -> out.add(new DriverOp(DriverOp.Kind.WAIT_VALUE_64, map.addressOf(w.target()),
                    w.value(), waitFlags(w.condition(), w.flush()), w));
            case Memop.WriteMemory w -> writeMemory(w, out);
            case Memop.Barrier b -> {
                if (caps.barrierOp()) {
                    out.add(new DriverOp(DriverOp.Kind.BARRIER, 0, 0,
                            b.scope() == BarrierScope.SYSTEM ? MemopCodes.BARRIER_SYS : MemopCodes.BARRIER_GPU, b));
                } else {
                    out.add(new DriverOp(DriverOp.Kind.WRITE_VALUE_32, fenceWord, 0, MemopCodes.WRITE_DEFAULT, b));
                }
            }
        }
    }

    private void write32(long address, int value, boolean barrier, Memop source, List<DriverOp> out) {
        preBarrier(barrier, source, out);
        out.add(new DriverOp(DriverOp.Kind.WRITE_VALUE_32, address, Integer.toUnsignedLong(value), writeFlags(barrier),
                source));
    }

    private void preBarrier(boolean barrier, Memop source, List<DriverOp> out) {
        if (barrier && caps.barrierOp()) {
            out.add(new DriverOp(DriverOp.Kind.BARRIER, 0, 0, MemopCodes.BARRIER_SYS, source));
        }
    }

    private void writeMemory(Memop.WriteMemory w, List<DriverOp> out) {
        MemorySegment target = w.target();
        long host = target.address() + w.offset();
        int n = w.length();
        if (n == 0) {
            return;
        }
        if ((host & 3) != 0 || (n & 3) != 0) {
            out.add(new DriverOp(DriverOp.Kind.HOST_COPY, host, n, 0, w));
            return;
        }
        MemorySegment data = MemorySegment.ofArray(w.data());
        for (int i = 0; i < n; i += 4) {
            MemoryWord word = MemoryWord.word32(target, w.offset() + i, "WRITE_MEMORY destination");
            write32(map.addressOf(word), data.get(LE_INT, i),
                    w.barrier() && i == 0, w, out);
        }
    }

    /**
     * @param barrier whether earlier writes must be visible first
     * @return the write flags for the GPU's API version
     */
    int writeFlags(boolean barrier) {
        return caps.v2() || barrier ? MemopCodes.WRITE_DEFAULT : MemopCodes.WRITE_NO_MEMORY_BARRIER;
    }

    /**
     * @param condition the wait's condition
     * @param flush     whether the memop asks for a flush of remote writes after the wait
     * @return the wait flags: the condition's code, plus FLUSH where the GPU can flush
     */
    int waitFlags(WaitCondition condition, boolean flush) {
        int code = switch (condition) {
            case GEQ -> MemopCodes.WAIT_GEQ;
            case EQ -> MemopCodes.WAIT_EQ;
            case AND -> MemopCodes.WAIT_AND;
            case NOR -> MemopCodes.WAIT_NOR;
        };
        return code | (flush && caps.flushRemoteWrites() ? MemopCodes.WAIT_FLUSH : 0);
    }
}
