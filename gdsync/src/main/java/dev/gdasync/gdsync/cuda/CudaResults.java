package dev.gdasync.gdsync.cuda;

import jcuda.driver.CUresult;

/**
 * Names and advice for the driver's result codes ({@code CUresult}). The names come from JCuda's
 * {@link CUresult#stringFor(int)}, a plain Java table that loads no native code; the advice is ours.
 */
public final class CudaResults {
    /** {@code CUDA_SUCCESS}. */
    public static final int SUCCESS = CUresult.CUDA_SUCCESS;
    /** {@code CUDA_ERROR_NOT_READY}: an event or stream query found work still running. */
    public static final int NOT_READY = CUresult.CUDA_ERROR_NOT_READY;
    /** {@code CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED}. */
    public static final int HOST_MEMORY_ALREADY_REGISTERED = CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    /** {@code CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE}. */
    public static final int COOPERATIVE_LAUNCH_TOO_LARGE = CUresult.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;

    private CudaResults() {
    }

    /**
     * @param result a result code
     * @return its name and code, for example {@code CUDA_ERROR_NO_DEVICE (100)}
     */
    public static String name(int result) {
        return CUresult.stringFor(result) + " (" + result + ")";
    }

    /**
     * @param result a result code
     * @return what a user can do about it, or an empty string when there is nothing specific to say
     */
    public static String advice(int result) {
        return switch (result) {
            case CUresult.CUDA_ERROR_NO_DEVICE ->
                    "no CUDA device is visible to this process: check nvidia-smi, CUDA_VISIBLE_DEVICES and the "
                            + "permissions of /dev/nvidia*";
            case CUresult.CUDA_ERROR_STUB_LIBRARY ->
                    "the libcuda.so.1 found is the CUDA toolkit's stub, not the driver: take the toolkit's stubs folder "
                            + "out of LD_LIBRARY_PATH";
            case CUresult.CUDA_ERROR_SYSTEM_DRIVER_MISMATCH ->
                    "libcuda.so.1 and the loaded NVIDIA kernel module are different versions: reboot, or reinstall "
                            + "the driver";
            case CUresult.CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE ->
                    "the CUDA forward-compatibility libraries in use do not support this GPU: take them out of "
                            + "LD_LIBRARY_PATH or update the driver";
            case CUresult.CUDA_ERROR_DEVICE_UNAVAILABLE ->
                    "the GPU is busy or in exclusive-process compute mode: check nvidia-smi for other processes";
            case CUresult.CUDA_ERROR_INVALID_DEVICE -> "no device has that ordinal: check CUDA_VISIBLE_DEVICES";
            case CUresult.CUDA_ERROR_NOT_INITIALIZED -> "the driver is not initialized: open it with CudaDriver.open()";
            case CUresult.CUDA_ERROR_OPERATING_SYSTEM, CUresult.CUDA_ERROR_SYSTEM_NOT_READY, CUresult.CUDA_ERROR_UNKNOWN ->
                    "the driver could not start: check dmesg, and that nvidia-persistenced (and the fabric manager on "
                            + "NVSwitch systems) runs";
            case CUresult.CUDA_ERROR_OUT_OF_MEMORY -> "the GPU or the pinned host memory is exhausted";
            case CUresult.CUDA_ERROR_NO_BINARY_FOR_GPU ->
                    "the module has no code for this GPU: build the kernels for its compute capability, or ship PTX";
            case CUresult.CUDA_ERROR_INVALID_PTX, CUresult.CUDA_ERROR_UNSUPPORTED_PTX_VERSION ->
                    "the driver cannot JIT this PTX (it is newer than the driver): update the driver, or build a "
                            + "cubin for this GPU's compute capability";
            case CUresult.CUDA_ERROR_JIT_COMPILATION_DISABLED, CUresult.CUDA_ERROR_JIT_COMPILER_NOT_FOUND ->
                    "the driver will not JIT PTX here: build a cubin for this GPU's compute capability";
            case CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED ->
                    "part of this host memory is already registered with CUDA by another registration";
            case CUresult.CUDA_ERROR_NOT_SUPPORTED ->
                    "this GPU or driver does not support the operation (host registration of this memory, "
                            + "IOMEMORY without GPUDirect RDMA support, ...)";
            case CUresult.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE ->
                    "more blocks than can be resident at once: launch fewer blocks";
            case CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, CUresult.CUDA_ERROR_LAUNCH_FAILED,
                 CUresult.CUDA_ERROR_ILLEGAL_INSTRUCTION, CUresult.CUDA_ERROR_MISALIGNED_ADDRESS,
                 CUresult.CUDA_ERROR_HARDWARE_STACK_ERROR, CUresult.CUDA_ERROR_INVALID_PC ->
                    "a kernel faulted and the CUDA context is no longer usable: fix the kernel's addresses and "
                            + "restart the process";
            case CUresult.CUDA_ERROR_LAUNCH_TIMEOUT ->
                    "the kernel ran past the display watchdog: run on a GPU without a display, or shorten the kernel";
            default -> "";
        };
    }

    /**
     * @param result a failed call's result code
     * @param call   the call
     * @return {@code "<call> failed with <NAME> (<code>)"} and the advice, if any
     */
    public static String describe(int result, String call) {
        String advice = advice(result);
        return call + " failed with " + name(result) + (advice.isEmpty() ? "" : ": " + advice);
    }
}
