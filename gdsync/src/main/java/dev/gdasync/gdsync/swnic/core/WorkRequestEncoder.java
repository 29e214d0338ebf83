package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.ScatterGatherList;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendWorkRequest;

import java.lang.foreign.MemorySegment;

import static dev.gdasync.gdsync.swnic.core.Layouts.INT;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Checks work requests completely, then writes them into a queue pair's send or receive queue in the
 * {@link Layouts.Wqe} and {@link Layouts.Rqe} formats. Checking never writes, so a refused request
 * changes nothing.
 */
final class WorkRequestEncoder {
    private final NicCore nic;
    private final MemorySegment seg;

    WorkRequestEncoder(NicCore nic, MemorySegment seg) {
        this.nic = nic;
        this.seg = seg;
    }

    /**
     * Checks a send work request.
     *
     * @return its payload length
     * @throws IllegalArgumentException with the reason if it cannot be posted
     */
    int checkSend(SendWorkRequest wr) {
        Opcode op = wr.opcode();
        int flags = wr.flags();
        if ((flags & ~SendFlags.ALL) != 0) {
            throw new IllegalArgumentException("unknown send flags 0x" + Integer.toHexString(flags & ~SendFlags.ALL));
        }
        ScatterGatherList sgl = wr.sgl();
        int length = sgl.totalLength();
        if ((flags & SendFlags.INLINE) != 0) {
            if (op != Opcode.SEND && op != Opcode.SEND_WITH_IMM && op != Opcode.RDMA_WRITE && op != Opcode.RDMA_WRITE_WITH_IMM) {
                throw new IllegalArgumentException("INLINE applies to SEND and RDMA_WRITE, not " + op);
            }
            if (length > Layouts.Wqe.MAX_INLINE) {
                throw new IllegalArgumentException("INLINE payload of " + length + " bytes exceeds the inline limit of "
                        + Layouts.Wqe.MAX_INLINE + " bytes");
            }
        }
        if (op.isAtomic()) {
            if (sgl.count() != 1 || sgl.length(0) != 8) {
                throw new IllegalArgumentException(op + " needs exactly one 8-byte local buffer for the original value, got "
                        + sgl.count() + " buffers of " + length + " bytes");
            }
            if ((wr.remoteAddress() & 7) != 0) {
                throw new IllegalArgumentException(op + " remote address 0x" + Long.toHexString(wr.remoteAddress())
                        + " is not 8-byte aligned");
            }
        }
        for (int i = 0; i < sgl.count(); i++) {
            SwMemoryRegion mr = localBuffer(sgl, i, "send");
            if (op.writesLocal() && (mr.access() & Access.LOCAL_WRITE) == 0) {
                throw new IllegalArgumentException("send sge " + i + ": " + op + " writes the local buffer but " + mr
                        + " lacks LOCAL_WRITE");
            }
            if (mr.isDevice()) {
                checkDeviceBuffer(op, flags, mr, i);
            }
        }
        return length;
    }

    private static void checkDeviceBuffer(Opcode op, int flags, SwMemoryRegion mr, int i) {
        if ((flags & SendFlags.INLINE) != 0) {
            throw new IllegalArgumentException("send sge " + i + ": INLINE copies the payload into the send queue with "
                    + "the CPU at post time, and " + mr + " is GPU memory the CPU cannot read: post without INLINE");
        }
        if (op.isAtomic()) {
            throw new IllegalArgumentException("send sge " + i + ": " + op + " returns the original value into its local"
                    + " buffer with a CPU atomic, and " + mr + " is GPU memory: give a host buffer");
        }
    }

    /**
     * Checks a receive work request: every buffer in a live registration with LOCAL_WRITE.
     *
     * @throws IllegalArgumentException with the reason if it cannot be posted
     */
    void checkRecv(RecvWorkRequest wr) {
        ScatterGatherList sgl = wr.sgl();
        for (int i = 0; i < sgl.count(); i++) {
            SwMemoryRegion mr = localBuffer(sgl, i, "receive");
            if ((mr.access() & Access.LOCAL_WRITE) == 0) {
                throw new IllegalArgumentException("receive sge " + i + ": " + mr + " lacks LOCAL_WRITE");
            }
        }
        sgl.totalLength();
    }

    /** Writes a checked send work request at offset {@code w}; INLINE payloads are copied in now. */
    void writeWqe(long w, SendWorkRequest wr, int length) {
        ScatterGatherList sgl = wr.sgl();
        seg.set(JAVA_LONG, w + Layouts.Wqe.OFF_WR_ID, wr.wrId());
        seg.set(JAVA_BYTE, w + Layouts.Wqe.OFF_OPCODE, (byte) wr.opcode().code());
        seg.set(JAVA_BYTE, w + Layouts.Wqe.OFF_FLAGS, (byte) wr.flags());
        seg.set(JAVA_BYTE, w + Layouts.Wqe.OFF_NUM_SGE, (byte) sgl.count());
        seg.set(JAVA_INT, w + Layouts.Wqe.OFF_LENGTH, length);
        seg.set(JAVA_LONG, w + Layouts.Wqe.OFF_REMOTE_ADDR, wr.remoteAddress());
        seg.set(JAVA_LONG, w + Layouts.Wqe.OFF_RKEY, wr.rkey());
        seg.set(JAVA_LONG, w + Layouts.Wqe.OFF_COMPARE_ADD, wr.compareAdd());
        seg.set(JAVA_LONG, w + Layouts.Wqe.OFF_SWAP, wr.swap());
        seg.set(JAVA_INT, w + Layouts.Wqe.OFF_IMM, wr.immediate());
        if ((wr.flags() & SendFlags.INLINE) != 0) {
            long dst = w + Layouts.Wqe.OFF_DATA;
            for (int i = 0; i < sgl.count(); i++) {
                SwMemoryRegion mr = nic.localMr(sgl.lkey(i));
                MemorySegment.copy(mr.segment(), sgl.address(i) - mr.address(), seg, dst, sgl.length(i));
                dst += sgl.length(i);
            }
        } else {
            writeSges(w + Layouts.Wqe.OFF_DATA, sgl);
        }
    }

    /**
     * Writes a checked receive work request at offset {@code e}: the fields, then its sequence number
     * {@code index + 1} with a release store, which posts it.
     */
    void writeRqe(long e, RecvWorkRequest wr, long index) {
        ScatterGatherList sgl = wr.sgl();
        seg.set(JAVA_LONG, e + Layouts.Rqe.OFF_WR_ID, wr.wrId());
        seg.set(JAVA_INT, e + Layouts.Rqe.OFF_NUM_SGE, sgl.count());
        writeSges(e + Layouts.Rqe.OFF_SGE, sgl);
        INT.setRelease(seg, e + Layouts.Rqe.OFF_SEQ, (int) (index + 1));
    }

    private void writeSges(long at, ScatterGatherList sgl) {
        for (int i = 0; i < sgl.count(); i++) {
            long s = at + i * Layouts.Sge.SIZE;
            seg.set(JAVA_LONG, s + Layouts.Sge.OFF_ADDR, sgl.address(i));
            seg.set(JAVA_LONG, s + Layouts.Sge.OFF_LKEY, sgl.lkey(i));
            seg.set(JAVA_INT, s + Layouts.Sge.OFF_LENGTH, sgl.length(i));
        }
    }

    private SwMemoryRegion localBuffer(ScatterGatherList sgl, int i, String what) {
        SwMemoryRegion mr = nic.localMr(sgl.lkey(i));
        if (mr == null) {
            throw new IllegalArgumentException(what + " sge " + i + ": lkey 0x" + Long.toHexString(sgl.lkey(i))
                    + " matches no live memory region of " + nic.name());
        }
        if (!mr.contains(sgl.address(i), sgl.length(i))) {
            throw new IllegalArgumentException(what + " sge " + i + ": [0x" + Long.toHexString(sgl.address(i))
                    + ", +" + sgl.length(i) + ") is outside " + mr);
        }
        return mr;
    }
}
