/**
 * The KI kernels themselves, as both executors know them: the CUDA images packaged in the jar and the kernels' names
 * ({@link dev.gdasync.ki.kernels.KiKernels}), the binary layouts they take besides the descriptor table
 * ({@link dev.gdasync.ki.kernels.KiKernelLayout}), a launch's arguments ({@link dev.gdasync.ki.kernels.KiExchange},
 * {@link dev.gdasync.ki.kernels.KiCopyWork}, {@link dev.gdasync.ki.kernels.KiTemplateArgs}), and the KI device API of
 * {@code device.cuh} done by a Java thread ({@link dev.gdasync.ki.kernels.KiDevice}).
 *
 * <p>Layer: above gdsync's {@code ki} and {@code memop} and this module's {@code trace}, which it may call; every other
 * room of the module calls it.
 */
package dev.gdasync.ki.kernels;
