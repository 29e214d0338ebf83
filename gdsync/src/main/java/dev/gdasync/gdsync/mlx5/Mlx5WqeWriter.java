package dev.gdasync.gdsync.mlx5;

import java.lang.foreign.MemorySegment;

import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.BE32;
import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.BE64;
import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.DS_BYTES;
import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.SEND_WQE_BB;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Writes send WQEs in the mlx5 format into a send queue buffer, as rdma-core's {@code mlx5_post_send} lays them
 * out: a control segment, then the remote-address segment (RDMA and atomics), the atomic segment, and the data
 * segments or an inline segment, each counted in 16-byte units; a WQE may take several 64-byte basic blocks and
 * wraps from the end of the buffer to its start. One writer per queue pair, used by one thread at a time.
 *
 * <pre>
 * begin(pi) -> [raddr] [atomic] (data | inline)... -> finish(opcode, qpn, flags, imm) = basic blocks used
 * </pre>
 */
public final class Mlx5WqeWriter {
    /** The control segment's 6-bit "ds" field bounds a WQE. */
    public static final int MAX_UNITS = 0x3f;

    private final MemorySegment sq;
    private final long size;
    private long start;
    /** Offset of the next segment, in the buffer. */
    private long at;
    private int units;

    /**
     * @param sq       the send queue buffer
     * @param wqeCount its basic blocks, a power of two
     * @throws IllegalArgumentException if the count is not a power of two or the buffer is smaller
     */
    public Mlx5WqeWriter(MemorySegment sq, int wqeCount) {
        if (wqeCount <= 0 || Integer.bitCount(wqeCount) != 1) {
            throw new IllegalArgumentException("the send queue's WQE count must be a power of two, got " + wqeCount);
        }
        if (sq.byteSize() < (long) wqeCount * SEND_WQE_BB) {
            throw new IllegalArgumentException("a send queue of " + wqeCount + " WQEs needs " + (long) wqeCount * SEND_WQE_BB
                    + " bytes, the buffer has " + sq.byteSize());
        }
        this.sq = sq;
        this.size = (long) wqeCount * SEND_WQE_BB;
    }

    /**
     * @param producerIndex the send queue's producer counter
     * @return the offset of that WQE's first basic block in the buffer
     */
    public long offsetOf(int producerIndex) {
        return ((long) producerIndex * SEND_WQE_BB) & (size - 1);
    }

    /**
     * Starts the WQE at a producer index: the control segment's 16 bytes are reserved.
     *
     * @param producerIndex the send queue's producer counter
     * @return this
     */
    public Mlx5WqeWriter begin(int producerIndex) {
        start = offsetOf(producerIndex);
        at = start;
        units = 0;
        advance();
        return this;
    }

    /**
     * Adds the remote-address segment.
     *
     * @param remoteAddress the address at the target
     * @param rkey          its key
     * @return this
     */
    public Mlx5WqeWriter raddr(long remoteAddress, int rkey) {
        sq.set(BE64, at, remoteAddress);
        sq.set(BE32, at + 8, rkey);
        sq.set(BE32, at + 12, 0);
        advance();
        return this;
    }

    /**
     * Adds the atomic segment.
     *
     * @param swapOrAdd the swap value of a compare-and-swap, or the addend of a fetch-and-add
     * @param compare   the compare value of a compare-and-swap (0 for a fetch-and-add)
     * @return this
     */
    public Mlx5WqeWriter atomic(long swapOrAdd, long compare) {
        sq.set(BE64, at, swapOrAdd);
        sq.set(BE64, at + 8, compare);
        advance();
        return this;
    }

    /**
     * Adds a data segment: a local buffer.
     *
     * @param length  its length
     * @param lkey    its key
     * @param address its address
     * @return this
     */
    public Mlx5WqeWriter data(int length, int lkey, long address) {
        sq.set(BE32, at, length);
        sq.set(BE32, at + 4, lkey);
        sq.set(BE64, at + 8, address);
        advance();
        return this;
    }

    /**
     * Adds an inline segment: the payload copied into the WQE, after a byte count flagged inline, padded to 16
     * bytes; it may wrap to the start of the buffer.
     *
     * @param src    the payload
     * @param offset its offset in {@code src}
     * @param length its length
     * @return this
     */
    public Mlx5WqeWriter inline(MemorySegment src, long offset, int length) {
        int bytes = 4 + length;
        int segUnits = (bytes + DS_BYTES - 1) / DS_BYTES;
        reserve(segUnits);
        sq.set(BE32, at, Mlx5Layouts.INLINE_SEG | length);
        long p = at + 4;
        for (int i = 0; i < length; i++) {
            if (p == size) {
                p = 0;
            }
            sq.set(JAVA_BYTE, p++, src.get(JAVA_BYTE, offset + i));
        }
        for (int u = 0; u < segUnits; u++) {
            advance();
        }
        return this;
    }

    /**
     * Writes the control segment and ends the WQE.
     *
     * @param opcode        the mlx5 send opcode
     * @param producerIndex the producer counter the WQE was begun at (its low 16 bits go into the WQE)
     * @param qpn           the queue pair's number
     * @param fmCeSe        the fence, completion and solicited flags ({@link Mlx5Opcodes#CTRL_CQ_UPDATE} ...)
     * @param imm           the immediate value of a {@code *_IMM} opcode, as the peer will read it
     * @return the basic blocks the WQE takes: the producer counter's increment
     */
    public int finish(int opcode, int producerIndex, int qpn, int fmCeSe, int imm) {
        sq.set(BE32, start + Mlx5Layouts.CTRL_OPMOD_IDX_OPCODE, ((producerIndex & 0xffff) << 8) | (opcode & 0xff));
        sq.set(BE32, start + Mlx5Layouts.CTRL_QPN_DS, (qpn << 8) | (units & 0x3f));
        sq.set(JAVA_BYTE, start + 8, (byte) 0);
        sq.set(Mlx5Layouts.BE16, start + 9, (short) 0);
        sq.set(JAVA_BYTE, start + Mlx5Layouts.CTRL_FM_CE_SE, (byte) fmCeSe);
        sq.set(BE32.withByteAlignment(1), start + Mlx5Layouts.CTRL_IMM, imm);
        return (units * DS_BYTES + SEND_WQE_BB - 1) / SEND_WQE_BB;
    }

    /** @return the 16-byte units written so far (the control segment's "ds") */
    public int units() {
        return units;
    }

    /**
     * A WQE that outgrows the whole queue would overwrite its own control segment, and the control segment counts
     * at most 63 units.
     */
    private void reserve(int more) {
        if (units + more > MAX_UNITS) {
            throw new IllegalStateException("a WQE of " + (units + more) * DS_BYTES + " bytes exceeds the " + MAX_UNITS * DS_BYTES
                    + " bytes a control segment can count");
        }
        if ((long) (units + more) * DS_BYTES > size) {
            throw new IllegalStateException("a WQE of " + (units + more) * DS_BYTES + " bytes does not fit a send queue of "
                    + size + " bytes");
        }
    }

    private void advance() {
        reserve(1);
        units++;
        at += DS_BYTES;
        if (at == size) {
            at = 0;
        }
    }
}
