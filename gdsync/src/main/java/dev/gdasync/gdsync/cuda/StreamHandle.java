package dev.gdasync.gdsync.cuda;

import jcuda.driver.CUstream;

/**
 * A JCuda stream handle whose raw {@code CUstream} value can be read, for the driver calls this project
 * makes through FFM ({@code cuStreamBatchMemOp_v2}, {@code cuLaunchHostFunc}), which JCuda cannot make.
 *
 * <p>JCuda keeps the handle in {@code NativePointerObject}, whose getter {@code getNativePointer()} is
 * protected; {@code cuStreamCreate} fills a {@link CUstream} that this subclass is, and {@link #address()}
 * reads the value back. The same kind of tiny subclass as {@link CudaPointers}; no reflection.
 */
final class StreamHandle extends CUstream {
    /** @return the driver's {@code CUstream} value, 0 before {@code cuStreamCreate} filled it */
    long address() {
        return getNativePointer();
    }
}
