package dev.gdasync.gdsync.mlx5.verbs;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.sequenceLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The verbs and mlx5 direct-verbs structures the bindings pass, as rdma-core 44's {@code infiniband/verbs.h} and
 * {@code infiniband/mlx5dv.h} lay them out on 64-bit Linux (enums are 32-bit ints, pointers and {@code off_t}
 * 64-bit), padding written out. Fields are in host byte order, except a GID's bytes, which are in network order.
 * A C probe compiled against the headers checks every size and offset here ({@code VerbsLayoutTest}).
 *
 * <p>{@link #IBV_QP} and {@link #IBV_MR} are the public heads of structures the library allocates and only the
 * bindings read; the others are allocated by the bindings and passed in.
 */
final class VerbsLayouts {
    /** {@code union ibv_gid}: 16 bytes, 8-byte aligned. */
    static final UnionLayout IBV_GID = MemoryLayout.unionLayout(
            sequenceLayout(16, JAVA_BYTE).withName("raw"),
            MemoryLayout.structLayout(
                    JAVA_LONG.withName("subnet_prefix"),
                    JAVA_LONG.withName("interface_id")).withName("global")).withName("ibv_gid");

    /** {@code struct ibv_global_route}. */
    static final StructLayout IBV_GLOBAL_ROUTE = MemoryLayout.structLayout(
            IBV_GID.withName("dgid"),
            JAVA_INT.withName("flow_label"),
            JAVA_BYTE.withName("sgid_index"),
            JAVA_BYTE.withName("hop_limit"),
            JAVA_BYTE.withName("traffic_class"),
            paddingLayout(1)).withName("ibv_global_route");

    /** {@code struct ibv_ah_attr}: an address vector. */
    static final StructLayout IBV_AH_ATTR = MemoryLayout.structLayout(
            IBV_GLOBAL_ROUTE.withName("grh"),
            JAVA_SHORT.withName("dlid"),
            JAVA_BYTE.withName("sl"),
            JAVA_BYTE.withName("src_path_bits"),
            JAVA_BYTE.withName("static_rate"),
            JAVA_BYTE.withName("is_global"),
            JAVA_BYTE.withName("port_num"),
            paddingLayout(1)).withName("ibv_ah_attr");

    /** {@code struct ibv_qp_cap}. */
    static final StructLayout IBV_QP_CAP = MemoryLayout.structLayout(
            JAVA_INT.withName("max_send_wr"),
            JAVA_INT.withName("max_recv_wr"),
            JAVA_INT.withName("max_send_sge"),
            JAVA_INT.withName("max_recv_sge"),
            JAVA_INT.withName("max_inline_data")).withName("ibv_qp_cap");

    /** {@code struct ibv_qp_init_attr}: what {@code ibv_create_qp} reads, and where it writes the capacities it gave. */
    static final StructLayout IBV_QP_INIT_ATTR = MemoryLayout.structLayout(
            ADDRESS.withName("qp_context"),
            ADDRESS.withName("send_cq"),
            ADDRESS.withName("recv_cq"),
            ADDRESS.withName("srq"),
            IBV_QP_CAP.withName("cap"),
            JAVA_INT.withName("qp_type"),
            JAVA_INT.withName("sq_sig_all"),
            paddingLayout(4)).withName("ibv_qp_init_attr");

    /** {@code struct ibv_qp_attr}: what {@code ibv_modify_qp} reads, by its mask. */
    static final StructLayout IBV_QP_ATTR = MemoryLayout.structLayout(
            JAVA_INT.withName("qp_state"),
            JAVA_INT.withName("cur_qp_state"),
            JAVA_INT.withName("path_mtu"),
            JAVA_INT.withName("path_mig_state"),
            JAVA_INT.withName("qkey"),
            JAVA_INT.withName("rq_psn"),
            JAVA_INT.withName("sq_psn"),
            JAVA_INT.withName("dest_qp_num"),
            JAVA_INT.withName("qp_access_flags"),
            IBV_QP_CAP.withName("cap"),
            IBV_AH_ATTR.withName("ah_attr"),
            IBV_AH_ATTR.withName("alt_ah_attr"),
            JAVA_SHORT.withName("pkey_index"),
            JAVA_SHORT.withName("alt_pkey_index"),
            JAVA_BYTE.withName("en_sqd_async_notify"),
            JAVA_BYTE.withName("sq_draining"),
            JAVA_BYTE.withName("max_rd_atomic"),
            JAVA_BYTE.withName("max_dest_rd_atomic"),
            JAVA_BYTE.withName("min_rnr_timer"),
            JAVA_BYTE.withName("port_num"),
            JAVA_BYTE.withName("timeout"),
            JAVA_BYTE.withName("retry_cnt"),
            JAVA_BYTE.withName("rnr_retry"),
            JAVA_BYTE.withName("alt_port_num"),
            JAVA_BYTE.withName("alt_timeout"),
            paddingLayout(1),
            JAVA_INT.withName("rate_limit"),
            paddingLayout(4)).withName("ibv_qp_attr");

    /** {@code struct ibv_port_attr} of rdma-core 44 (later versions append fields: see {@link #PORT_ATTR_ROOM}). */
    static final StructLayout IBV_PORT_ATTR = MemoryLayout.structLayout(
            JAVA_INT.withName("state"),
            JAVA_INT.withName("max_mtu"),
            JAVA_INT.withName("active_mtu"),
            JAVA_INT.withName("gid_tbl_len"),
            JAVA_INT.withName("port_cap_flags"),
            JAVA_INT.withName("max_msg_sz"),
            JAVA_INT.withName("bad_pkey_cntr"),
            JAVA_INT.withName("qkey_viol_cntr"),
            JAVA_SHORT.withName("pkey_tbl_len"),
            JAVA_SHORT.withName("lid"),
            JAVA_SHORT.withName("sm_lid"),
            JAVA_BYTE.withName("lmc"),
            JAVA_BYTE.withName("max_vl_num"),
            JAVA_BYTE.withName("sm_sl"),
            JAVA_BYTE.withName("subnet_timeout"),
            JAVA_BYTE.withName("init_type_reply"),
            JAVA_BYTE.withName("active_width"),
            JAVA_BYTE.withName("active_speed"),
            JAVA_BYTE.withName("phys_state"),
            JAVA_BYTE.withName("link_layer"),
            JAVA_BYTE.withName("flags"),
            JAVA_SHORT.withName("port_cap_flags2"),
            paddingLayout(2)).withName("ibv_port_attr");

    /**
     * Bytes given to the exported {@code ibv_query_port}: it writes the whole {@code ibv_port_attr} of the library's
     * own version, which may be longer than the one compiled here (rdma-core appends fields), so it gets room to
     * spare; the fields read are in the prefix every version shares.
     */
    static final long PORT_ATTR_ROOM = 256;

    /** {@code struct ibv_device_attr}: what {@code ibv_query_device} fills. */
    static final StructLayout IBV_DEVICE_ATTR = MemoryLayout.structLayout(
            sequenceLayout(64, JAVA_BYTE).withName("fw_ver"),
            JAVA_LONG.withName("node_guid"),
            JAVA_LONG.withName("sys_image_guid"),
            JAVA_LONG.withName("max_mr_size"),
            JAVA_LONG.withName("page_size_cap"),
            JAVA_INT.withName("vendor_id"),
            JAVA_INT.withName("vendor_part_id"),
            JAVA_INT.withName("hw_ver"),
            JAVA_INT.withName("max_qp"),
            JAVA_INT.withName("max_qp_wr"),
            JAVA_INT.withName("device_cap_flags"),
            JAVA_INT.withName("max_sge"),
            JAVA_INT.withName("max_sge_rd"),
            JAVA_INT.withName("max_cq"),
            JAVA_INT.withName("max_cqe"),
            JAVA_INT.withName("max_mr"),
            JAVA_INT.withName("max_pd"),
            JAVA_INT.withName("max_qp_rd_atom"),
            JAVA_INT.withName("max_ee_rd_atom"),
            JAVA_INT.withName("max_res_rd_atom"),
            JAVA_INT.withName("max_qp_init_rd_atom"),
            JAVA_INT.withName("max_ee_init_rd_atom"),
            JAVA_INT.withName("atomic_cap"),
            JAVA_INT.withName("max_ee"),
            JAVA_INT.withName("max_rdd"),
            JAVA_INT.withName("max_mw"),
            JAVA_INT.withName("max_raw_ipv6_qp"),
            JAVA_INT.withName("max_raw_ethy_qp"),
            JAVA_INT.withName("max_mcast_grp"),
            JAVA_INT.withName("max_mcast_qp_attach"),
            JAVA_INT.withName("max_total_mcast_qp_attach"),
            JAVA_INT.withName("max_ah"),
            JAVA_INT.withName("max_fmr"),
            JAVA_INT.withName("max_map_per_fmr"),
            JAVA_INT.withName("max_srq"),
            JAVA_INT.withName("max_srq_wr"),
            JAVA_INT.withName("max_srq_sge"),
            JAVA_SHORT.withName("max_pkeys"),
            JAVA_BYTE.withName("local_ca_ack_delay"),
            JAVA_BYTE.withName("phys_port_cnt"),
            paddingLayout(4)).withName("ibv_device_attr");

    /** The head of {@code struct ibv_qp}, up to its type (a mutex and a condition variable follow). */
    static final StructLayout IBV_QP = MemoryLayout.structLayout(
            ADDRESS.withName("context"),
            ADDRESS.withName("qp_context"),
            ADDRESS.withName("pd"),
            ADDRESS.withName("send_cq"),
            ADDRESS.withName("recv_cq"),
            ADDRESS.withName("srq"),
            JAVA_INT.withName("handle"),
            JAVA_INT.withName("qp_num"),
            JAVA_INT.withName("state"),
            JAVA_INT.withName("qp_type")).withName("ibv_qp");

    /** {@code struct ibv_mr}. */
    static final StructLayout IBV_MR = MemoryLayout.structLayout(
            ADDRESS.withName("context"),
            ADDRESS.withName("pd"),
            ADDRESS.withName("addr"),
            JAVA_LONG.withName("length"),
            JAVA_INT.withName("handle"),
            JAVA_INT.withName("lkey"),
            JAVA_INT.withName("rkey"),
            paddingLayout(4)).withName("ibv_mr");

    /** {@code struct mlx5dv_qp}: where libmlx5 put a queue pair's queues. */
    static final StructLayout MLX5DV_QP = MemoryLayout.structLayout(
            ADDRESS.withName("dbrec"),
            MemoryLayout.structLayout(
                    ADDRESS.withName("buf"),
                    JAVA_INT.withName("wqe_cnt"),
                    JAVA_INT.withName("stride")).withName("sq"),
            MemoryLayout.structLayout(
                    ADDRESS.withName("buf"),
                    JAVA_INT.withName("wqe_cnt"),
                    JAVA_INT.withName("stride")).withName("rq"),
            MemoryLayout.structLayout(
                    ADDRESS.withName("reg"),
                    JAVA_INT.withName("size"),
                    paddingLayout(4)).withName("bf"),
            JAVA_LONG.withName("comp_mask"),
            JAVA_LONG.withName("uar_mmap_offset"),
            JAVA_INT.withName("tirn"),
            JAVA_INT.withName("tisn"),
            JAVA_INT.withName("rqn"),
            JAVA_INT.withName("sqn"),
            JAVA_LONG.withName("tir_icm_addr")).withName("mlx5dv_qp");

    /** {@code struct mlx5dv_cq}: where libmlx5 put a completion queue. */
    static final StructLayout MLX5DV_CQ = MemoryLayout.structLayout(
            ADDRESS.withName("buf"),
            ADDRESS.withName("dbrec"),
            JAVA_INT.withName("cqe_cnt"),
            JAVA_INT.withName("cqe_size"),
            ADDRESS.withName("cq_uar"),
            JAVA_INT.withName("cqn"),
            paddingLayout(4),
            JAVA_LONG.withName("comp_mask")).withName("mlx5dv_cq");

    /** {@code struct mlx5dv_obj}: an {in, out} pair of pointers per object kind. */
    static final StructLayout MLX5DV_OBJ = MemoryLayout.structLayout(
            pair("qp"), pair("cq"), pair("srq"), pair("rwq"), pair("dm"), pair("ah"), pair("pd")).withName("mlx5dv_obj");

    private VerbsLayouts() {
    }

    private static GroupLayout pair(String name) {
        return MemoryLayout.structLayout(ADDRESS.withName("in"), ADDRESS.withName("out")).withName(name);
    }

    /**
     * @param layout a structure
     * @param path   field names, outermost first
     * @return the field's byte offset
     */
    static long offset(MemoryLayout layout, String... path) {
        MemoryLayout.PathElement[] elements = new MemoryLayout.PathElement[path.length];
        for (int i = 0; i < path.length; i++) {
            elements[i] = groupElement(path[i]);
        }
        return layout.byteOffset(elements);
    }
}
