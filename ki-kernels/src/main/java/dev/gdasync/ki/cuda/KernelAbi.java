package dev.gdasync.ki.cuda;

import java.util.List;

/**
 * The KI kernels as the CUDA executor calls them: entry-point names, parameter lists and block shapes, as
 * {@code docs/ki.md} defines them.
 */
final class KernelAbi {
    /** Threads per block of the exchange kernel (the kernel takes any block size). */
    static final int EXCHANGE_BLOCK_THREADS = 128;

    /** {@code gds_ki_pingpong(table, count, initiator, compute_ns, timeout_ns)}, grid 1, block 1. */
    static final Signature PINGPONG = new Signature("gds_ki_pingpong", "ping-pong", List.of(
            new Param("table", Type.POINTER), new Param("count", Type.U32), new Param("initiator", Type.U32),
            new Param("compute_ns", Type.U64), new Param("timeout_ns", Type.U64)));

    /** {@code gds_ki_send_templates(table, args, count)}, grid 1, block 1. */
    static final Signature SEND_TEMPLATES = new Signature("gds_ki_send_templates", "template sends", List.of(
            new Param("table", Type.POINTER), new Param("args", Type.POINTER), new Param("count", Type.U32)));

    /**
     * {@code gds_ki_exchange(table, ctl, work, pack_blocks, unpack_blocks, timeout_ns)}, grid 1 + N + M,
     * cooperative.
     */
    static final Signature EXCHANGE = new Signature("gds_ki_exchange", "exchange", List.of(
            new Param("table", Type.POINTER), new Param("ctl", Type.POINTER), new Param("work", Type.POINTER),
            new Param("pack_blocks", Type.U32), new Param("unpack_blocks", Type.U32), new Param("timeout_ns", Type.U64)));

    /**
     * {@code gds_msccl_interpreter(header, tbs, steps, arena, spin_limit)}, grid = the table's blocks, any block size,
     * cooperative (blocks wait on each other's semaphores and slots).
     */
    static final Signature MSCCL_INTERPRETER = new Signature("gds_msccl_interpreter", "MSCCL-IR interpreter", List.of(
            new Param("header", Type.POINTER), new Param("tbs", Type.POINTER), new Param("steps", Type.POINTER),
            new Param("arena", Type.POINTER), new Param("spin_limit", Type.U64)));

    /**
     * {@code gds_shmem_ordering(state, data, flags, acks, bytes, rounds, role, use_signal, peer, mismatches)}, grid =
     * the state's blocks, cooperative (blocks share the slots toward a PE in ticket order).
     */
    static final Signature SHMEM_ORDERING = new Signature("gds_shmem_ordering", "shmem ordering", List.of(
            new Param("state", Type.POINTER), new Param("data", Type.POINTER), new Param("flags", Type.POINTER),
            new Param("acks", Type.POINTER), new Param("bytes", Type.U64), new Param("rounds", Type.U32),
            new Param("role", Type.U32), new Param("use_signal", Type.U32), new Param("peer", Type.I32),
            new Param("mismatches", Type.POINTER)));

    /** {@code gds_shmem_fetch_add(state, counter, count, pe, olds)}, grid = the state's blocks, cooperative. */
    static final Signature SHMEM_FETCH_ADD = new Signature("gds_shmem_fetch_add", "shmem fetch-add", List.of(
            new Param("state", Type.POINTER), new Param("counter", Type.POINTER), new Param("count", Type.U32),
            new Param("pe", Type.I32), new Param("olds", Type.POINTER)));

    /** {@code gds_shmem_ops(state, op, dest, src, bytes, word, count, pe)}, grid 1 (block 0 runs). */
    static final Signature SHMEM_OPS = new Signature("gds_shmem_ops", "shmem operations", List.of(
            new Param("state", Type.POINTER), new Param("op", Type.U32), new Param("dest", Type.POINTER),
            new Param("src", Type.POINTER), new Param("bytes", Type.U64), new Param("word", Type.POINTER),
            new Param("count", Type.U32), new Param("pe", Type.I32)));

    /** Every kernel the executor loads. */
    static final List<Signature> ALL = List.of(PINGPONG, SEND_TEMPLATES, EXCHANGE, MSCCL_INTERPRETER, SHMEM_ORDERING,
            SHMEM_FETCH_ADD, SHMEM_OPS);

    private KernelAbi() {
    }

    /** A kernel parameter's C type. */
    enum Type {
        /** A device address ({@code const T *}). */
        POINTER(8),
        /** {@code uint32_t}. */
        U32(4),
        /** {@code int} (a PE number). */
        I32(4),
        /** {@code uint64_t}. */
        U64(8);

        private final int bytes;

        Type(int bytes) {
            this.bytes = bytes;
        }

        /** @return its size in bytes */
        int bytes() {
            return bytes;
        }
    }

    /**
     * A kernel parameter.
     *
     * @param name its name in {@code docs/ki.md}
     * @param type its C type
     */
    record Param(String name, Type type) {
    }

    /**
     * A kernel's entry point.
     *
     * @param function the {@code extern "C"} name
     * @param label    what messages call it
     * @param params   its parameters, in order
     */
    record Signature(String function, String label, List<Param> params) {
    }
}
