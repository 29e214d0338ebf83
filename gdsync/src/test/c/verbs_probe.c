/*
 * The verbs and mlx5 direct-verbs structures and constants as rdma-core's infiniband/verbs.h and
 * infiniband/mlx5dv.h declare them, printed for VerbsLayoutTest as "name value" lines: sizeof.T, alignof.T,
 * T.field (offsetof, nested fields joined by dots) and constants by their C names.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#define PRINT(name, value) printf("%s %lld\n", name, (long long)(value))
#define TYPE(T, name)                                 \
    do {                                              \
        PRINT("sizeof." name, sizeof(T));             \
        PRINT("alignof." name, alignof(T));           \
    } while (0)
#define OFF(T, name, field) PRINT(name "." #field, offsetof(T, field))
#define CONST(c) PRINT(#c, c)

int main(void) {
    TYPE(union ibv_gid, "ibv_gid");
    OFF(union ibv_gid, "ibv_gid", raw);
    OFF(union ibv_gid, "ibv_gid", global);
    OFF(union ibv_gid, "ibv_gid", global.subnet_prefix);
    OFF(union ibv_gid, "ibv_gid", global.interface_id);

    TYPE(struct ibv_global_route, "ibv_global_route");
    OFF(struct ibv_global_route, "ibv_global_route", dgid);
    OFF(struct ibv_global_route, "ibv_global_route", flow_label);
    OFF(struct ibv_global_route, "ibv_global_route", sgid_index);
    OFF(struct ibv_global_route, "ibv_global_route", hop_limit);
    OFF(struct ibv_global_route, "ibv_global_route", traffic_class);

    TYPE(struct ibv_ah_attr, "ibv_ah_attr");
    OFF(struct ibv_ah_attr, "ibv_ah_attr", grh);
    OFF(struct ibv_ah_attr, "ibv_ah_attr", dlid);
    OFF(struct ibv_ah_attr, "ibv_ah_attr", sl);
    OFF(struct ibv_ah_attr, "ibv_ah_attr", src_path_bits);
    OFF(struct ibv_ah_attr, "ibv_ah_attr", static_rate);
    OFF(struct ibv_ah_attr, "ibv_ah_attr", is_global);
    OFF(struct ibv_ah_attr, "ibv_ah_attr", port_num);

    TYPE(struct ibv_qp_cap, "ibv_qp_cap");
    OFF(struct ibv_qp_cap, "ibv_qp_cap", max_send_wr);
    OFF(struct ibv_qp_cap, "ibv_qp_cap", max_recv_wr);
    OFF(struct ibv_qp_cap, "ibv_qp_cap", max_send_sge);
    OFF(struct ibv_qp_cap, "ibv_qp_cap", max_recv_sge);
    OFF(struct ibv_qp_cap, "ibv_qp_cap", max_inline_data);

    TYPE(struct ibv_qp_init_attr, "ibv_qp_init_attr");
    OFF(struct ibv_qp_init_attr, "ibv_qp_init_attr", qp_context);
    OFF(struct ibv_qp_init_attr, "ibv_qp_init_attr", send_cq);
    OFF(struct ibv_qp_init_attr, "ibv_qp_init_attr", recv_cq);
    OFF(struct ibv_qp_init_attr, "ibv_qp_init_attr", srq);
    OFF(struct ibv_qp_init_attr, "ibv_qp_init_attr", cap);
    OFF(struct ibv_qp_init_attr, "ibv_qp_init_attr", qp_type);
    OFF(struct ibv_qp_init_attr, "ibv_qp_init_attr", sq_sig_all);

    TYPE(struct ibv_qp_attr, "ibv_qp_attr");
    OFF(struct ibv_qp_attr, "ibv_qp_attr", qp_state);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", cur_qp_state);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", path_mtu);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", path_mig_state);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", qkey);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", rq_psn);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", sq_psn);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", dest_qp_num);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", qp_access_flags);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", cap);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", ah_attr);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", alt_ah_attr);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", pkey_index);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", alt_pkey_index);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", en_sqd_async_notify);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", sq_draining);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", max_rd_atomic);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", max_dest_rd_atomic);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", min_rnr_timer);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", port_num);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", timeout);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", retry_cnt);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", rnr_retry);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", alt_port_num);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", alt_timeout);
    OFF(struct ibv_qp_attr, "ibv_qp_attr", rate_limit);

    TYPE(struct ibv_port_attr, "ibv_port_attr");
    OFF(struct ibv_port_attr, "ibv_port_attr", state);
    OFF(struct ibv_port_attr, "ibv_port_attr", max_mtu);
    OFF(struct ibv_port_attr, "ibv_port_attr", active_mtu);
    OFF(struct ibv_port_attr, "ibv_port_attr", gid_tbl_len);
    OFF(struct ibv_port_attr, "ibv_port_attr", port_cap_flags);
    OFF(struct ibv_port_attr, "ibv_port_attr", max_msg_sz);
    OFF(struct ibv_port_attr, "ibv_port_attr", bad_pkey_cntr);
    OFF(struct ibv_port_attr, "ibv_port_attr", qkey_viol_cntr);
    OFF(struct ibv_port_attr, "ibv_port_attr", pkey_tbl_len);
    OFF(struct ibv_port_attr, "ibv_port_attr", lid);
    OFF(struct ibv_port_attr, "ibv_port_attr", sm_lid);
    OFF(struct ibv_port_attr, "ibv_port_attr", lmc);
    OFF(struct ibv_port_attr, "ibv_port_attr", max_vl_num);
    OFF(struct ibv_port_attr, "ibv_port_attr", sm_sl);
    OFF(struct ibv_port_attr, "ibv_port_attr", subnet_timeout);
    OFF(struct ibv_port_attr, "ibv_port_attr", init_type_reply);
    OFF(struct ibv_port_attr, "ibv_port_attr", active_width);
    OFF(struct ibv_port_attr, "ibv_port_attr", active_speed);
    OFF(struct ibv_port_attr, "ibv_port_attr", phys_state);
    OFF(struct ibv_port_attr, "ibv_port_attr", link_layer);
    OFF(struct ibv_port_attr, "ibv_port_attr", flags);
    OFF(struct ibv_port_attr, "ibv_port_attr", port_cap_flags2);

    TYPE(struct ibv_device_attr, "ibv_device_attr");
    OFF(struct ibv_device_attr, "ibv_device_attr", fw_ver);
    OFF(struct ibv_device_attr, "ibv_device_attr", node_guid);
    OFF(struct ibv_device_attr, "ibv_device_attr", sys_image_guid);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_mr_size);
    OFF(struct ibv_device_attr, "ibv_device_attr", page_size_cap);
    OFF(struct ibv_device_attr, "ibv_device_attr", vendor_id);
    OFF(struct ibv_device_attr, "ibv_device_attr", vendor_part_id);
    OFF(struct ibv_device_attr, "ibv_device_attr", hw_ver);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_qp);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_qp_wr);
    OFF(struct ibv_device_attr, "ibv_device_attr", device_cap_flags);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_sge);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_sge_rd);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_cq);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_cqe);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_mr);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_pd);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_qp_rd_atom);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_ee_rd_atom);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_res_rd_atom);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_qp_init_rd_atom);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_ee_init_rd_atom);
    OFF(struct ibv_device_attr, "ibv_device_attr", atomic_cap);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_ee);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_rdd);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_mw);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_raw_ipv6_qp);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_raw_ethy_qp);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_mcast_grp);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_mcast_qp_attach);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_total_mcast_qp_attach);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_ah);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_fmr);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_map_per_fmr);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_srq);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_srq_wr);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_srq_sge);
    OFF(struct ibv_device_attr, "ibv_device_attr", max_pkeys);
    OFF(struct ibv_device_attr, "ibv_device_attr", local_ca_ack_delay);
    OFF(struct ibv_device_attr, "ibv_device_attr", phys_port_cnt);

    /* The library allocates these two; the bindings read their heads. */
    TYPE(struct ibv_qp, "ibv_qp");
    OFF(struct ibv_qp, "ibv_qp", context);
    OFF(struct ibv_qp, "ibv_qp", qp_context);
    OFF(struct ibv_qp, "ibv_qp", pd);
    OFF(struct ibv_qp, "ibv_qp", send_cq);
    OFF(struct ibv_qp, "ibv_qp", recv_cq);
    OFF(struct ibv_qp, "ibv_qp", srq);
    OFF(struct ibv_qp, "ibv_qp", handle);
    OFF(struct ibv_qp, "ibv_qp", qp_num);
    OFF(struct ibv_qp, "ibv_qp", state);
    OFF(struct ibv_qp, "ibv_qp", qp_type);

    TYPE(struct ibv_mr, "ibv_mr");
    OFF(struct ibv_mr, "ibv_mr", context);
    OFF(struct ibv_mr, "ibv_mr", pd);
    OFF(struct ibv_mr, "ibv_mr", addr);
    OFF(struct ibv_mr, "ibv_mr", length);
    OFF(struct ibv_mr, "ibv_mr", handle);
    OFF(struct ibv_mr, "ibv_mr", lkey);
    OFF(struct ibv_mr, "ibv_mr", rkey);

    TYPE(struct mlx5dv_qp, "mlx5dv_qp");
    OFF(struct mlx5dv_qp, "mlx5dv_qp", dbrec);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", sq);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", sq.buf);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", sq.wqe_cnt);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", sq.stride);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", rq);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", rq.buf);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", rq.wqe_cnt);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", rq.stride);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", bf);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", bf.reg);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", bf.size);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", comp_mask);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", uar_mmap_offset);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", tirn);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", tisn);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", rqn);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", sqn);
    OFF(struct mlx5dv_qp, "mlx5dv_qp", tir_icm_addr);

    TYPE(struct mlx5dv_cq, "mlx5dv_cq");
    OFF(struct mlx5dv_cq, "mlx5dv_cq", buf);
    OFF(struct mlx5dv_cq, "mlx5dv_cq", dbrec);
    OFF(struct mlx5dv_cq, "mlx5dv_cq", cqe_cnt);
    OFF(struct mlx5dv_cq, "mlx5dv_cq", cqe_size);
    OFF(struct mlx5dv_cq, "mlx5dv_cq", cq_uar);
    OFF(struct mlx5dv_cq, "mlx5dv_cq", cqn);
    OFF(struct mlx5dv_cq, "mlx5dv_cq", comp_mask);

    TYPE(struct mlx5dv_obj, "mlx5dv_obj");
#define PAIR(kind)                                          \
    OFF(struct mlx5dv_obj, "mlx5dv_obj", kind);             \
    OFF(struct mlx5dv_obj, "mlx5dv_obj", kind.in);          \
    OFF(struct mlx5dv_obj, "mlx5dv_obj", kind.out)
    PAIR(qp);
    PAIR(cq);
    PAIR(srq);
    PAIR(rwq);
    PAIR(dm);
    PAIR(ah);
    PAIR(pd);

    CONST(IBV_QPS_RESET);
    CONST(IBV_QPS_INIT);
    CONST(IBV_QPS_RTR);
    CONST(IBV_QPS_RTS);
    CONST(IBV_QPS_SQD);
    CONST(IBV_QPS_SQE);
    CONST(IBV_QPS_ERR);
    CONST(IBV_QP_STATE);
    CONST(IBV_QP_ACCESS_FLAGS);
    CONST(IBV_QP_PKEY_INDEX);
    CONST(IBV_QP_PORT);
    CONST(IBV_QP_AV);
    CONST(IBV_QP_PATH_MTU);
    CONST(IBV_QP_TIMEOUT);
    CONST(IBV_QP_RETRY_CNT);
    CONST(IBV_QP_RNR_RETRY);
    CONST(IBV_QP_RQ_PSN);
    CONST(IBV_QP_MAX_QP_RD_ATOMIC);
    CONST(IBV_QP_MIN_RNR_TIMER);
    CONST(IBV_QP_SQ_PSN);
    CONST(IBV_QP_MAX_DEST_RD_ATOMIC);
    CONST(IBV_QP_DEST_QPN);
    CONST(IBV_QPT_RC);
    CONST(IBV_MTU_256);
    CONST(IBV_MTU_512);
    CONST(IBV_MTU_1024);
    CONST(IBV_MTU_2048);
    CONST(IBV_MTU_4096);
    CONST(IBV_PORT_DOWN);
    CONST(IBV_PORT_INIT);
    CONST(IBV_PORT_ARMED);
    CONST(IBV_PORT_ACTIVE);
    CONST(IBV_LINK_LAYER_UNSPECIFIED);
    CONST(IBV_LINK_LAYER_INFINIBAND);
    CONST(IBV_LINK_LAYER_ETHERNET);
    CONST(IBV_ACCESS_LOCAL_WRITE);
    CONST(IBV_ACCESS_REMOTE_WRITE);
    CONST(IBV_ACCESS_REMOTE_READ);
    CONST(IBV_ACCESS_REMOTE_ATOMIC);
    CONST(IBV_SYSFS_NAME_MAX);
    CONST(MLX5DV_OBJ_QP);
    CONST(MLX5DV_OBJ_CQ);
    return 0;
}
