package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.MpRegistration;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Bcast and allgather for a communicator that spans several hosts, with a leader per host: only leaders exchange
 * between hosts, and each leader forwards what it received to the members of its host (within the host, through
 * shared memory). A forward is a send that waits for the receive it passes on ({@link CollOp#send}'s afterRecv), so
 * the proxy starts it when that receive finished. Message parts between two members are numbered the same way on
 * both sides.
 */
final class HierarchicalSchedules {
    private HierarchicalSchedules() {
    }

    /**
     * The root sends once to each other host's leader (the root leads its own host) and to its host's members;
     * each other leader forwards to its host's members.
     */
    static void bcast(CollOp op, HostLayout layout, int[] worldRanks, int me, int root, MemorySegment buf,
                      MpRegistration reg) {
        int rootHost = layout.hostOf(root);
        int myHost = layout.hostOf(me);
        int myLeader = myHost == rootHost ? root : layout.leader(myHost);
        if (me == root) {
            for (int h : layout.hosts()) {
                if (h != rootHost) {
                    op.send(worldRanks[layout.leader(h)], 0, buf, reg, -1);
                }
            }
            for (int m : layout.members(rootHost)) {
                if (m != root) {
                    op.send(worldRanks[m], 0, buf, reg, -1);
                }
            }
        } else if (me == myLeader) {
            int got = op.recv(worldRanks[root], 0, buf, reg);
            for (int m : layout.members(myHost)) {
                if (m != me) {
                    op.send(worldRanks[m], 0, buf, reg, got);
                }
            }
        } else {
            op.recv(worldRanks[myLeader], 0, buf, reg);
        }
    }

    /**
     * Members of one host exchange their blocks directly (part 0); each leader sends its host's blocks to every
     * other leader (part = the block's index among its host's members) and forwards every block from another host
     * to its host's members (part = 1 + the block's index among the members elsewhere).
     *
     * @param recv  the receive buffer, this rank's own block already in place
     * @param block bytes per block
     */
    static void allgather(CollOp op, HostLayout layout, int[] worldRanks, int me, MemorySegment recv,
                          MpRegistration recvReg, long block) {
        int myHost = layout.hostOf(me);
        List<Integer> local = layout.members(myHost);
        Map<Integer, Integer> gathered = new HashMap<>();
        for (int m : local) {
            if (m != me) {
                op.send(worldRanks[m], 0, slot(recv, me, block), recvReg, -1);
                gathered.put(m, op.recv(worldRanks[m], 0, slot(recv, m, block), recvReg));
            }
        }
        List<Integer> elsewhere = layout.elsewhere(myHost);
        int leader = layout.leader(myHost);
        if (me != leader) {
            for (int k = 0; k < elsewhere.size(); k++) {
                int m = elsewhere.get(k);
                op.recv(worldRanks[leader], 1 + k, slot(recv, m, block), recvReg);
            }
            return;
        }
        for (int h : layout.hosts()) {
            if (h == myHost) {
                continue;
            }
            int other = worldRanks[layout.leader(h)];
            for (int k = 0; k < local.size(); k++) {
                int m = local.get(k);
                op.send(other, k, slot(recv, m, block), recvReg, m == me ? -1 : gathered.get(m));
            }
            List<Integer> theirs = layout.members(h);
            for (int k = 0; k < theirs.size(); k++) {
                int m = theirs.get(k);
                int got = op.recv(other, k, slot(recv, m, block), recvReg);
                int part = 1 + elsewhere.indexOf(m);
                for (int j : local) {
                    if (j != me) {
                        op.send(worldRanks[j], part, slot(recv, m, block), recvReg, got);
                    }
                }
            }
        }
    }

    private static MemorySegment slot(MemorySegment recv, int member, long block) {
        return recv.asSlice(member * block, block);
    }
}
