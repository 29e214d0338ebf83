package dev.gdasync.gdsync.mlx5.verbs;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;

import static dev.gdasync.gdsync.mlx5.verbs.VerbsLayouts.IBV_QP_ATTR;
import static dev.gdasync.gdsync.mlx5.verbs.VerbsLayouts.offset;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What each step of connecting writes into {@code ibv_qp_attr}, byte for byte where the device will read it, and the
 * masks that go with them: the connect state machine checked without a NIC.
 */
class QpTransitionsTest {
    private static final byte[] PEER_GID = HexFormat.of().parseHex("00000000000000000000ffffc0a80a07");

    private static int i32(MemorySegment attr, String... path) {
        return attr.get(JAVA_INT, offset(IBV_QP_ATTR, path));
    }

    private static int u8(MemorySegment attr, String... path) {
        return attr.get(JAVA_BYTE, offset(IBV_QP_ATTR, path)) & 0xff;
    }

    private static int u16(MemorySegment attr, String... path) {
        return attr.get(JAVA_SHORT, offset(IBV_QP_ATTR, path)) & 0xffff;
    }

    private static MemorySegment dirty(Arena arena) {
        MemorySegment attr = arena.allocate(IBV_QP_ATTR);
        attr.fill((byte) 0x55); // each step must clear what an earlier one left
        return attr;
    }

    @Test
    void theMasksNameExactlyTheAttributesEachStepSets() {
        assertEquals(0x39, QpTransitions.INIT_MASK, "STATE | ACCESS_FLAGS | PKEY_INDEX | PORT");
        assertEquals(0x129181, QpTransitions.RTR_MASK, "STATE | AV | PATH_MTU | RQ_PSN | MIN_RNR_TIMER | MAX_DEST_RD_ATOMIC | DEST_QPN");
        assertEquals(0x12e01, QpTransitions.RTS_MASK, "STATE | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC | SQ_PSN");
        assertEquals(1, QpTransitions.ERR_MASK);
    }

    @Test
    void resetToInitSetsThePortThePartitionAndEveryRemoteAccess() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = dirty(arena);
            QpTransitions.init(attr, 2);
            assertEquals(VerbsConstants.IBV_QPS_INIT, i32(attr, "qp_state"));
            assertEquals(0, u16(attr, "pkey_index"));
            assertEquals(2, u8(attr, "port_num"));
            assertEquals(VerbsConstants.IBV_ACCESS_LOCAL_WRITE | VerbsConstants.IBV_ACCESS_REMOTE_WRITE
                    | VerbsConstants.IBV_ACCESS_REMOTE_READ | VerbsConstants.IBV_ACCESS_REMOTE_ATOMIC, i32(attr, "qp_access_flags"));
            assertEquals(0, i32(attr, "path_mtu"), "cleared");
        }
    }

    @Test
    void initToRtrOnRoceAddressesThePeerByGid() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = dirty(arena);
            VerbsEndpoint peer = new VerbsEndpoint(0xabcde, 0x123456, 0, PEER_GID, 1, VerbsConstants.IBV_MTU_1024);
            QpTransitions.readyToReceive(attr, VerbsConstants.IBV_MTU_4096, peer, 1, 3, 8);
            assertEquals(VerbsConstants.IBV_QPS_RTR, i32(attr, "qp_state"));
            assertEquals(VerbsConstants.IBV_MTU_1024, i32(attr, "path_mtu"), "the smaller of both ports' MTUs");
            assertEquals(0xabcde, i32(attr, "dest_qp_num"));
            assertEquals(0x123456, i32(attr, "rq_psn"));
            assertEquals(8, u8(attr, "max_dest_rd_atomic"), "the device's limit, below 16");
            assertEquals(QpTransitions.MIN_RNR_TIMER, u8(attr, "min_rnr_timer"));
            assertEquals(1, u8(attr, "ah_attr", "is_global"));
            long dgid = offset(IBV_QP_ATTR, "ah_attr", "grh", "dgid");
            assertArrayEquals(PEER_GID, attr.asSlice(dgid, 16).toArray(JAVA_BYTE));
            assertEquals(3, u8(attr, "ah_attr", "grh", "sgid_index"));
            assertEquals(QpTransitions.HOP_LIMIT, u8(attr, "ah_attr", "grh", "hop_limit"));
            assertEquals(0, u8(attr, "ah_attr", "grh", "traffic_class"));
            assertEquals(0, i32(attr, "ah_attr", "grh", "flow_label"));
            assertEquals(0, u16(attr, "ah_attr", "dlid"));
            assertEquals(1, u8(attr, "ah_attr", "port_num"));
            assertEquals(0, u8(attr, "ah_attr", "sl"));
            assertEquals(0, u8(attr, "timeout"), "cleared");
        }
    }

    @Test
    void initToRtrOnInfinibandAddressesThePeerByLid() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = dirty(arena);
            VerbsEndpoint peer = new VerbsEndpoint(0x42, 7, 0x1234, new byte[16], 1, VerbsConstants.IBV_MTU_4096);
            QpTransitions.readyToReceive(attr, VerbsConstants.IBV_MTU_2048, peer, 1, 0, 64);
            assertEquals(VerbsConstants.IBV_MTU_2048, i32(attr, "path_mtu"));
            assertEquals(QpTransitions.RD_ATOMIC, u8(attr, "max_dest_rd_atomic"), "16 below the device's limit");
            assertEquals(0, u8(attr, "ah_attr", "is_global"));
            assertEquals(0x1234, u16(attr, "ah_attr", "dlid"));
            long dgid = offset(IBV_QP_ATTR, "ah_attr", "grh", "dgid");
            assertArrayEquals(new byte[16], attr.asSlice(dgid, 16).toArray(JAVA_BYTE));
        }
    }

    @Test
    void rtrToRtsSetsTheTimeoutsRetriesAndThisQueuePairsPsn() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = dirty(arena);
            QpTransitions.readyToSend(attr, 0xfedcba, 4);
            assertEquals(VerbsConstants.IBV_QPS_RTS, i32(attr, "qp_state"));
            assertEquals(14, u8(attr, "timeout"));
            assertEquals(7, u8(attr, "retry_cnt"));
            assertEquals(7, u8(attr, "rnr_retry"));
            assertEquals(0xfedcba, i32(attr, "sq_psn"));
            assertEquals(4, u8(attr, "max_rd_atomic"));
            assertEquals(0, i32(attr, "dest_qp_num"), "cleared");
        }
    }

    @Test
    void toErrorSetsOnlyTheState() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = dirty(arena);
            QpTransitions.error(attr);
            assertEquals(VerbsConstants.IBV_QPS_ERR, i32(attr, "qp_state"));
            MemorySegment zeros = arena.allocate(IBV_QP_ATTR.byteSize() - 4);
            assertEquals(-1L, attr.asSlice(4).mismatch(zeros), "the rest is zero");
        }
    }
}
