package dev.gdasync.gdsync.mlx5;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * The mlx5 device formats the project writes and reads, as rdma-core's {@code infiniband/mlx5dv.h} declares them:
 * the segments of a send WQE, the 64-byte CQE, the doorbell records, and the constants. The NIC reads these
 * structures in big-endian byte order (except the inline segment's byte count, which rdma-core stores as is and
 * the NIC reads big-endian too). A C probe compiled against the header checks every offset, size and constant
 * here during the build's tests ({@code Mlx5LayoutTest}).
 */
public final class Mlx5Layouts {
    /** A big-endian 16-bit field, byte aligned (inside packed structs). */
    public static final ValueLayout.OfShort BE16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    /** A big-endian 32-bit field. */
    public static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);
    /** A big-endian 64-bit field. */
    public static final ValueLayout.OfLong BE64 = ValueLayout.JAVA_LONG.withOrder(ByteOrder.BIG_ENDIAN);

    /** {@code MLX5_SEND_WQE_BB}: a send WQE is made of 64-byte basic blocks. */
    public static final int SEND_WQE_BB = 64;
    /** {@code MLX5_SEND_WQE_SHIFT}. */
    public static final int SEND_WQE_SHIFT = 6;
    /** A WQE's size is counted in 16-byte units ("ds") in its control segment. */
    public static final int DS_BYTES = 16;
    /** {@code MLX5_INLINE_SEG}: the flag of an inline segment's byte count. */
    public static final int INLINE_SEG = 0x80000000;
    /** {@code MLX5_RCV_DBR}: the receive counter's index in a queue pair's doorbell record. */
    public static final int RCV_DBR = 0;
    /** {@code MLX5_SND_DBR}: the send counter's index in a queue pair's doorbell record. */
    public static final int SND_DBR = 1;
    /** The consumer index's position in a CQ's doorbell record (libmlx5's internal {@code MLX5_CQ_SET_CI}). */
    public static final int CQ_SET_CI = 0;
    /** {@code MLX5_INVALID_LKEY}: the lkey that ends a receive WQE's scatter list early. */
    public static final int INVALID_LKEY = 0x100;

    /** {@code struct mlx5_wqe_ctrl_seg} (16 bytes, packed). */
    public static final StructLayout CTRL_SEG = MemoryLayout.structLayout(
            BE32.withName("opmod_idx_opcode"),
            BE32.withName("qpn_ds"),
            JAVA_BYTE.withName("signature"),
            BE16.withName("dci_stream_channel_id"),
            JAVA_BYTE.withName("fm_ce_se"),
            BE32.withByteAlignment(1).withName("imm")).withByteAlignment(4).withName("mlx5_wqe_ctrl_seg");
    /** {@code struct mlx5_wqe_raddr_seg}. */
    public static final StructLayout RADDR_SEG = MemoryLayout.structLayout(
            BE64.withName("raddr"),
            BE32.withName("rkey"),
            BE32.withName("reserved")).withName("mlx5_wqe_raddr_seg");
    /** {@code struct mlx5_wqe_atomic_seg}. */
    public static final StructLayout ATOMIC_SEG = MemoryLayout.structLayout(
            BE64.withName("swap_add"),
            BE64.withName("compare")).withName("mlx5_wqe_atomic_seg");
    /** {@code struct mlx5_wqe_data_seg}. */
    public static final StructLayout DATA_SEG = MemoryLayout.structLayout(
            BE32.withName("byte_count"),
            BE32.withName("lkey"),
            BE64.withName("addr")).withName("mlx5_wqe_data_seg");
    /** {@code struct mlx5_wqe_inl_data_seg}: the byte count, then the data, padded to 16 bytes. */
    public static final StructLayout INLINE_SEG_HEADER = MemoryLayout.structLayout(
            BE32.withName("byte_count")).withName("mlx5_wqe_inl_data_seg");
    /** {@code struct mlx5_cqe64}, the fields the project uses; the first 32 bytes are a union it does not read. */
    public static final StructLayout CQE64 = MemoryLayout.structLayout(
            paddingLayout(32),
            BE32.withName("srqn_uidx"),
            BE32.withName("imm_inval_pkey"),
            JAVA_BYTE.withName("app"),
            JAVA_BYTE.withName("app_op"),
            BE16.withName("app_info"),
            BE32.withName("byte_cnt"),
            BE64.withName("timestamp"),
            BE32.withName("sop_drop_qpn"),
            BE16.withName("wqe_counter"),
            JAVA_BYTE.withName("signature"),
            JAVA_BYTE.withName("op_own")).withName("mlx5_cqe64");
    /** {@code struct mlx5_err_cqe}: the same 64 bytes as written for an error completion. */
    public static final StructLayout ERR_CQE = MemoryLayout.structLayout(
            paddingLayout(32),
            ValueLayout.JAVA_INT.withName("srqn"),
            paddingLayout(18),
            JAVA_BYTE.withName("vendor_err_synd"),
            JAVA_BYTE.withName("syndrome"),
            BE32.withByteAlignment(2).withName("s_wqe_opcode_qpn"),
            BE16.withName("wqe_counter"),
            JAVA_BYTE.withName("signature"),
            JAVA_BYTE.withName("op_own")).withName("mlx5_err_cqe");

    /** Offsets inside a control segment. */
    public static final long CTRL_OPMOD_IDX_OPCODE = offset(CTRL_SEG, "opmod_idx_opcode");
    /** Offset of {@code qpn_ds}. */
    public static final long CTRL_QPN_DS = offset(CTRL_SEG, "qpn_ds");
    /** Offset of {@code fm_ce_se}. */
    public static final long CTRL_FM_CE_SE = offset(CTRL_SEG, "fm_ce_se");
    /** Offset of {@code imm}. */
    public static final long CTRL_IMM = offset(CTRL_SEG, "imm");
    /** Offset of a CQE's {@code imm_inval_pkey}. */
    public static final long CQE_IMM = offset(CQE64, "imm_inval_pkey");
    /** Offset of a CQE's {@code byte_cnt}. */
    public static final long CQE_BYTE_CNT = offset(CQE64, "byte_cnt");
    /** Offset of a CQE's {@code sop_drop_qpn}. */
    public static final long CQE_SOP_DROP_QPN = offset(CQE64, "sop_drop_qpn");
    /** Offset of a CQE's {@code wqe_counter}. */
    public static final long CQE_WQE_COUNTER = offset(CQE64, "wqe_counter");
    /** Offset of a CQE's {@code op_own}: the opcode in the high nibble, the owner bit in bit 0. */
    public static final long CQE_OP_OWN = offset(CQE64, "op_own");
    /** Offset of an error CQE's {@code vendor_err_synd}. */
    public static final long ERR_CQE_VENDOR_SYNDROME = offset(ERR_CQE, "vendor_err_synd");
    /** Offset of an error CQE's {@code syndrome}. */
    public static final long ERR_CQE_SYNDROME = offset(ERR_CQE, "syndrome");
    /** The offset of the dword a wait watches: the CQE's last four bytes, {@code op_own} its most significant. */
    public static final long CQE_LAST_DWORD = 60;

    private Mlx5Layouts() {
    }

    private static long offset(StructLayout l, String field) {
        return l.byteOffset(groupElement(field));
    }
}
