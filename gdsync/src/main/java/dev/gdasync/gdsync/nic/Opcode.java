package dev.gdasync.gdsync.nic;

/** Work request opcodes of the send queue, with the values of verbs' {@code ibv_wr_opcode}. */
public enum Opcode {
    /** RDMA WRITE into a peer's registered memory. */
    RDMA_WRITE(0),
    /** RDMA WRITE that also consumes a receive at the peer and delivers an immediate value. */
    RDMA_WRITE_WITH_IMM(1),
    /** Two-sided send: consumes the peer's oldest posted receive. */
    SEND(2),
    /** Send that also delivers a 32-bit immediate value. */
    SEND_WITH_IMM(3),
    /** RDMA READ from a peer's registered memory. */
    RDMA_READ(4),
    /** 64-bit compare-and-swap on a peer's word; the original value lands in the local buffer. */
    ATOMIC_CMP_SWAP(5),
    /** 64-bit fetch-and-add on a peer's word; the original value lands in the local buffer. */
    ATOMIC_FETCH_ADD(6);

    private static final Opcode[] BY_CODE = values();

    private final int code;

    Opcode(int code) {
        this.code = code;
    }

    /** @return the verbs value */
    public int code() {
        return code;
    }

    /**
     * @param code a value from {@link #code()}
     * @return the opcode
     * @throws IllegalArgumentException if unknown
     */
    public static Opcode ofCode(int code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalArgumentException("unknown work request opcode " + code);
        }
        return BY_CODE[code];
    }

    /** @return whether the opcode consumes a receive at the peer */
    public boolean consumesReceive() {
        return this == SEND || this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
    }

    /** @return whether the opcode carries an immediate value */
    public boolean hasImmediate() {
        return this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
    }

    /** @return whether the opcode targets a peer's registered memory by remote address and rkey */
    public boolean isRemoteAccess() {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM || this == RDMA_READ || isAtomic();
    }

    /** @return whether the opcode is an atomic */
    public boolean isAtomic() {
        return this == ATOMIC_CMP_SWAP || this == ATOMIC_FETCH_ADD;
    }

    /** @return whether the opcode writes into the local buffers (RDMA READ and atomics) */
    public boolean writesLocal() {
        return this == RDMA_READ || isAtomic();
    }
}
