package dev.gdasync.gdsync.mlx5.verbs;

/**
 * The verbs and mlx5 direct-verbs constants the bindings use, with rdma-core 44's values ({@code infiniband/verbs.h},
 * {@code infiniband/mlx5dv.h}); a C probe checks each ({@code VerbsLayoutTest}).
 */
final class VerbsConstants {
    /** {@code IBV_QPS_RESET}: a new queue pair's state. */
    static final int IBV_QPS_RESET = 0;
    /** {@code IBV_QPS_INIT}. */
    static final int IBV_QPS_INIT = 1;
    /** {@code IBV_QPS_RTR}: ready to receive. */
    static final int IBV_QPS_RTR = 2;
    /** {@code IBV_QPS_RTS}: ready to send. */
    static final int IBV_QPS_RTS = 3;
    /** {@code IBV_QPS_SQD}. */
    static final int IBV_QPS_SQD = 4;
    /** {@code IBV_QPS_SQE}. */
    static final int IBV_QPS_SQE = 5;
    /** {@code IBV_QPS_ERR}: every outstanding request completes with a flush error. */
    static final int IBV_QPS_ERR = 6;

    /** {@code IBV_QP_STATE}. */
    static final int IBV_QP_STATE = 1;
    /** {@code IBV_QP_ACCESS_FLAGS}. */
    static final int IBV_QP_ACCESS_FLAGS = 1 << 3;
    /** {@code IBV_QP_PKEY_INDEX}. */
    static final int IBV_QP_PKEY_INDEX = 1 << 4;
    /** {@code IBV_QP_PORT}. */
    static final int IBV_QP_PORT = 1 << 5;
    /** {@code IBV_QP_AV}. */
    static final int IBV_QP_AV = 1 << 7;
    /** {@code IBV_QP_PATH_MTU}. */
    static final int IBV_QP_PATH_MTU = 1 << 8;
    /** {@code IBV_QP_TIMEOUT}. */
    static final int IBV_QP_TIMEOUT = 1 << 9;
    /** {@code IBV_QP_RETRY_CNT}. */
    static final int IBV_QP_RETRY_CNT = 1 << 10;
    /** {@code IBV_QP_RNR_RETRY}. */
    static final int IBV_QP_RNR_RETRY = 1 << 11;
    /** {@code IBV_QP_RQ_PSN}. */
    static final int IBV_QP_RQ_PSN = 1 << 12;
    /** {@code IBV_QP_MAX_QP_RD_ATOMIC}. */
    static final int IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13;
    /** {@code IBV_QP_MIN_RNR_TIMER}. */
    static final int IBV_QP_MIN_RNR_TIMER = 1 << 15;
    /** {@code IBV_QP_SQ_PSN}. */
    static final int IBV_QP_SQ_PSN = 1 << 16;
    /** {@code IBV_QP_MAX_DEST_RD_ATOMIC}. */
    static final int IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17;
    /** {@code IBV_QP_DEST_QPN}. */
    static final int IBV_QP_DEST_QPN = 1 << 20;

    /** {@code IBV_QPT_RC}: reliable connected. */
    static final int IBV_QPT_RC = 2;

    /** {@code IBV_MTU_256}. */
    static final int IBV_MTU_256 = 1;
    /** {@code IBV_MTU_512}. */
    static final int IBV_MTU_512 = 2;
    /** {@code IBV_MTU_1024}. */
    static final int IBV_MTU_1024 = 3;
    /** {@code IBV_MTU_2048}. */
    static final int IBV_MTU_2048 = 4;
    /** {@code IBV_MTU_4096}. */
    static final int IBV_MTU_4096 = 5;

    /** {@code IBV_PORT_DOWN}. */
    static final int IBV_PORT_DOWN = 1;
    /** {@code IBV_PORT_INIT}. */
    static final int IBV_PORT_INIT = 2;
    /** {@code IBV_PORT_ARMED}. */
    static final int IBV_PORT_ARMED = 3;
    /** {@code IBV_PORT_ACTIVE}. */
    static final int IBV_PORT_ACTIVE = 4;

    /** {@code IBV_LINK_LAYER_UNSPECIFIED}: reported by old kernels for InfiniBand ports. */
    static final int IBV_LINK_LAYER_UNSPECIFIED = 0;
    /** {@code IBV_LINK_LAYER_INFINIBAND}. */
    static final int IBV_LINK_LAYER_INFINIBAND = 1;
    /** {@code IBV_LINK_LAYER_ETHERNET}: RoCE. */
    static final int IBV_LINK_LAYER_ETHERNET = 2;

    /** {@code IBV_ACCESS_LOCAL_WRITE}. */
    static final int IBV_ACCESS_LOCAL_WRITE = 1;
    /** {@code IBV_ACCESS_REMOTE_WRITE}. */
    static final int IBV_ACCESS_REMOTE_WRITE = 1 << 1;
    /** {@code IBV_ACCESS_REMOTE_READ}. */
    static final int IBV_ACCESS_REMOTE_READ = 1 << 2;
    /** {@code IBV_ACCESS_REMOTE_ATOMIC}. */
    static final int IBV_ACCESS_REMOTE_ATOMIC = 1 << 3;

    /** {@code MLX5DV_OBJ_QP}. */
    static final long MLX5DV_OBJ_QP = 1;
    /** {@code MLX5DV_OBJ_CQ}. */
    static final long MLX5DV_OBJ_CQ = 1 << 1;

    private VerbsConstants() {
    }

    /**
     * @param mtu an {@code IBV_MTU_*} value
     * @return its bytes, or -1 if it is none
     */
    static int mtuBytes(int mtu) {
        return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : -1;
    }

    /**
     * @param state an {@code IBV_PORT_*} value
     * @return its name, for messages
     */
    static String portState(int state) {
        return switch (state) {
            case 0 -> "NOP";
            case IBV_PORT_DOWN -> "DOWN";
            case IBV_PORT_INIT -> "INIT";
            case IBV_PORT_ARMED -> "ARMED";
            case IBV_PORT_ACTIVE -> "ACTIVE";
            case 5 -> "ACTIVE_DEFER";
            default -> "state " + state;
        };
    }
}
