package dev.gdasync.gdsync.mlx5;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Where an mlx5 RC queue pair lives, as {@code mlx5dv_init_obj} reports it for hardware: the send queue
 * (64-byte basic blocks), the receive queue (one scatter list of 16-byte data segments per entry), the doorbell
 * record (big-endian receive counter at word 0, {@code MLX5_RCV_DBR}, send counter at word 1, {@code MLX5_SND_DBR})
 * and the BlueFlame register the first 8 bytes of a WQE's control segment are written to. The software mlx5
 * device reports the same for queues in shared memory.
 *
 * @param qpn        the queue pair's number
 * @param sq         the send queue buffer, {@code sqWqeCount * 64} bytes
 * @param sqWqeCount its basic blocks, a power of two
 * @param rq         the receive queue buffer, {@code rqWqeCount * rqStride} bytes
 * @param rqWqeCount its entries, a power of two
 * @param rqStride   bytes per receive entry, a power of two, at least 16
 * @param dbrec      the doorbell record, at least 8 bytes
 * @param blueFlame  the BlueFlame register (or the software device's page standing for it), at least 8 bytes
 * @param maxInline  the most payload bytes a send may carry inline
 * @param handle     the device's own handle (a native {@code ibv_qp*}, or the software device's number)
 */
public record Mlx5QpQueues(int qpn, MemorySegment sq, int sqWqeCount, MemorySegment rq, int rqWqeCount, int rqStride,
                           MemorySegment dbrec, MemorySegment blueFlame, int maxInline, long handle) {
    /** Word index of the receive counter in the doorbell record. */
    public static final int RECV_DBR = 0;
    /** Word index of the send counter in the doorbell record. */
    public static final int SEND_DBR = 1;

    /**
     * @throws IllegalArgumentException if a count or stride is not a power of two or a segment is smaller than stated
     */
    public Mlx5QpQueues {
        Objects.requireNonNull(sq, "sq");
        Objects.requireNonNull(rq, "rq");
        Objects.requireNonNull(dbrec, "dbrec");
        Objects.requireNonNull(blueFlame, "blueFlame");
        powerOfTwo(qpn, "send queue's basic-block count", sqWqeCount);
        powerOfTwo(qpn, "receive queue's entry count", rqWqeCount);
        powerOfTwo(qpn, "receive queue's stride", rqStride);
        if (rqStride < Mlx5Layouts.DS_BYTES) {
            throw new IllegalArgumentException("QP " + qpn + ": the receive stride must be at least 16 bytes, got " + rqStride);
        }
        atLeast(qpn, "send queue", sq, (long) sqWqeCount * Mlx5Layouts.SEND_WQE_BB);
        atLeast(qpn, "receive queue", rq, (long) rqWqeCount * rqStride);
        atLeast(qpn, "doorbell record", dbrec, 8);
        atLeast(qpn, "BlueFlame register", blueFlame, 8);
        if (maxInline < 0) {
            throw new IllegalArgumentException("QP " + qpn + ": maxInline must be >= 0, got " + maxInline);
        }
    }

    /** @return the receive queue's scatter entries per receive */
    public int maxRecvSge() {
        return rqStride / Mlx5Layouts.DS_BYTES;
    }

    private static void powerOfTwo(int qpn, String what, int v) {
        if (v <= 0 || Integer.bitCount(v) != 1) {
            throw new IllegalArgumentException("QP " + qpn + ": the " + what + " must be a power of two, got " + v);
        }
    }

    private static void atLeast(int qpn, String what, MemorySegment s, long bytes) {
        if (s.byteSize() < bytes) {
            throw new IllegalArgumentException("QP " + qpn + ": the " + what + " needs " + bytes + " bytes, got " + s.byteSize());
        }
    }
}
