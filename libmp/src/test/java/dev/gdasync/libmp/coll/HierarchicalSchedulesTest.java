package dev.gdasync.libmp.coll;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shape of the hierarchical schedules for 6 ranks on 2 hosts (rank r on host r % 2): one message per pair of
 * hosts leaves the root's host in a bcast, only leaders exchange between hosts in an allgather, and every forward
 * waits for the receive it passes on. (Byte-for-byte results: {@code OffloadAcrossHostsTest}, {@code MpRunProxiesTest}.)
 */
class HierarchicalSchedulesTest {
    private static final int[] HOSTS = {0, 1, 0, 1, 0, 1};
    private static final int[] WORLD = {0, 1, 2, 3, 4, 5};
    private final HostLayout layout = HostLayout.of(HOSTS);
    private final MemorySegment buf = Arena.ofAuto().allocate(6 * 8);

    @Test
    void theLayoutNamesLeadersAndMembers() {
        assertTrue(layout.spansHosts());
        assertFalse(HostLayout.of(new int[] {3, 3, 3}).spansHosts());
        assertEquals(List.of(0, 1), layout.hosts());
        assertEquals(List.of(1, 3, 5), layout.members(1));
        assertEquals(1, layout.leader(1));
        assertEquals(List.of(0, 2, 4), layout.elsewhere(1));
    }

    @Test
    void bcastCrossesBetweenHostsOncePerHost() {
        CollOp root = op();
        HierarchicalSchedules.bcast(root, layout, WORLD, 2, 2, buf, null);
        assertEquals(List.of(1, 0, 4), peers(root.sends), "the other host's leader, then the root's host");
        assertTrue(root.recvs.isEmpty());

        CollOp leader = op();
        HierarchicalSchedules.bcast(leader, layout, WORLD, 1, 2, buf, null);
        assertEquals(List.of(2), peersOf(leader.recvs));
        assertEquals(List.of(3, 5), peers(leader.sends));
        leader.sends.forEach(s -> assertEquals(0, s.afterRecv, "a forward waits for the root's message"));

        CollOp member = op();
        HierarchicalSchedules.bcast(member, layout, WORLD, 5, 2, buf, null);
        assertEquals(List.of(1), peersOf(member.recvs));
        assertTrue(member.sends.isEmpty());
    }

    @Test
    void allgatherCrossesHostsOnlyBetweenLeaders() {
        for (int me = 0; me < 6; me++) {
            CollOp op = op();
            HierarchicalSchedules.allgather(op, layout, WORLD, me, buf, null, 8);
            int mine = HOSTS[me];
            long crossing = op.sends.stream().filter(s -> HOSTS[s.peer] != mine).count();
            assertEquals(me < 2 ? 3 : 0, crossing, "rank " + me + " sends its host's 3 blocks to the other leader");
            assertEquals(5, op.recvs.size(), "rank " + me + " receives every other block once");
            for (CollOp.Send s : op.sends) {
                boolean forward = s.afterRecv >= 0;
                CollOp.Recv source = forward ? op.recvs.get(s.afterRecv) : null;
                assertTrue(!forward || source.buf.address() == s.buf.address(), "a forward sends what it received");
            }
        }
    }

    private static CollOp op() {
        return new CollOp("test", 0, 0);
    }

    private static List<Integer> peers(List<CollOp.Send> sends) {
        return sends.stream().map(s -> s.peer).toList();
    }

    private static List<Integer> peersOf(List<CollOp.Recv> recvs) {
        return recvs.stream().map(r -> r.peer).toList();
    }
}
