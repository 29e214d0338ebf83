package dev.gdasync.gdsync.ki;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The shmem KI state of {@code ki-kernels/src/main/cuda/shmem.cuh}, declared once more in Java: a launch's shared
 * state ({@link #STATE}) and one record per target ({@link #PE}), little-endian, naturally aligned. libmp's shmem
 * writes them before a launch; the device API (CUDA, or the host KI executor's Java mirror) reads them and updates
 * the tickets, turns and the exit count. A test compiles the header with a host compiler and compares.
 */
public final class ShmemKiLayout {
    /** "GSHM" as little-endian bytes. */
    public static final int MAGIC = 0x4D485347;
    /** The layout's version. */
    public static final int VERSION = 1;

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** One target PE: its heap as the NIC addresses it, its key, its mapping here, its slots and their counters. */
    public static final StructLayout PE = MemoryLayout.structLayout(
            U64.withName("heap_nic"),
            U64.withName("rkey"),
            U64.withName("mapped"),
            U32.withName("first"),
            U32.withName("count"),
            U32.withName("ticket"),
            U32.withName("turn"),
            MemoryLayout.paddingLayout(8)).withName("gds_shmem_pe");

    /** A launch's shared state. */
    public static final StructLayout STATE = MemoryLayout.structLayout(
            U64.withName("table"),
            U64.withName("heap"),
            U64.withName("heap_nic"),
            U64.withName("heap_bytes"),
            U64.withName("heap_lkey"),
            U64.withName("staging"),
            U64.withName("staging_nic"),
            U64.withName("staging_lkey"),
            U64.withName("timeout_ns"),
            U32.withName("my_pe"),
            U32.withName("n_pes"),
            U32.withName("blocks"),
            U32.withName("exited"),
            U64.withName("pes"),
            U64.withName("last"),
            U32.withName("magic"),
            U32.withName("version")).withName("gds_shmem_state");

    /** Offsets of the state's fields. */
    public static final long S_TABLE = off(STATE, "table");
    /** @see #STATE */
    public static final long S_HEAP = off(STATE, "heap");
    /** @see #STATE */
    public static final long S_HEAP_NIC = off(STATE, "heap_nic");
    /** @see #STATE */
    public static final long S_HEAP_BYTES = off(STATE, "heap_bytes");
    /** @see #STATE */
    public static final long S_HEAP_LKEY = off(STATE, "heap_lkey");
    /** @see #STATE */
    public static final long S_STAGING = off(STATE, "staging");
    /** @see #STATE */
    public static final long S_STAGING_NIC = off(STATE, "staging_nic");
    /** @see #STATE */
    public static final long S_STAGING_LKEY = off(STATE, "staging_lkey");
    /** @see #STATE */
    public static final long S_TIMEOUT_NS = off(STATE, "timeout_ns");
    /** @see #STATE */
    public static final long S_MY_PE = off(STATE, "my_pe");
    /** @see #STATE */
    public static final long S_N_PES = off(STATE, "n_pes");
    /** @see #STATE */
    public static final long S_BLOCKS = off(STATE, "blocks");
    /** @see #STATE */
    public static final long S_EXITED = off(STATE, "exited");
    /** @see #STATE */
    public static final long S_PES = off(STATE, "pes");
    /** @see #STATE */
    public static final long S_LAST = off(STATE, "last");
    /** @see #STATE */
    public static final long S_MAGIC = off(STATE, "magic");
    /** @see #STATE */
    public static final long S_VERSION = off(STATE, "version");

    /** Offsets of a PE record's fields. */
    public static final long P_HEAP_NIC = off(PE, "heap_nic");
    /** @see #PE */
    public static final long P_RKEY = off(PE, "rkey");
    /** @see #PE */
    public static final long P_MAPPED = off(PE, "mapped");
    /** @see #PE */
    public static final long P_FIRST = off(PE, "first");
    /** @see #PE */
    public static final long P_COUNT = off(PE, "count");
    /** @see #PE */
    public static final long P_TICKET = off(PE, "ticket");
    /** @see #PE */
    public static final long P_TURN = off(PE, "turn");

    /** Comparison code of the device waits (OpenSHMEM's order: EQ NE GT GE LT LE): equal. */
    public static final int CMP_EQ = 0;
    /** Comparison code: not equal. */
    public static final int CMP_NE = 1;
    /** Comparison code: greater than (signed). */
    public static final int CMP_GT = 2;
    /** Comparison code: greater or equal (signed). */
    public static final int CMP_GE = 3;
    /** Comparison code: less than (signed). */
    public static final int CMP_LT = 4;
    /** Comparison code: less or equal (signed). */
    public static final int CMP_LE = 5;
    /** Signal operation: set. */
    public static final int SIGNAL_SET = 0;
    /** Signal operation: add. */
    public static final int SIGNAL_ADD = 1;

    private ShmemKiLayout() {
    }

    /**
     * @param pes    target PEs
     * @param blocks contexts
     * @return the bytes of a state with its PE records and per-block last-slot words, laid out as {@code ShmemKi}
     *         writes them: state, PE records, then {@code blocks × pes} 32-bit words
     */
    public static long bytes(int pes, int blocks) {
        return STATE.byteSize() + pes * PE.byteSize() + 4L * pes * blocks;
    }

    private static long off(StructLayout s, String field) {
        return s.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }
}
