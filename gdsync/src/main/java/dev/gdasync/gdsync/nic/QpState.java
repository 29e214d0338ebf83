package dev.gdasync.gdsync.nic;

/** The states of a queue pair, reduced from verbs' RESET/INIT/RTR/RTS/ERR. */
public enum QpState {
    /** Created, not yet connected: receives may be posted, sends may not. */
    RESET(0),
    /** Connected to its peer: ready to send and receive (verbs' RTS). */
    READY(1),
    /** A request failed or the peer is gone: new and outstanding work completes with an error. */
    ERROR(2),
    /** Closed by its owner. */
    CLOSED(3);

    private final int code;

    QpState(int code) {
        this.code = code;
    }

    /** @return the value stored in shared memory */
    public int code() {
        return code;
    }

    /**
     * @param code a value from {@link #code()}
     * @return the state
     * @throws IllegalArgumentException if unknown
     */
    public static QpState ofCode(int code) {
        for (QpState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown queue pair state " + code);
    }
}
