/**
 * Kernel-initiated communication: what every KI executor is and promises. {@link dev.gdasync.ki.KiExecutor} runs the
 * KI kernels over KI descriptor tables and gives a {@link dev.gdasync.ki.KiLaunch} per launch, whose {@code join}
 * raises a {@link dev.gdasync.ki.KiException} naming the failed descriptor; {@link dev.gdasync.ki.KiLaunchChecks}
 * refuses bad arguments the same way on every executor.
 *
 * <p>The rooms of this module: {@code kernels} (the KI kernels: images, binary layouts, launch arguments, and the
 * device API of {@code device.cuh} in Java), {@code exec} (the host KI executor and the host mirrors of the kernels it
 * runs), {@code shmem} (the shmem device API of {@code shmem.cuh} on host block threads), {@code msccl} (the MSCCL-IR
 * interpreter's kernel table and its host mirror), {@code cuda} (the GPU executor) and {@code trace} (flight-recorder
 * events).
 *
 * <p>Layer: above {@code kernels} and gdsync's {@code ki}, which it may call; the executors ({@code exec},
 * {@code cuda}), libmp's tests and the applications call it.
 */
package dev.gdasync.ki;
