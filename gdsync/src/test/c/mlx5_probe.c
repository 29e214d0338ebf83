/*
 * The mlx5 formats as rdma-core's infiniband/mlx5dv.h declares them, printed for Mlx5LayoutTest: sizes, field
 * offsets and constants as "name value" lines, then a WQE and CQEs built with the header's own helpers, as hex.
 */
#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#define PRINT(name, value) printf("%s %lld\n", name, (long long)(value))
#define OFF(type, field) PRINT(#type "." #field, offsetof(struct type, field))
#define SIZE(type) PRINT("sizeof." #type, sizeof(struct type))

static void hex(const char *name, const void *p, size_t n) {
    const unsigned char *b = p;
    printf("%s ", name);
    for (size_t i = 0; i < n; i++) {
        printf("%02x", b[i]);
    }
    printf("\n");
}

int main(void) {
    SIZE(mlx5_wqe_ctrl_seg);
    OFF(mlx5_wqe_ctrl_seg, opmod_idx_opcode);
    OFF(mlx5_wqe_ctrl_seg, qpn_ds);
    OFF(mlx5_wqe_ctrl_seg, signature);
    OFF(mlx5_wqe_ctrl_seg, dci_stream_channel_id);
    OFF(mlx5_wqe_ctrl_seg, fm_ce_se);
    OFF(mlx5_wqe_ctrl_seg, imm);
    SIZE(mlx5_wqe_raddr_seg);
    OFF(mlx5_wqe_raddr_seg, raddr);
    OFF(mlx5_wqe_raddr_seg, rkey);
    OFF(mlx5_wqe_raddr_seg, reserved);
    SIZE(mlx5_wqe_atomic_seg);
    OFF(mlx5_wqe_atomic_seg, swap_add);
    OFF(mlx5_wqe_atomic_seg, compare);
    SIZE(mlx5_wqe_data_seg);
    OFF(mlx5_wqe_data_seg, byte_count);
    OFF(mlx5_wqe_data_seg, lkey);
    OFF(mlx5_wqe_data_seg, addr);
    SIZE(mlx5_wqe_inl_data_seg);
    OFF(mlx5_wqe_inl_data_seg, byte_count);
    SIZE(mlx5_cqe64);
    OFF(mlx5_cqe64, srqn_uidx);
    OFF(mlx5_cqe64, imm_inval_pkey);
    OFF(mlx5_cqe64, app);
    OFF(mlx5_cqe64, app_op);
    OFF(mlx5_cqe64, app_info);
    OFF(mlx5_cqe64, byte_cnt);
    OFF(mlx5_cqe64, timestamp);
    OFF(mlx5_cqe64, sop_drop_qpn);
    OFF(mlx5_cqe64, wqe_counter);
    OFF(mlx5_cqe64, signature);
    OFF(mlx5_cqe64, op_own);
    SIZE(mlx5_err_cqe);
    OFF(mlx5_err_cqe, srqn);
    OFF(mlx5_err_cqe, vendor_err_synd);
    OFF(mlx5_err_cqe, syndrome);
    OFF(mlx5_err_cqe, s_wqe_opcode_qpn);
    OFF(mlx5_err_cqe, wqe_counter);
    OFF(mlx5_err_cqe, signature);
    OFF(mlx5_err_cqe, op_own);

    PRINT("MLX5_SEND_WQE_BB", MLX5_SEND_WQE_BB);
    PRINT("MLX5_SEND_WQE_SHIFT", MLX5_SEND_WQE_SHIFT);
    PRINT("MLX5_INLINE_SEG", (uint32_t)MLX5_INLINE_SEG);
    PRINT("MLX5_RCV_DBR", MLX5_RCV_DBR);
    PRINT("MLX5_SND_DBR", MLX5_SND_DBR);
    PRINT("MLX5_INVALID_LKEY", MLX5_INVALID_LKEY);
    PRINT("MLX5_OPCODE_NOP", MLX5_OPCODE_NOP);
    PRINT("MLX5_OPCODE_RDMA_WRITE", MLX5_OPCODE_RDMA_WRITE);
    PRINT("MLX5_OPCODE_RDMA_WRITE_IMM", MLX5_OPCODE_RDMA_WRITE_IMM);
    PRINT("MLX5_OPCODE_SEND", MLX5_OPCODE_SEND);
    PRINT("MLX5_OPCODE_SEND_IMM", MLX5_OPCODE_SEND_IMM);
    PRINT("MLX5_OPCODE_RDMA_READ", MLX5_OPCODE_RDMA_READ);
    PRINT("MLX5_OPCODE_ATOMIC_CS", MLX5_OPCODE_ATOMIC_CS);
    PRINT("MLX5_OPCODE_ATOMIC_FA", MLX5_OPCODE_ATOMIC_FA);
    PRINT("MLX5_WQE_CTRL_CQ_UPDATE", MLX5_WQE_CTRL_CQ_UPDATE);
    PRINT("MLX5_WQE_CTRL_SOLICITED", MLX5_WQE_CTRL_SOLICITED);
    PRINT("MLX5_WQE_CTRL_FENCE", MLX5_WQE_CTRL_FENCE);
    PRINT("MLX5_CQE_OWNER_MASK", MLX5_CQE_OWNER_MASK);
    PRINT("MLX5_CQE_REQ", MLX5_CQE_REQ);
    PRINT("MLX5_CQE_RESP_WR_IMM", MLX5_CQE_RESP_WR_IMM);
    PRINT("MLX5_CQE_RESP_SEND", MLX5_CQE_RESP_SEND);
    PRINT("MLX5_CQE_RESP_SEND_IMM", MLX5_CQE_RESP_SEND_IMM);
    PRINT("MLX5_CQE_REQ_ERR", MLX5_CQE_REQ_ERR);
    PRINT("MLX5_CQE_RESP_ERR", MLX5_CQE_RESP_ERR);
    PRINT("MLX5_CQE_INVALID", MLX5_CQE_INVALID);
    PRINT("MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR", MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
    PRINT("MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR", MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
    PRINT("MLX5_CQE_SYNDROME_LOCAL_PROT_ERR", MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
    PRINT("MLX5_CQE_SYNDROME_WR_FLUSH_ERR", MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
    PRINT("MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR", MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
    PRINT("MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR", MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
    PRINT("MLX5_CQE_SYNDROME_REMOTE_OP_ERR", MLX5_CQE_SYNDROME_REMOTE_OP_ERR);
    PRINT("MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR", MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
    PRINT("MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR", MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR);

    /* An RDMA write with immediate, signaled and fenced, at producer index 0x1234 of QP 0xabcde: ctrl, raddr, two
       data segments (ds 4, one basic block), built with the header's helpers. */
    unsigned char wqe[64];
    memset(wqe, 0, sizeof wqe);
    struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
    mlx5dv_set_ctrl_seg(ctrl, 0x1234, MLX5_OPCODE_RDMA_WRITE_IMM, 0, 0xabcde,
                        MLX5_WQE_CTRL_CQ_UPDATE | MLX5_WQE_CTRL_FENCE, 4, 0, htobe32(0x01020304));
    struct mlx5_wqe_raddr_seg *raddr = (void *)(wqe + 16);
    raddr->raddr = htobe64(0x1122334455667788ULL);
    raddr->rkey = htobe32(0xcafef00d);
    raddr->reserved = 0;
    mlx5dv_set_data_seg((void *)(wqe + 32), 100, 0x1000aa, 0x7f0000001000ULL);
    mlx5dv_set_data_seg((void *)(wqe + 48), 28, 0x2000bb, 0x7f0000002000ULL);
    hex("wqe.write_imm", wqe, sizeof wqe);

    /* A requester CQE of the second pass (owner 1) for WQE counter 0x1234, and an error CQE. */
    struct mlx5_cqe64 cqe;
    memset(&cqe, 0, sizeof cqe);
    cqe.byte_cnt = htobe32(128);
    cqe.sop_drop_qpn = htobe32(0xabcde);
    cqe.wqe_counter = htobe16(0x1234);
    mlx5dv_set_cqe_owner(&cqe, 1);
    cqe.op_own |= MLX5_CQE_REQ << 4;
    hex("cqe.req", &cqe, sizeof cqe);
    struct mlx5_cqe64 rcqe;
    memset(&rcqe, 0, sizeof rcqe);
    rcqe.byte_cnt = htobe32(64);
    rcqe.imm_inval_pkey = htobe32(0x01020304);
    rcqe.sop_drop_qpn = htobe32(0x1234);
    rcqe.op_own = MLX5_CQE_RESP_SEND_IMM << 4;
    hex("cqe.resp_send_imm", &rcqe, sizeof rcqe);
    struct mlx5_err_cqe ecqe;
    memset(&ecqe, 0, sizeof ecqe);
    ecqe.syndrome = MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
    ecqe.vendor_err_synd = 7;
    ecqe.s_wqe_opcode_qpn = htobe32((MLX5_OPCODE_RDMA_WRITE << 24) | 0xabcde);
    ecqe.wqe_counter = htobe16(0x0042);
    ecqe.op_own = (MLX5_CQE_REQ_ERR << 4) | 1;
    hex("cqe.req_err", &ecqe, sizeof ecqe);
    return 0;
}
