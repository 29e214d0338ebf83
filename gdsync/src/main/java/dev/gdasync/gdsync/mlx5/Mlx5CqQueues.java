package dev.gdasync.gdsync.mlx5;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Where an mlx5 completion queue lives, as {@code mlx5dv_init_obj} reports it for hardware: the CQE buffer and
 * the doorbell record (its first big-endian word is the consumer index the CPU writes, {@code MLX5_CQ_SET_CI}).
 * The software mlx5 device reports the same for queues in shared memory.
 *
 * @param cqn      the completion queue's number
 * @param buffer   the CQE ring, {@code cqeCount * cqeSize} bytes
 * @param cqeCount entries, a power of two
 * @param cqeSize  bytes per entry (64; 128-byte CQEs are refused by the provider)
 * @param dbrec    the doorbell record, at least 8 bytes
 * @param handle   the device's own handle (a native {@code ibv_cq*}, or the software device's number)
 */
public record Mlx5CqQueues(int cqn, MemorySegment buffer, int cqeCount, int cqeSize, MemorySegment dbrec, long handle) {
    /**
     * @throws IllegalArgumentException if the count is not a power of two or a segment is smaller than stated
     */
    public Mlx5CqQueues {
        Objects.requireNonNull(buffer, "buffer");
        Objects.requireNonNull(dbrec, "dbrec");
        if (cqeCount <= 0 || Integer.bitCount(cqeCount) != 1) {
            throw new IllegalArgumentException("CQ " + cqn + ": the CQE count must be a power of two, got " + cqeCount);
        }
        if (buffer.byteSize() < (long) cqeCount * cqeSize) {
            throw new IllegalArgumentException("CQ " + cqn + ": " + cqeCount + " CQEs of " + cqeSize + " bytes need "
                    + (long) cqeCount * cqeSize + " bytes, the buffer has " + buffer.byteSize());
        }
        if (dbrec.byteSize() < 8) {
            throw new IllegalArgumentException("CQ " + cqn + ": the doorbell record needs 8 bytes, got " + dbrec.byteSize());
        }
    }
}
