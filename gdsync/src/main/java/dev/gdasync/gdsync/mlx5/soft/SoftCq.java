package dev.gdasync.gdsync.mlx5.soft;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.mlx5.Mlx5Cqe;
import dev.gdasync.gdsync.mlx5.Mlx5CqQueues;
import dev.gdasync.gdsync.mlx5.Mlx5Layouts;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/**
 * The device side of a software mlx5 completion queue: writes 64-byte CQEs with the owner bit of their pass, never
 * over an entry the CPU has not consumed (the consumer index in the doorbell record says which it has); CQEs that
 * find the ring full wait here, in order, until it drains. Used under the owning queue pair's execution lock.
 */
final class SoftCq {
    private final Mlx5CqQueues queues;
    private final Region region;
    private final MemorySegment buffer;
    private final MemorySegment dbrec;
    private final int count;
    private final ArrayDeque<int[]> waiting = new ArrayDeque<>();
    /** CQEs written so far. */
    private long produced;
    private volatile SoftQp owner;

    SoftCq(Mlx5CqQueues queues, Region region) {
        this.queues = queues;
        this.region = region;
        this.buffer = queues.buffer();
        this.dbrec = queues.dbrec();
        this.count = queues.cqeCount();
    }

    Mlx5CqQueues queues() {
        return queues;
    }

    Region region() {
        return region;
    }

    SoftQp owner() {
        return owner;
    }

    void owner(SoftQp qp) {
        this.owner = qp;
    }

    /** A successful CQE. */
    void write(int opcode, int wqeCounter, int qpn, int byteCount, int imm) {
        put(new int[] {opcode, wqeCounter, qpn, byteCount, imm, 0, 0, 0, 0});
    }

    /** An error CQE; the vendor syndrome carries the project's error detail. */
    void writeError(int opcode, int wqeCounter, int qpn, int syndrome, int vendor, int sendOpcode) {
        put(new int[] {opcode, wqeCounter, qpn, 0, 0, 1, syndrome, vendor, sendOpcode});
    }

    /** Writes the CQEs that waited for room, as far as there is room. @return how many */
    int drainWaiting() {
        int n = 0;
        while (!waiting.isEmpty() && hasRoom()) {
            emit(waiting.pollFirst());
            n++;
        }
        return n;
    }

    private void put(int[] cqe) {
        if (waiting.isEmpty() && hasRoom()) {
            emit(cqe);
        } else {
            waiting.addLast(cqe);
        }
    }

    private boolean hasRoom() {
        int consumed = dbrec.get(Mlx5Layouts.BE32, (long) Mlx5Layouts.CQ_SET_CI * 4) & 0xffffff;
        return ((int) produced - consumed & 0xffffff) < count;
    }

    private void emit(int[] c) {
        long n = produced++;
        long off = (n & (count - 1)) * Mlx5Cqe.SIZE;
        int ownerBit = Mlx5Cqe.ownerOf(n, count);
        if (c[5] == 0) {
            Mlx5Cqe.write(buffer, off, c[0], ownerBit, c[1], c[2], c[3], c[4]);
        } else {
            Mlx5Cqe.writeError(buffer, off, c[0], ownerBit, c[1], c[2], c[6], c[7], c[8]);
        }
    }
}
