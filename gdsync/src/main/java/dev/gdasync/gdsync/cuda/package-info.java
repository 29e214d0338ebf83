/**
 * The CUDA layer: the driver API through JCuda (contexts, device memory as
 * {@link dev.gdasync.gdsync.cuda.DeviceRegion}s, CUDA IPC, host registration) and
 * {@link dev.gdasync.gdsync.cuda.CudaStream}, whose memops become {@code cuStreamWriteValue}/{@code cuStreamWaitValue}
 * or one {@code cuStreamBatchMemOp_v2} per batch (an FFM downcall). Loaded only when a GPU is used.
 *
 * <p>Layer: beside {@code stream}, above {@code descriptor}, {@code nic}, {@code memop}, {@code memory},
 * {@code gdrcopy}, {@code ffm} and {@code concurrent}, which it may call. libmp does not call it: GPU memory reaches
 * libmp as a plain {@link dev.gdasync.gdsync.memory.Region}.
 */
package dev.gdasync.gdsync.cuda;
