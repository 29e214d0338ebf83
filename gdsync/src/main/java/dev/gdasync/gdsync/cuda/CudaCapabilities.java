package dev.gdasync.gdsync.cuda;

import java.util.Objects;
import java.util.Optional;

/**
 * What a GPU and its driver let a CUDA stream do with memory operations, and the decisions that follow.
 *
 * <p>Read once per stream ({@link CudaStream#capabilities()}) from {@code cuDeviceGetAttribute} and from a
 * probe: an empty {@code cuStreamBatchMemOp_v2} call on the new stream. The probe is what tells whether
 * memops work at all: a driver with memops disabled answers {@code CUDA_ERROR_NOT_SUPPORTED} (801).
 *
 * @param device            the device, for messages
 * @param driverVersion     {@code cuDriverGetVersion}, e.g. 12040
 * @param streamMemops      whether stream memops can be used at all
 * @param memops64          {@code CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS}: WRITE/WAIT_VALUE_64
 * @param waitNor           {@code CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR}
 * @param flushRemoteWrites {@code CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES}: {@code CU_STREAM_WAIT_VALUE_FLUSH}
 * @param batchMemop        whether {@code cuStreamBatchMemOp_v2} can be used (the driver exports it and the
 *                          probe succeeded)
 * @param batchProbeResult  what the probe answered, or {@link CudaException#NO_RESULT} when the driver does not
 *                          export the call
 */
public record CudaCapabilities(String device, int driverVersion, boolean streamMemops, boolean memops64,
                               boolean waitNor, boolean flushRemoteWrites, boolean batchMemop, int batchProbeResult) {

    /** The advice for memops disabled in the driver. */
    static final String DISABLED = "stream memops are disabled in the NVIDIA driver: load the nvidia module with "
            + "NVreg_EnableStreamMemOPs=1 (for example 'options nvidia NVreg_EnableStreamMemOPs=1' in "
            + "/etc/modprobe.d, then reload the module or reboot)";

    /** @throws NullPointerException if the device is null */
    public CudaCapabilities {
        Objects.requireNonNull(device, "device");
    }

    /**
     * Decides the capabilities from what the driver answered.
     *
     * @param device            the device, for messages
     * @param driverVersion     {@code cuDriverGetVersion}
     * @param legacyMemops      {@code CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1}
     * @param memops64          {@code CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS}
     * @param waitNor           {@code CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR}
     * @param flushRemoteWrites {@code CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES}
     * @param batchExported     whether the driver exports {@code cuStreamBatchMemOp_v2}
     * @param probeResult       what an empty batch answered (ignored when not exported)
     * @return the capabilities
     */
    static CudaCapabilities decide(String device, int driverVersion, int legacyMemops, int memops64, int waitNor,
                                   int flushRemoteWrites, boolean batchExported, int probeResult) {
        int probe = batchExported ? probeResult : CudaException.NO_RESULT;
        boolean enabled = driverVersion >= MemopCodes.V2_DRIVER_VERSION || legacyMemops != 0;
        boolean usable = enabled && probe != MemopCodes.ERROR_NOT_SUPPORTED;
        return new CudaCapabilities(device, driverVersion, usable, usable && memops64 != 0, usable && waitNor != 0,
                usable && flushRemoteWrites != 0, usable && probe == CudaResults.SUCCESS, probe);
    }

    /**
     * @return whether the driver has the v2 memop API (CUDA 11.7 and newer): memops on by default, the
     *         {@code CU_STREAM_MEM_OP_BARRIER} operation, and no {@code NO_MEMORY_BARRIER} write flag
     */
    public boolean v2() {
        return driverVersion >= MemopCodes.V2_DRIVER_VERSION;
    }

    /** @return whether {@code CU_STREAM_MEM_OP_BARRIER} can be queued: the v2 API through a batch call */
    public boolean barrierOp() {
        return v2() && batchMemop;
    }

    /**
     * @return why this GPU's streams cannot run memops, with what to do; empty when they can
     */
    public Optional<String> problem() {
        if (streamMemops) {
            return Optional.empty();
        }
        String where = " (" + device + ", driver for CUDA " + DriverVersion.format(driverVersion) + ")";
        if (batchProbeResult == MemopCodes.ERROR_NOT_SUPPORTED) {
            return Optional.of(DISABLED + "; an empty cuStreamBatchMemOp answered " + CudaResults.name(batchProbeResult)
                    + where);
        }
        return Optional.of(DISABLED + ", or update the driver to CUDA 11.7 (R515) or newer, which enables them by "
                + "default: CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 is 0" + where);
    }

    /**
     * @throws CudaException if the GPU's streams cannot run memops, with {@link #problem()} as the message
     */
    void require() {
        Optional<String> p = problem();
        if (p.isPresent()) {
            throw new CudaException(p.get(), batchProbeResult == MemopCodes.ERROR_NOT_SUPPORTED
                    ? MemopCodes.ERROR_NOT_SUPPORTED : CudaException.NO_RESULT);
        }
    }

    /** @return e.g. {@code NVIDIA X (device 0): stream memops v2, batched, 64-bit, wait NOR, no remote-write flush} */
    @Override
    public String toString() {
        if (!streamMemops) {
            return device + ": no stream memops";
        }
        return device + ": stream memops " + (v2() ? "v2" : "v1") + ", " + (batchMemop ? "batched" : "one call each")
                + ", " + (memops64 ? "64-bit" : "32-bit only") + ", " + (waitNor ? "wait NOR" : "no wait NOR") + ", "
                + (flushRemoteWrites ? "remote-write flush" : "no remote-write flush");
    }
}
