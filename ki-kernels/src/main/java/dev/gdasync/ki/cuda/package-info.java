/**
 * The GPU KI executor: loads the fused-kernel images (PTX, cubins) and launches them on a CUDA stream over
 * tables exported for the GPU.
 *
 * <p>Layer: above {@code dev.gdasync.ki}, {@code kernels}, {@code msccl} and gdsync's {@code cuda}, {@code ki} and
 * {@code concurrent}, which it may call.
 */
package dev.gdasync.ki.cuda;
