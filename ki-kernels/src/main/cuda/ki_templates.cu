/*
 * gdasync KI kernels: the templates of docs/ki.md ("Kernels") over a KI descriptor table, on the device API
 * of device.cuh. Built to PTX and cubins by build-kernels.sh and launched from Java by name, with the
 * parameters in the order given here. Every spin is bounded; failures go to the table's status fields.
 */
#include "device.cuh"

/*
 * Ping-pong, one thread (grid 1, block 1; any other thread returns at once). Iteration i uses send entry i
 * (message i) and wait entry i (the receive completion of the peer's message i):
 *   initiator: send i, wait i, signal i, compute
 *   responder: wait i, signal i, compute, send i
 * compute is compute_ns of busy waiting on the global timer.
 */
extern "C" __global__ void gds_ki_pingpong(const gds_ki_table_header *table, uint32_t count, uint32_t initiator,
                                           uint64_t compute_ns, uint64_t timeout_ns) {
    if (threadIdx.x + threadIdx.y + threadIdx.z + blockIdx.x + blockIdx.y + blockIdx.z != 0) {
        return;
    }
    if (gds_ki::check_table(table) != GDS_KI_OK || count > table->send_count || count > table->wait_count) {
        gds_ki::report(table, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        const gds_ki_wait *w = gds_ki::wait_entry(table, i);
        if (initiator) {
            gds_ki::send(gds_ki::send_entry(table, i));
        }
        int rc = gds_ki::wait(w, timeout_ns);
        if (rc != GDS_KI_OK) {
            gds_ki::report(table, rc, GDS_KI_KIND_WAIT, i);
            return;
        }
        gds_ki::signal(w);
        gds_ki::spin_ns(compute_ns);
        if (!initiator) {
            gds_ki::send(gds_ki::send_entry(table, i));
        }
    }
}

/*
 * Template sends, one thread (grid 1, block 1; any other thread returns at once): for i in 0..count-1,
 * patch template entry i with args[i] and ring it, in table order.
 */
extern "C" __global__ void gds_ki_send_templates(const gds_ki_table_header *table, const gds_ki_template_args *args,
                                                 uint32_t count) {
    if (threadIdx.x + threadIdx.y + threadIdx.z + blockIdx.x + blockIdx.y + blockIdx.z != 0) {
        return;
    }
    if (gds_ki::check_table(table) != GDS_KI_OK || count > table->template_count || (count != 0 && args == nullptr)) {
        gds_ki::report(table, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        gds_ki::send_template(gds_ki::template_entry(table, i), args + i);
    }
}

/*
 * The fused exchange with copy work: grid 1 + pack_blocks + unpack_blocks, launched cooperatively so that
 * every block is resident; any block size. ctl is zero at launch.
 */
extern "C" __global__ void gds_ki_exchange(const gds_ki_table_header *table, gds_ki_exchange_ctl *ctl,
                                           const gds_ki_exchange_work *work, uint32_t pack_blocks,
                                           uint32_t unpack_blocks, uint64_t timeout_ns) {
    if (ctl == nullptr || work == nullptr) {
        if (threadIdx.x + threadIdx.y + threadIdx.z == 0) {
            gds_ki::report(table, GDS_KI_INVALID, GDS_KI_KIND_NONE, 0);
        }
        return;
    }
    gds_ki::copy_work copies{work};
    gds_ki::exchange(table, ctl, copies, pack_blocks, unpack_blocks, timeout_ns);
}

/*
 * Emulated compute on a stream, one thread (grid 1, block 1): busy waiting of ns nanoseconds on the global
 * timer, then return. The GPU ping-pong runs it as the kernel that produces or consumes each message (LibMP's
 * benchmarks' compute kernel); with ns = 0 it is an empty kernel, the cost of a launch.
 */
extern "C" __global__ void gds_compute_spin(uint64_t ns) {
    if (threadIdx.x + blockIdx.x != 0) {
        return;
    }
    gds_ki::spin_ns(ns);
}
