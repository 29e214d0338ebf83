/**
 * Kernel-initiated communication: the KI executors that run a fused kernel's threads over a KI descriptor table.
 * {@link dev.gdasync.ki.HostKiExecutor} runs the kernel templates on Java threads (a block is an agent thread), so
 * the KI model runs and is tested without a GPU; the CUDA templates themselves are built from
 * {@code src/main/cuda} into PTX and cubins.
 *
 * <p>Layer: above gdsync's {@code ki}, {@code memop} and {@code concurrent}, which it may call; libmp's tests and
 * applications call it.
 */
package dev.gdasync.ki;
