/**
 * The MSCCL-IR kernel interpreter's side of ki-kernels: its table checked before a GPU launch
 * ({@link dev.gdasync.ki.msccl.MscclKernelTable}) and the host mirror of {@code msccl_interpreter.cuh} in its KI form
 * ({@link dev.gdasync.ki.msccl.MscclKiBlock}), which runs a program's thread block over the shmem device API. The
 * table's binary format is gdsync's {@code MscclTableLayout}, the one libmp's {@code MscclDeviceTable} writes.
 *
 * <p>Layer: above {@code dev.gdasync.ki}, {@code shmem} and gdsync's {@code ki}, which it may call; {@code exec} and
 * {@code cuda} call it.
 */
package dev.gdasync.ki.msccl;
