/**
 * Kernel-initiated communication, host side of the table (DESIGN.md §3.6): the KI descriptor table's binary layout
 * ({@link dev.gdasync.gdsync.ki.KiTableLayout}), the other binary formats the kernels share with libmp, declared here
 * once for both (the shmem KI state, {@link dev.gdasync.gdsync.ki.ShmemKiLayout}; the MSCCL-IR interpreter's table,
 * {@link dev.gdasync.gdsync.ki.MscclTableLayout}, and its operators, {@link dev.gdasync.gdsync.ki.Reduction}), the
 * table builder that exports prepared sends, templated sends and
 * waits ({@link dev.gdasync.gdsync.ki.KiTable}), and what runs the tables
 * ({@link dev.gdasync.gdsync.ki.KiTableExecutor}).
 *
 * <p>Layer: above {@code nic} and {@code memop}, which it may call; the {@code ki-kernels} module (the executors)
 * and libmp call it.
 */
package dev.gdasync.gdsync.ki;
