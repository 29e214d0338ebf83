package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;

import java.lang.foreign.MemorySegment;

import static dev.gdasync.gdsync.swnic.core.Layouts.INT;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/** Writes and reads CQEs in the {@link Layouts.Cqe} format. */
public final class Cqes {
    private Cqes() {
    }

    /**
     * Writes a CQE; its validity word last, with release semantics, so a reader that sees the
     * validity sees every field and every byte written before (the payload).
     */
    public static void write(MemorySegment seg, long off, long index, long wrId, int byteLength, int immediate, boolean hasImmediate,
                      int qpn, CompletionOpcode opcode, CompletionStatus status, ErrorDetail detail, long wqeIndex) {
        seg.set(JAVA_LONG, off + Layouts.Cqe.OFF_WR_ID, wrId);
        seg.set(JAVA_INT, off + Layouts.Cqe.OFF_BYTE_LEN, byteLength);
        seg.set(JAVA_INT, off + Layouts.Cqe.OFF_IMM, immediate);
        seg.set(JAVA_INT, off + Layouts.Cqe.OFF_QPN, qpn);
        seg.set(JAVA_SHORT, off + Layouts.Cqe.OFF_OPCODE, (short) opcode.code());
        seg.set(JAVA_BYTE, off + Layouts.Cqe.OFF_STATUS, (byte) status.code());
        seg.set(JAVA_BYTE, off + Layouts.Cqe.OFF_FLAGS, (byte) (hasImmediate ? Layouts.Cqe.FLAG_IMM : 0));
        seg.set(JAVA_INT, off + Layouts.Cqe.OFF_DETAIL, detail.code());
        seg.set(JAVA_INT, off + Layouts.Cqe.OFF_WQE_INDEX, (int) wqeIndex);
        INT.setRelease(seg, off + Layouts.Cqe.OFF_VALIDITY, (int) (index + 1));
    }

    /** @return whether the CQE of absolute index {@code index} in this slot has been written */
    public static boolean isWritten(MemorySegment seg, long off, long index) {
        return (int) INT.getAcquire(seg, off + Layouts.Cqe.OFF_VALIDITY) == (int) (index + 1);
    }

    /** Reads a CQE whose validity was already checked. */
    public static void read(MemorySegment seg, long off, long index, Completion out) {
        int flags = seg.get(JAVA_BYTE, off + Layouts.Cqe.OFF_FLAGS);
        out.set(seg.get(JAVA_LONG, off + Layouts.Cqe.OFF_WR_ID),
                status(seg.get(JAVA_BYTE, off + Layouts.Cqe.OFF_STATUS) & 0xff),
                opcode(seg.get(JAVA_SHORT, off + Layouts.Cqe.OFF_OPCODE) & 0xffff),
                ErrorDetail.ofCode(seg.get(JAVA_INT, off + Layouts.Cqe.OFF_DETAIL)),
                seg.get(JAVA_INT, off + Layouts.Cqe.OFF_BYTE_LEN),
                seg.get(JAVA_INT, off + Layouts.Cqe.OFF_IMM),
                (flags & Layouts.Cqe.FLAG_IMM) != 0,
                seg.get(JAVA_INT, off + Layouts.Cqe.OFF_QPN),
                index);
    }

    private static CompletionStatus status(int code) {
        return code == 0 ? CompletionStatus.SUCCESS : CompletionStatus.ofCode(code);
    }

    private static CompletionOpcode opcode(int code) {
        return switch (code) {
            case 0 -> CompletionOpcode.SEND;
            case 128 -> CompletionOpcode.RECV;
            default -> CompletionOpcode.ofCode(code);
        };
    }
}
