package dev.gdasync.gdsync.mlx5;

import java.lang.foreign.MemorySegment;

import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.BE16;
import static dev.gdasync.gdsync.mlx5.Mlx5Layouts.BE32;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Reads and writes 64-byte mlx5 CQEs at an offset of a CQ buffer. Entry {@code n} of a CQ of {@code count}
 * entries (a power of two) lives in slot {@code n & (count - 1)}; the NIC writes it with the owner bit
 * {@code (n / count) & 1}, so a consumer tells a new entry from one of the previous pass without any other state.
 * An entry the NIC has not written, or that its consumer gave back, has opcode {@link Mlx5Opcodes#CQE_INVALID}.
 */
public final class Mlx5Cqe {
    /** The size of an entry. */
    public static final int SIZE = 64;
    /** rdma-core's {@code op_own} for a fresh entry: opcode INVALID, owner bit 0. */
    public static final byte INVALID_OP_OWN = (byte) (Mlx5Opcodes.CQE_INVALID << 4);
    /**
     * The project's {@code op_own} for a fresh entry: opcode INVALID, owner bit 1, the bit no CQE of the first pass
     * carries; so a wait on the owner bit alone cannot take a fresh entry for a first-pass CQE.
     */
    public static final byte FRESH_OP_OWN = (byte) (Mlx5Opcodes.CQE_INVALID << 4 | Mlx5Opcodes.CQE_OWNER_MASK);
    /** The owner bit as it lies in the CQE's last dword read as a little-endian 32-bit word ({@code htonl(1)}). */
    public static final int OWNER_BIT_IN_LAST_DWORD = 1 << 24;

    private Mlx5Cqe() {
    }

    /** @return the owner bit an entry of index {@code n} carries in a CQ of {@code count} entries */
    public static int ownerOf(long n, int count) {
        return (int) ((n / count) & 1);
    }

    /** @return the entry's opcode (high nibble of {@code op_own}) */
    public static int opcode(MemorySegment cq, long off) {
        return (cq.get(JAVA_BYTE, off + Mlx5Layouts.CQE_OP_OWN) & 0xff) >>> 4;
    }

    /** @return the entry's owner bit */
    public static int owner(MemorySegment cq, long off) {
        return cq.get(JAVA_BYTE, off + Mlx5Layouts.CQE_OP_OWN) & Mlx5Opcodes.CQE_OWNER_MASK;
    }

    /**
     * @return whether the entry at {@code off} holds CQE {@code n} (written in {@code n}'s pass, not consumed)
     */
    public static boolean isWritten(MemorySegment cq, long off, long n, int count) {
        return opcode(cq, off) != Mlx5Opcodes.CQE_INVALID && owner(cq, off) == ownerOf(n, count);
    }

    /** @return the low 16 bits of the send queue counter of the WQE a requester CQE completes */
    public static int wqeCounter(MemorySegment cq, long off) {
        return cq.get(BE16, off + Mlx5Layouts.CQE_WQE_COUNTER) & 0xffff;
    }

    /** @return the byte count */
    public static int byteCount(MemorySegment cq, long off) {
        return cq.get(BE32, off + Mlx5Layouts.CQE_BYTE_CNT);
    }

    /** @return the immediate value of a responder CQE with immediate */
    public static int immediate(MemorySegment cq, long off) {
        return cq.get(BE32, off + Mlx5Layouts.CQE_IMM);
    }

    /** @return the queue pair number (low 24 bits of {@code sop_drop_qpn}) */
    public static int qpn(MemorySegment cq, long off) {
        return cq.get(BE32, off + Mlx5Layouts.CQE_SOP_DROP_QPN) & 0xffffff;
    }

    /** @return an error CQE's syndrome */
    public static int syndrome(MemorySegment cq, long off) {
        return cq.get(JAVA_BYTE, off + Mlx5Layouts.ERR_CQE_SYNDROME) & 0xff;
    }

    /** @return an error CQE's vendor syndrome */
    public static int vendorSyndrome(MemorySegment cq, long off) {
        return cq.get(JAVA_BYTE, off + Mlx5Layouts.ERR_CQE_VENDOR_SYNDROME) & 0xff;
    }

    /**
     * Writes a successful CQE; {@code op_own} last, with a release store, so a reader that sees it sees the rest.
     *
     * @param cq         the CQ buffer
     * @param off        the entry's offset
     * @param opcode     {@link Mlx5Opcodes#CQE_REQ} or a responder opcode
     * @param owner      the owner bit of the entry's pass
     * @param wqeCounter the completed WQE's counter (requester) or 0
     * @param qpn        the queue pair number
     * @param byteCount  the bytes transferred
     * @param imm        the immediate value (responder with immediate) or 0
     */
    public static void write(MemorySegment cq, long off, int opcode, int owner, int wqeCounter, int qpn, int byteCount,
                             int imm) {
        cq.asSlice(off, 60).fill((byte) 0);
        cq.set(BE32, off + Mlx5Layouts.CQE_IMM, imm);
        cq.set(BE32, off + Mlx5Layouts.CQE_BYTE_CNT, byteCount);
        cq.set(BE32, off + Mlx5Layouts.CQE_SOP_DROP_QPN, qpn & 0xffffff);
        cq.set(BE16, off + Mlx5Layouts.CQE_WQE_COUNTER, (short) wqeCounter);
        publish(cq, off, opcode, owner);
    }

    /**
     * Writes an error CQE.
     *
     * @param cq         the CQ buffer
     * @param off        the entry's offset
     * @param opcode     {@link Mlx5Opcodes#CQE_REQ_ERR} or {@link Mlx5Opcodes#CQE_RESP_ERR}
     * @param owner      the owner bit of the entry's pass
     * @param wqeCounter the failed WQE's counter (requester) or 0
     * @param qpn        the queue pair number
     * @param syndrome   the syndrome
     * @param vendor     the vendor syndrome (the project writes its error detail there)
     * @param sendOpcode the failed WQE's mlx5 opcode (requester) or 0
     */
    public static void writeError(MemorySegment cq, long off, int opcode, int owner, int wqeCounter, int qpn, int syndrome,
                                  int vendor, int sendOpcode) {
        cq.asSlice(off, 60).fill((byte) 0);
        cq.set(JAVA_BYTE, off + Mlx5Layouts.ERR_CQE_VENDOR_SYNDROME, (byte) vendor);
        cq.set(JAVA_BYTE, off + Mlx5Layouts.ERR_CQE_SYNDROME, (byte) syndrome);
        cq.set(BE32.withByteAlignment(1), off + 56, (sendOpcode << 24) | (qpn & 0xffffff));
        cq.set(BE16, off + Mlx5Layouts.CQE_WQE_COUNTER, (short) wqeCounter);
        publish(cq, off, opcode, owner);
    }

    /**
     * Prepares a CQ buffer: every entry fresh ({@link #FRESH_OP_OWN}).
     *
     * @param cq    the CQ buffer
     * @param count its entries
     */
    public static void initialise(MemorySegment cq, int count) {
        for (int i = 0; i < count; i++) {
            cq.set(JAVA_BYTE, (long) i * SIZE + Mlx5Layouts.CQE_OP_OWN, FRESH_OP_OWN);
        }
        java.lang.invoke.VarHandle.releaseFence();
    }

    /**
     * Gives a consumed entry back: its opcode becomes INVALID and its owner bit stays, so neither a GEQ-0 wait (which
     * needs the opcode's top bit clear) nor an owner-bit wait of a later pass can take it for a new CQE.
     */
    public static void invalidate(MemorySegment cq, long off) {
        long at = off + Mlx5Layouts.CQE_OP_OWN;
        int owner = cq.get(JAVA_BYTE, at) & Mlx5Opcodes.CQE_OWNER_MASK;
        java.lang.invoke.VarHandle.releaseFence();
        cq.set(JAVA_BYTE, at, (byte) (INVALID_OP_OWN | owner));
    }

    private static void publish(MemorySegment cq, long off, int opcode, int owner) {
        java.lang.invoke.VarHandle.releaseFence();
        cq.set(JAVA_BYTE, off + Mlx5Layouts.CQE_OP_OWN, (byte) ((opcode << 4) | (owner & 1)));
    }
}
