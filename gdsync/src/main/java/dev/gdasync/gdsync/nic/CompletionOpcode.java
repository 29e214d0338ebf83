package dev.gdasync.gdsync.nic;

/** What a completion completes, with the values of verbs' {@code ibv_wc_opcode}. */
public enum CompletionOpcode {
    /** A SEND or SEND_WITH_IMM. */
    SEND(0),
    /** An RDMA WRITE, with or without immediate. */
    RDMA_WRITE(1),
    /** An RDMA READ. */
    RDMA_READ(2),
    /** An atomic compare-and-swap. */
    COMP_SWAP(3),
    /** An atomic fetch-and-add. */
    FETCH_ADD(4),
    /** A receive consumed by a SEND. */
    RECV(128),
    /** A receive consumed by an RDMA WRITE with immediate. */
    RECV_RDMA_WITH_IMM(129);

    private final int code;

    CompletionOpcode(int code) {
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
    public static CompletionOpcode ofCode(int code) {
        for (CompletionOpcode o : values()) {
            if (o.code == code) {
                return o;
            }
        }
        throw new IllegalArgumentException("unknown completion opcode " + code);
    }

    /**
     * @param op a send queue opcode
     * @return the completion opcode its requester sees
     */
    public static CompletionOpcode of(Opcode op) {
        return switch (op) {
            case SEND, SEND_WITH_IMM -> SEND;
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> RDMA_WRITE;
            case RDMA_READ -> RDMA_READ;
            case ATOMIC_CMP_SWAP -> COMP_SWAP;
            case ATOMIC_FETCH_ADD -> FETCH_ADD;
        };
    }
}
