/**
 * The shmem device API of {@code shmem.cuh} on the host KI executor ({@link dev.gdasync.ki.shmem.ShmemDevice}): one
 * block's context over a launch's state that libmp's {@code Shmem.kiPrepare} wrote (gdsync's {@code ShmemKiLayout}),
 * and the body a shmem kernel runs with it ({@link dev.gdasync.ki.shmem.ShmemKernel}).
 *
 * <p>Layer: above {@code dev.gdasync.ki} and {@code kernels} and gdsync's {@code ki}, which it may call; {@code exec}
 * and {@code msccl} call it.
 */
package dev.gdasync.ki.shmem;
