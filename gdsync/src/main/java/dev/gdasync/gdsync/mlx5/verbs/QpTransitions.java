package dev.gdasync.gdsync.mlx5.verbs;

import dev.gdasync.gdsync.nic.Access;

import java.lang.foreign.MemorySegment;

import static dev.gdasync.gdsync.mlx5.verbs.VerbsLayouts.IBV_AH_ATTR;
import static dev.gdasync.gdsync.mlx5.verbs.VerbsLayouts.IBV_QP_ATTR;
import static dev.gdasync.gdsync.mlx5.verbs.VerbsLayouts.offset;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The {@code ibv_qp_attr} of each step that connects an RC queue pair, RESET to INIT to RTR to RTS, and of the move
 * to ERR, with the mask {@code ibv_modify_qp} takes with it. Each method clears the structure first. The values and
 * why they were chosen are in docs/mlx5-hardware.md.
 */
final class QpTransitions {
    /** The access every queue pair grants its peer: the provider decides per registration what a peer may touch. */
    static final int QP_ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC;
    /**
     * The local ACK timeout exponent: 4.096 us * 2^14, about 67 ms. With {@link #RETRY_COUNT} retries a peer that
     * stopped answering is reported within about half a second.
     */
    static final int ACK_TIMEOUT = 14;
    /** Transport retries before a send fails with a retry-exceeded error (7 is the most the field holds). */
    static final int RETRY_COUNT = 7;
    /** Receiver-not-ready retries: 7 means without end, so a send may arrive before the peer posted its receive. */
    static final int RNR_RETRY = 7;
    /** The RNR NAK timer code a sender waits between RNR retries: 12 means 0.64 ms. */
    static final int MIN_RNR_TIMER = 12;
    /** RDMA reads and atomics outstanding per queue pair, each way, before the device's own limits. */
    static final int RD_ATOMIC = 16;
    /** The GRH hop limit: enough for a routed (RoCE v2) fabric. */
    static final int HOP_LIMIT = 64;

    /** The attributes RESET to INIT sets. */
    static final int INIT_MASK = VerbsConstants.IBV_QP_STATE | VerbsConstants.IBV_QP_PKEY_INDEX | VerbsConstants.IBV_QP_PORT
            | VerbsConstants.IBV_QP_ACCESS_FLAGS;
    /** The attributes INIT to RTR sets. */
    static final int RTR_MASK = VerbsConstants.IBV_QP_STATE | VerbsConstants.IBV_QP_AV | VerbsConstants.IBV_QP_PATH_MTU
            | VerbsConstants.IBV_QP_DEST_QPN | VerbsConstants.IBV_QP_RQ_PSN | VerbsConstants.IBV_QP_MAX_DEST_RD_ATOMIC
            | VerbsConstants.IBV_QP_MIN_RNR_TIMER;
    /** The attributes RTR to RTS sets. */
    static final int RTS_MASK = VerbsConstants.IBV_QP_STATE | VerbsConstants.IBV_QP_TIMEOUT | VerbsConstants.IBV_QP_RETRY_CNT
            | VerbsConstants.IBV_QP_RNR_RETRY | VerbsConstants.IBV_QP_SQ_PSN | VerbsConstants.IBV_QP_MAX_QP_RD_ATOMIC;
    /** The attribute the move to ERR sets. */
    static final int ERR_MASK = VerbsConstants.IBV_QP_STATE;

    private QpTransitions() {
    }

    /**
     * RESET to INIT: the port, P_Key index 0 (the default partition), every remote access.
     *
     * @param attr an {@link VerbsLayouts#IBV_QP_ATTR}
     * @param port the port
     */
    static void init(MemorySegment attr, int port) {
        attr.fill((byte) 0);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), VerbsConstants.IBV_QPS_INIT);
        attr.set(JAVA_SHORT, offset(IBV_QP_ATTR, "pkey_index"), (short) 0);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "port_num"), (byte) port);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_access_flags"), QP_ACCESS);
    }

    /**
     * INIT to RTR: the smaller of both MTUs, the peer's number and first PSN, the reads and atomics answered at once,
     * the RNR timer, and the address vector (by GID when the peer sent one, by LID otherwise).
     *
     * @param attr        an {@link VerbsLayouts#IBV_QP_ATTR}
     * @param localMtu    this port's active MTU ({@code IBV_MTU_*})
     * @param peer        the peer's endpoint
     * @param port        this port
     * @param gidIndex    the GID index this queue pair sends from
     * @param maxQpRdAtom the device's {@code max_qp_rd_atom}
     */
    static void readyToReceive(MemorySegment attr, int localMtu, VerbsEndpoint peer, int port, int gidIndex,
                               int maxQpRdAtom) {
        attr.fill((byte) 0);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), VerbsConstants.IBV_QPS_RTR);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "path_mtu"), Math.min(localMtu, peer.mtu()));
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "dest_qp_num"), peer.qpn());
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "rq_psn"), peer.psn());
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "max_dest_rd_atomic"), (byte) Math.min(RD_ATOMIC, maxQpRdAtom));
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "min_rnr_timer"), (byte) MIN_RNR_TIMER);
        long ah = offset(IBV_QP_ATTR, "ah_attr");
        attr.set(JAVA_SHORT, ah + offset(IBV_AH_ATTR, "dlid"), (short) peer.lid());
        attr.set(JAVA_BYTE, ah + offset(IBV_AH_ATTR, "sl"), (byte) 0);
        attr.set(JAVA_BYTE, ah + offset(IBV_AH_ATTR, "src_path_bits"), (byte) 0);
        attr.set(JAVA_BYTE, ah + offset(IBV_AH_ATTR, "port_num"), (byte) port);
        if (!peer.routesByLid()) {
            attr.set(JAVA_BYTE, ah + offset(IBV_AH_ATTR, "is_global"), (byte) 1);
            MemorySegment.copy(peer.gid(), 0, attr, JAVA_BYTE, ah + offset(IBV_AH_ATTR, "grh", "dgid"), 16);
            attr.set(JAVA_BYTE, ah + offset(IBV_AH_ATTR, "grh", "sgid_index"), (byte) gidIndex);
            attr.set(JAVA_BYTE, ah + offset(IBV_AH_ATTR, "grh", "hop_limit"), (byte) HOP_LIMIT);
        }
    }

    /**
     * RTR to RTS: the ACK timeout and retries, this queue pair's first PSN, the reads and atomics outstanding.
     *
     * @param attr            an {@link VerbsLayouts#IBV_QP_ATTR}
     * @param psn             this queue pair's first PSN
     * @param maxQpInitRdAtom the device's {@code max_qp_init_rd_atom}
     */
    static void readyToSend(MemorySegment attr, int psn, int maxQpInitRdAtom) {
        attr.fill((byte) 0);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), VerbsConstants.IBV_QPS_RTS);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "timeout"), (byte) ACK_TIMEOUT);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "retry_cnt"), (byte) RETRY_COUNT);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "rnr_retry"), (byte) RNR_RETRY);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "sq_psn"), psn);
        attr.set(JAVA_BYTE, offset(IBV_QP_ATTR, "max_rd_atomic"), (byte) Math.min(RD_ATOMIC, maxQpInitRdAtom));
    }

    /**
     * Any state to ERR.
     *
     * @param attr an {@link VerbsLayouts#IBV_QP_ATTR}
     */
    static void error(MemorySegment attr) {
        attr.fill((byte) 0);
        attr.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), VerbsConstants.IBV_QPS_ERR);
    }
}
