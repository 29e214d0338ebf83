package dev.gdasync.gdsync.ki;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The binary layout of the MSCCL-IR kernel interpreter's table: the one definition on the Java side, mirrored by
 * {@code ki-kernels/src/main/cuda/msccl_interpreter.cuh}. libmp's {@code MscclDeviceTable} writes it; ki-kernels'
 * {@code MscclKernelTable} checks it before a GPU launch and {@code MscclKiBlock} (the kernel's host mirror) reads
 * it. Little-endian, naturally aligned; a test of ki-kernels compiles the header with a host compiler and compares
 * every size, offset and constant.
 *
 * <pre>
 * header (64 B)  magic u32 "MSCL" | version u32 | ntb u32 | tiles u32 | tile_elems u64 | chunk_elems u64
 *                | slots u32 | slot_bytes u32 | dtype u32 | op u32 | epoch_base u64 | sem_offset u64
 * tb (96 B)      first_step u32 | nsteps u32 | gpu_first u32 | flags u32 | recv_region u64 | send_region u64
 *                | ack_word u64 | peer_ack_word u64 | buf[3] u64 | status u64 | reserved[16]
 * step (16 B)    type u8 | srcbuf u8 | dstbuf u8 | hasdep u8 | srcoff u16 | dstoff u16 | cnt u16 | depid i16
 *                | deps i16 | reserved[2]
 * </pre>
 * A table is the header, one block record per block of the launch, then the step records, back to back. Every
 * address in it is a byte offset: into one arena in the one-device form, into the symmetric heap in the KI form (one
 * rank's blocks per launch), whose block records also use their reserved bytes ({@link #TB_KI_SEND_PE},
 * {@link #TB_KI_RECV_PE}, {@link #TB_KI_STAGING}). The header's {@code op} is a {@link Reduction} code.
 */
public final class MscclTableLayout {
    /** "MSCL" as little-endian bytes. */
    public static final int MAGIC = 0x4c43534d;
    /** The layout version the kernel reads. */
    public static final int VERSION = 1;

    /** Element type code: 32-bit two's-complement integer. */
    public static final int DTYPE_INT32 = 0;
    /** Element type code: 64-bit two's-complement integer. */
    public static final int DTYPE_INT64 = 1;
    /** Element type code: IEEE 754 binary32. */
    public static final int DTYPE_FLOAT32 = 2;
    /** Element type code: IEEE 754 binary64. */
    public static final int DTYPE_FLOAT64 = 3;

    /** Step type: send the source to the peer. */
    public static final int STEP_SEND = 0;
    /** Step type: receive into the destination. */
    public static final int STEP_RECV = 1;
    /** Step type: receive into the destination and send it on. */
    public static final int STEP_RECV_COPY_SEND = 2;
    /** Step type: combine the source with what arrived and send the result. */
    public static final int STEP_RECV_REDUCE_SEND = 3;
    /** Step type: combine the source with what arrived into the destination. */
    public static final int STEP_RECV_REDUCE_COPY = 4;
    /** Step type: combine the source with what arrived into the destination and send it on. */
    public static final int STEP_RECV_REDUCE_COPY_SEND = 5;
    /** Step type: copy the source to the destination. */
    public static final int STEP_COPY = 6;
    /** Step type: combine the source into the destination. */
    public static final int STEP_REDUCE = 7;
    /** Step type: nothing but the step's dependency. */
    public static final int STEP_NOP = 8;
    /** How many step types there are (codes {@code 0..STEP_TYPES - 1}). */
    public static final int STEP_TYPES = 9;

    /** Buffer code: the rank's input. */
    public static final int BUF_INPUT = 0;
    /** Buffer code: the rank's output. */
    public static final int BUF_OUTPUT = 1;
    /** Buffer code: the rank's scratch. */
    public static final int BUF_SCRATCH = 2;
    /** Buffer code: no buffer. */
    public static final int BUF_NONE = 255;

    /** Block flag: the block has a send connection. */
    public static final int TB_SENDS = 1;
    /** Block flag: the block has a receive connection. */
    public static final int TB_RECEIVES = 1 << 1;
    /** An arena offset that names nothing (a connection the block does not have). */
    public static final long NONE = -1L;

    private static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** The table header. */
    public static final StructLayout HEADER = MemoryLayout.structLayout(
            U32.withName("magic"),
            U32.withName("version"),
            U32.withName("ntb"),
            U32.withName("tiles"),
            U64.withName("tile_elems"),
            U64.withName("chunk_elems"),
            U32.withName("slots"),
            U32.withName("slot_bytes"),
            U32.withName("dtype"),
            U32.withName("op"),
            U64.withName("epoch_base"),
            U64.withName("sem_offset")).withName("gds_msccl_header");

    /** A block's record: its steps, its connections, its rank's buffers and the status it writes when it gives up. */
    public static final StructLayout TB = MemoryLayout.structLayout(
            U32.withName("first_step"),
            U32.withName("nsteps"),
            U32.withName("gpu_first"),
            U32.withName("flags"),
            U64.withName("recv_region"),
            U64.withName("send_region"),
            U64.withName("ack_word"),
            U64.withName("peer_ack_word"),
            MemoryLayout.sequenceLayout(3, U64).withName("buf"),
            U64.withName("status"),
            MemoryLayout.paddingLayout(16)).withName("gds_msccl_tb");

    /** A step's record. */
    public static final StructLayout STEP = MemoryLayout.structLayout(
            U8.withName("type"),
            U8.withName("srcbuf"),
            U8.withName("dstbuf"),
            U8.withName("hasdep"),
            U16.withName("srcoff"),
            U16.withName("dstoff"),
            U16.withName("cnt"),
            U16.withName("depid"),
            U16.withName("deps"),
            MemoryLayout.paddingLayout(2)).withName("gds_msccl_step");

    /** Bytes of the header. */
    public static final int HEADER_BYTES = (int) HEADER.byteSize();
    /** Bytes of a block's record. */
    public static final int TB_BYTES = (int) TB.byteSize();
    /** Bytes of a step's record. */
    public static final int STEP_BYTES = (int) STEP.byteSize();

    /** Offsets of the header's fields. */
    public static final long H_MAGIC = off(HEADER, "magic");
    /** @see #HEADER */
    public static final long H_VERSION = off(HEADER, "version");
    /** @see #HEADER */
    public static final long H_NTB = off(HEADER, "ntb");
    /** @see #HEADER */
    public static final long H_TILES = off(HEADER, "tiles");
    /** @see #HEADER */
    public static final long H_TILE_ELEMS = off(HEADER, "tile_elems");
    /** @see #HEADER */
    public static final long H_CHUNK_ELEMS = off(HEADER, "chunk_elems");
    /** @see #HEADER */
    public static final long H_SLOTS = off(HEADER, "slots");
    /** @see #HEADER */
    public static final long H_SLOT_BYTES = off(HEADER, "slot_bytes");
    /** @see #HEADER */
    public static final long H_DTYPE = off(HEADER, "dtype");
    /** @see #HEADER */
    public static final long H_OP = off(HEADER, "op");
    /** @see #HEADER */
    public static final long H_EPOCH_BASE = off(HEADER, "epoch_base");
    /** @see #HEADER */
    public static final long H_SEM_OFFSET = off(HEADER, "sem_offset");

    /** Offsets of a block record's fields. */
    public static final long TB_FIRST_STEP = off(TB, "first_step");
    /** @see #TB */
    public static final long TB_NSTEPS = off(TB, "nsteps");
    /** @see #TB */
    public static final long TB_GPU_FIRST = off(TB, "gpu_first");
    /** @see #TB */
    public static final long TB_FLAGS = off(TB, "flags");
    /** @see #TB */
    public static final long TB_RECV_REGION = off(TB, "recv_region");
    /** @see #TB */
    public static final long TB_SEND_REGION = off(TB, "send_region");
    /** @see #TB */
    public static final long TB_ACK_WORD = off(TB, "ack_word");
    /** @see #TB */
    public static final long TB_PEER_ACK_WORD = off(TB, "peer_ack_word");
    /** Offset of {@code buf[0]}: buffer code c's arena offset lies at {@code TB_BUF + 8 * c}. */
    public static final long TB_BUF = off(TB, "buf");
    /** Offset of the status word: 0, or 1 + the step at which the block gave up. */
    public static final long TB_STATUS = off(TB, "status");
    /** The KI form, in the reserved bytes: the PE the block sends to (u32, -1 for none). */
    public static final long TB_KI_SEND_PE = TB_STATUS + 8;
    /** The KI form: the PE the block receives from (u32, -1 for none). */
    public static final long TB_KI_RECV_PE = TB_KI_SEND_PE + 4;
    /** The KI form: the heap offset of the block's staging region (u64), the source of its puts. */
    public static final long TB_KI_STAGING = TB_KI_RECV_PE + 4;

    /** Offsets of a step record's fields. */
    public static final long ST_TYPE = off(STEP, "type");
    /** @see #STEP */
    public static final long ST_SRCBUF = off(STEP, "srcbuf");
    /** @see #STEP */
    public static final long ST_DSTBUF = off(STEP, "dstbuf");
    /** @see #STEP */
    public static final long ST_HASDEP = off(STEP, "hasdep");
    /** @see #STEP */
    public static final long ST_SRCOFF = off(STEP, "srcoff");
    /** @see #STEP */
    public static final long ST_DSTOFF = off(STEP, "dstoff");
    /** @see #STEP */
    public static final long ST_CNT = off(STEP, "cnt");
    /** @see #STEP */
    public static final long ST_DEPID = off(STEP, "depid");
    /** @see #STEP */
    public static final long ST_DEPS = off(STEP, "deps");

    private MscclTableLayout() {
    }

    /**
     * @param type a step type code
     * @return whether the step receives a message (and so waits for its flag and acknowledges it)
     */
    public static boolean receives(int type) {
        return type >= STEP_RECV && type <= STEP_RECV_REDUCE_COPY_SEND;
    }

    /**
     * @param type a step type code
     * @return whether the step sends a message (and so needs a free slot)
     */
    public static boolean sends(int type) {
        return type == STEP_SEND || type == STEP_RECV_COPY_SEND || type == STEP_RECV_REDUCE_SEND
                || type == STEP_RECV_REDUCE_COPY_SEND;
    }

    /**
     * @param dtype an element type code, {@link #DTYPE_INT32}..{@link #DTYPE_FLOAT64}
     * @return the bytes of one element
     */
    public static int elementBytes(int dtype) {
        return dtype == DTYPE_INT32 || dtype == DTYPE_FLOAT32 ? 4 : 8;
    }

    /**
     * @param blocks the block records
     * @param steps  the step records
     * @return the bytes of a table with that many records
     */
    public static long bytes(int blocks, int steps) {
        return HEADER_BYTES + (long) TB_BYTES * blocks + (long) STEP_BYTES * steps;
    }

    private static long off(StructLayout s, String field) {
        return s.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }
}
