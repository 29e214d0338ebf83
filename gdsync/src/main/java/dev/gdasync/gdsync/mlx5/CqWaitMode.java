package dev.gdasync.gdsync.mlx5;

import java.util.Locale;

/**
 * How a prepared wait tests an mlx5 CQE's last dword (LibGDSync's choice among its poll operations).
 */
public enum CqWaitMode {
    /**
     * The owner bit alone: AND with the owner bit in passes whose CQEs carry owner 1, NOR with its complement in
     * passes whose CQEs carry 0. Fresh entries carry owner 1 and an invalid opcode, so no entry is mistaken for a
     * CQE of the pass; error CQEs end the wait too. Needs an executor with NOR (every host executor, the KI
     * executors, CUDA streams on GPUs that report CAN_USE_STREAM_WAIT_VALUE_NOR).
     */
    OWNER,
    /**
     * GEQ 0 on the dword read as a signed number: true once the opcode's top bit is clear, which holds for
     * successful CQEs only; consumed entries are rewritten with the invalid opcode. Any executor has GEQ, but an
     * error CQE does not end such a wait: the CPU sees the error when it polls, and the job's failure path ends
     * stream waits.
     */
    GEQ;

    /**
     * @param s {@code owner} or {@code geq}, any case
     * @return the mode
     * @throws IllegalArgumentException for anything else
     */
    public static CqWaitMode parse(String s) {
        return switch (s.strip().toLowerCase(Locale.ROOT)) {
            case "owner" -> OWNER;
            case "geq" -> GEQ;
            default -> throw new IllegalArgumentException("unknown mlx5 CQ wait mode '" + s + "': owner or geq");
        };
    }
}
