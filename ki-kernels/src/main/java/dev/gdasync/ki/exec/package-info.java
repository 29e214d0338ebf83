/**
 * The host KI executor ({@link dev.gdasync.ki.exec.HostKiExecutor}): runs a fused kernel's blocks on Java threads,
 * so the KI model runs and is tested without a GPU, and the host mirrors of the kernels it runs (the ping-pong, the
 * exchange, the template sends; the shmem and MSCCL kernels through {@code shmem} and {@code msccl}). Only the
 * executor is public: the kernels, a launch and a block's context stay in this room.
 *
 * <p>Layer: the top of the module's host side: above {@code dev.gdasync.ki}, {@code kernels}, {@code shmem},
 * {@code msccl} and {@code trace}, which it may call; libmp's tests and the applications call it.
 */
package dev.gdasync.ki.exec;
