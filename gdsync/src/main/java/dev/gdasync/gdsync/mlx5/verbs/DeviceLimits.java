package dev.gdasync.gdsync.mlx5.verbs;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * What {@code ibv_query_device} says of a device that the hardware device checks requests against.
 *
 * @param firmware        the firmware version
 * @param vendorPartId    the PCI device id (4129 for a ConnectX-7, ...)
 * @param maxQpWr         work requests per queue, at most
 * @param maxSge          scatter/gather entries per work request, at most
 * @param maxCqe          CQEs per completion queue, at most
 * @param maxQpRdAtom     RDMA reads and atomics a queue pair answers at once, at most (responder)
 * @param maxQpInitRdAtom RDMA reads and atomics a queue pair has outstanding, at most (initiator)
 * @param ports           physical ports
 */
record DeviceLimits(String firmware, int vendorPartId, int maxQpWr, int maxSge, int maxCqe, int maxQpRdAtom,
                    int maxQpInitRdAtom, int ports) {

    /**
     * @param attr a filled {@link VerbsLayouts#IBV_DEVICE_ATTR}
     * @return the limits
     */
    static DeviceLimits read(MemorySegment attr) {
        return new DeviceLimits(
                attr.asSlice(VerbsLayouts.offset(VerbsLayouts.IBV_DEVICE_ATTR, "fw_ver"), 64).getString(0),
                intField(attr, "vendor_part_id"),
                intField(attr, "max_qp_wr"),
                intField(attr, "max_sge"),
                intField(attr, "max_cqe"),
                intField(attr, "max_qp_rd_atom"),
                intField(attr, "max_qp_init_rd_atom"),
                attr.get(JAVA_BYTE, VerbsLayouts.offset(VerbsLayouts.IBV_DEVICE_ATTR, "phys_port_cnt")) & 0xff);
    }

    private static int intField(MemorySegment attr, String field) {
        return attr.get(JAVA_INT, VerbsLayouts.offset(VerbsLayouts.IBV_DEVICE_ATTR, field));
    }
}
