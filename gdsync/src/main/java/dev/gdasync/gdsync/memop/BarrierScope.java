package dev.gdasync.gdsync.memop;

/** How far a {@link Memop.Barrier} makes earlier writes visible. */
public enum BarrierScope {
    /** The device that executes the memop (CUDA's GPU scope). */
    DEVICE,
    /** Every agent of the system: CPUs, GPUs and NICs (CUDA's SYS scope, {@code __threadfence_system}). */
    SYSTEM
}
