package dev.gdasync.gdsync.mlx5;

import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.Opcode;

/**
 * The mlx5 codes the project uses ({@code infiniband/mlx5dv.h}): send opcodes, control-segment flags, CQE opcodes
 * and error syndromes, and their mapping to the NIC model's verbs names.
 */
public final class Mlx5Opcodes {
    /** {@code MLX5_OPCODE_NOP}. */
    public static final int NOP = 0x00;
    /** {@code MLX5_OPCODE_RDMA_WRITE}. */
    public static final int RDMA_WRITE = 0x08;
    /** {@code MLX5_OPCODE_RDMA_WRITE_IMM}. */
    public static final int RDMA_WRITE_IMM = 0x09;
    /** {@code MLX5_OPCODE_SEND}. */
    public static final int SEND = 0x0a;
    /** {@code MLX5_OPCODE_SEND_IMM}. */
    public static final int SEND_IMM = 0x0b;
    /** {@code MLX5_OPCODE_RDMA_READ}. */
    public static final int RDMA_READ = 0x10;
    /** {@code MLX5_OPCODE_ATOMIC_CS}. */
    public static final int ATOMIC_CS = 0x11;
    /** {@code MLX5_OPCODE_ATOMIC_FA}. */
    public static final int ATOMIC_FA = 0x12;

    /** {@code MLX5_WQE_CTRL_CQ_UPDATE}: the WQE writes a CQE (signaled). */
    public static final int CTRL_CQ_UPDATE = 2 << 2;
    /** {@code MLX5_WQE_CTRL_SOLICITED}. */
    public static final int CTRL_SOLICITED = 1 << 1;
    /** {@code MLX5_WQE_CTRL_FENCE}: wait for earlier READs and atomics (verbs' IBV_SEND_FENCE). */
    public static final int CTRL_FENCE = 4 << 5;

    /** {@code MLX5_CQE_OWNER_MASK}. */
    public static final int CQE_OWNER_MASK = 1;
    /** {@code MLX5_CQE_REQ}: a send completed. */
    public static final int CQE_REQ = 0;
    /** {@code MLX5_CQE_RESP_WR_IMM}: an RDMA write with immediate arrived. */
    public static final int CQE_RESP_WR_IMM = 1;
    /** {@code MLX5_CQE_RESP_SEND}. */
    public static final int CQE_RESP_SEND = 2;
    /** {@code MLX5_CQE_RESP_SEND_IMM}. */
    public static final int CQE_RESP_SEND_IMM = 3;
    /** {@code MLX5_CQE_REQ_ERR}. */
    public static final int CQE_REQ_ERR = 13;
    /** {@code MLX5_CQE_RESP_ERR}. */
    public static final int CQE_RESP_ERR = 14;
    /** {@code MLX5_CQE_INVALID}: a CQE the NIC has not written (or the consumer gave back). */
    public static final int CQE_INVALID = 15;

    /** {@code MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR}. */
    public static final int SYNDROME_LOCAL_LENGTH_ERR = 0x01;
    /** {@code MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR}. */
    public static final int SYNDROME_LOCAL_QP_OP_ERR = 0x02;
    /** {@code MLX5_CQE_SYNDROME_LOCAL_PROT_ERR}. */
    public static final int SYNDROME_LOCAL_PROT_ERR = 0x04;
    /** {@code MLX5_CQE_SYNDROME_WR_FLUSH_ERR}. */
    public static final int SYNDROME_WR_FLUSH_ERR = 0x05;
    /** {@code MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR}. */
    public static final int SYNDROME_REMOTE_INVAL_REQ_ERR = 0x12;
    /** {@code MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR}. */
    public static final int SYNDROME_REMOTE_ACCESS_ERR = 0x13;
    /** {@code MLX5_CQE_SYNDROME_REMOTE_OP_ERR}. */
    public static final int SYNDROME_REMOTE_OP_ERR = 0x14;
    /** {@code MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR}. */
    public static final int SYNDROME_TRANSPORT_RETRY_EXC_ERR = 0x15;
    /** {@code MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR}. */
    public static final int SYNDROME_RNR_RETRY_EXC_ERR = 0x16;

    private Mlx5Opcodes() {
    }

    /**
     * @param op a verbs opcode
     * @return the mlx5 send opcode
     */
    public static int of(Opcode op) {
        return switch (op) {
            case RDMA_WRITE -> RDMA_WRITE;
            case RDMA_WRITE_WITH_IMM -> RDMA_WRITE_IMM;
            case SEND -> SEND;
            case SEND_WITH_IMM -> SEND_IMM;
            case RDMA_READ -> RDMA_READ;
            case ATOMIC_CMP_SWAP -> ATOMIC_CS;
            case ATOMIC_FETCH_ADD -> ATOMIC_FA;
        };
    }

    /**
     * @param mlx5 an mlx5 send opcode
     * @return the verbs opcode
     * @throws IllegalArgumentException for an opcode the project does not use
     */
    public static Opcode toVerbs(int mlx5) {
        return switch (mlx5) {
            case RDMA_WRITE -> Opcode.RDMA_WRITE;
            case RDMA_WRITE_IMM -> Opcode.RDMA_WRITE_WITH_IMM;
            case SEND -> Opcode.SEND;
            case SEND_IMM -> Opcode.SEND_WITH_IMM;
            case RDMA_READ -> Opcode.RDMA_READ;
            case ATOMIC_CS -> Opcode.ATOMIC_CMP_SWAP;
            case ATOMIC_FA -> Opcode.ATOMIC_FETCH_ADD;
            default -> throw new IllegalArgumentException("mlx5 send opcode 0x" + Integer.toHexString(mlx5)
                    + " is not one the NIC model uses");
        };
    }

    /**
     * @param syndrome an error CQE's syndrome
     * @return the verbs status it means (as rdma-core's {@code mlx5_handle_error_cqe} maps it)
     */
    public static CompletionStatus status(int syndrome) {
        return switch (syndrome) {
            case SYNDROME_LOCAL_LENGTH_ERR -> CompletionStatus.LOC_LEN_ERR;
            case SYNDROME_LOCAL_QP_OP_ERR -> CompletionStatus.LOC_QP_OP_ERR;
            case SYNDROME_LOCAL_PROT_ERR -> CompletionStatus.LOC_PROT_ERR;
            case SYNDROME_WR_FLUSH_ERR -> CompletionStatus.WR_FLUSH_ERR;
            case SYNDROME_REMOTE_INVAL_REQ_ERR -> CompletionStatus.REM_INV_REQ_ERR;
            case SYNDROME_REMOTE_ACCESS_ERR -> CompletionStatus.REM_ACCESS_ERR;
            case SYNDROME_REMOTE_OP_ERR -> CompletionStatus.REM_OP_ERR;
            case SYNDROME_TRANSPORT_RETRY_EXC_ERR -> CompletionStatus.RETRY_EXC_ERR;
            case SYNDROME_RNR_RETRY_EXC_ERR -> CompletionStatus.RNR_RETRY_EXC_ERR;
            default -> CompletionStatus.GENERAL_ERR;
        };
    }

    /**
     * @param status a verbs error status
     * @return the syndrome an mlx5 NIC writes for it
     */
    public static int syndrome(CompletionStatus status) {
        return switch (status) {
            case LOC_LEN_ERR -> SYNDROME_LOCAL_LENGTH_ERR;
            case LOC_QP_OP_ERR -> SYNDROME_LOCAL_QP_OP_ERR;
            case LOC_PROT_ERR -> SYNDROME_LOCAL_PROT_ERR;
            case WR_FLUSH_ERR -> SYNDROME_WR_FLUSH_ERR;
            case REM_INV_REQ_ERR -> SYNDROME_REMOTE_INVAL_REQ_ERR;
            case REM_ACCESS_ERR -> SYNDROME_REMOTE_ACCESS_ERR;
            case REM_OP_ERR -> SYNDROME_REMOTE_OP_ERR;
            case RETRY_EXC_ERR -> SYNDROME_TRANSPORT_RETRY_EXC_ERR;
            case RNR_RETRY_EXC_ERR -> SYNDROME_RNR_RETRY_EXC_ERR;
            default -> SYNDROME_LOCAL_QP_OP_ERR;
        };
    }

    /**
     * @param sendOpcode the mlx5 opcode of the send a requester CQE completes
     * @return what the completion says it was
     */
    public static CompletionOpcode requesterCompletion(int sendOpcode) {
        return CompletionOpcode.of(toVerbs(sendOpcode));
    }
}
