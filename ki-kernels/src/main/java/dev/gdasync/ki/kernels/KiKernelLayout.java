package dev.gdasync.ki.kernels;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The binary layouts the KI kernels take besides the descriptor table (which is
 * {@link dev.gdasync.gdsync.ki.KiTableLayout}): the exchange control block, copy descriptors, the
 * exchange work and the template arguments. Mirrored by {@code ki-kernels/src/main/cuda/device.cuh}; a
 * test compiles the header and compares every offset.
 *
 * <pre>
 * gds_ki_exchange_ctl (16 B)   role u32 | chunk u32 | arrived u32 | next_send u32     all zero at launch
 * gds_ki_copy (24 B)           src u64 | dst u64 | bytes u64
 * gds_ki_exchange_work (40 B)  pack u64 | unpack u64 | interior u64 | unpack_count u32 | interior_chunks u32
 *                              | interior_ns u64
 * gds_ki_template_args (40 B)  laddr u64 | lkey u64 | raddr u64 | rkey u64 | length u32 | reserved u32
 * </pre>
 */
public final class KiKernelLayout {
    /** {@code arrived}: the receiver passed every wait. */
    public static final int ARRIVED_OK = 1;
    /** {@code arrived}: the receiver failed; unpack blocks end without unpacking. */
    public static final int ARRIVED_FAILED = 2;

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** The exchange template's control block: role and chunk counters, the barrier word, send order. */
    public static final StructLayout EXCHANGE_CTL = MemoryLayout.structLayout(
            U32.withName("role"),
            U32.withName("chunk"),
            U32.withName("arrived"),
            U32.withName("next_send")).withName("gds_ki_exchange_ctl");

    /** A copy of {@code bytes} from {@code src} to {@code dst} (executor addresses). */
    public static final StructLayout COPY = MemoryLayout.structLayout(
            U64.withName("src"),
            U64.withName("dst"),
            U64.withName("bytes")).withName("gds_ki_copy");

    /** The exchange kernel's work: addresses of copy arrays (0: none), counts, emulated compute. */
    public static final StructLayout EXCHANGE_WORK = MemoryLayout.structLayout(
            U64.withName("pack"),
            U64.withName("unpack"),
            U64.withName("interior"),
            U32.withName("unpack_count"),
            U32.withName("interior_chunks"),
            U64.withName("interior_ns")).withName("gds_ki_exchange_work");

    /** The dynamic fields of one templated send. */
    public static final StructLayout TEMPLATE_ARGS = MemoryLayout.structLayout(
            U64.withName("laddr"),
            U64.withName("lkey"),
            U64.withName("raddr"),
            U64.withName("rkey"),
            U32.withName("length"),
            MemoryLayout.paddingLayout(4)).withName("gds_ki_template_args");

    static final VarHandle CTL_ROLE = field(EXCHANGE_CTL, "role");
    static final VarHandle CTL_CHUNK = field(EXCHANGE_CTL, "chunk");
    static final VarHandle CTL_ARRIVED = field(EXCHANGE_CTL, "arrived");
    static final VarHandle CTL_NEXT_SEND = field(EXCHANGE_CTL, "next_send");

    private KiKernelLayout() {
    }

    /**
     * @param struct a layout of this class
     * @param field  a field name
     * @return the field's byte offset
     */
    public static long offsetOf(StructLayout struct, String field) {
        return struct.byteOffset(PathElement.groupElement(field));
    }

    /**
     * @param struct a layout of this class
     * @param field  a field name
     * @return a var handle (segment, base offset) for the field
     */
    public static VarHandle field(StructLayout struct, String field) {
        return struct.varHandle(PathElement.groupElement(field));
    }
}
