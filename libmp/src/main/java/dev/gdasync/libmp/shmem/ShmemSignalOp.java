package dev.gdasync.libmp.shmem;

/** How a put-with-signal updates its signal word (OpenSHMEM's {@code SHMEM_SIGNAL_SET} and {@code SHMEM_SIGNAL_ADD}). */
public enum ShmemSignalOp {
    /** The signal word becomes the signal value (a put of the 64-bit word). */
    SET,
    /** The signal value is added to the signal word atomically (a NIC fetch-and-add whose result is dropped). */
    ADD
}
