package dev.gdasync.gdsync.cuda;

import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.JCudaDriver;

import java.nio.charset.StandardCharsets;

/**
 * A CUDA device and the properties this project uses, read once when the driver is opened.
 */
public final class CudaDevice {
    private final int ordinal;
    private final CUdevice handle;
    private final String name;
    private final int computeMajor;
    private final int computeMinor;
    private final int multiprocessors;
    private final boolean cooperativeLaunch;
    private final boolean hostPointerForRegisteredMemory;
    private final boolean unifiedAddressing;

    private CudaDevice(int ordinal, CUdevice handle, String name, int computeMajor, int computeMinor, int multiprocessors,
                       boolean cooperativeLaunch, boolean hostPointerForRegisteredMemory, boolean unifiedAddressing) {
        this.ordinal = ordinal;
        this.handle = handle;
        this.name = name;
        this.computeMajor = computeMajor;
        this.computeMinor = computeMinor;
        this.multiprocessors = multiprocessors;
        this.cooperativeLaunch = cooperativeLaunch;
        this.hostPointerForRegisteredMemory = hostPointerForRegisteredMemory;
        this.unifiedAddressing = unifiedAddressing;
    }

    static CudaDevice query(int ordinal) {
        CUdevice handle = CudaDriver.handle(ordinal);
        byte[] raw = new byte[256];
        CudaException.check(JCudaDriver.cuDeviceGetName(raw, raw.length, handle), "cuDeviceGetName(" + ordinal + ")");
        int length = 0;
        while (length < raw.length && raw[length] != 0) {
            length++;
        }
        return new CudaDevice(ordinal, handle, new String(raw, 0, length, StandardCharsets.UTF_8),
                attribute(handle, ordinal, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                attribute(handle, ordinal, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
                attribute(handle, ordinal, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
                attribute(handle, ordinal, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) != 0,
                attribute(handle, ordinal,
                        CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM) != 0,
                attribute(handle, ordinal, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING) != 0);
    }

    private static int attribute(CUdevice handle, int ordinal, int attribute) {
        int[] value = new int[1];
        CudaException.check(JCudaDriver.cuDeviceGetAttribute(value, attribute, handle),
                "cuDeviceGetAttribute(" + CUdevice_attribute.stringFor(attribute) + ", device " + ordinal + ")");
        return value[0];
    }

    /**
     * Reads any device attribute (stream memop support, GPUDirect RDMA support, ...).
     *
     * @param attribute a {@code CU_DEVICE_ATTRIBUTE_*} constant of {@link CUdevice_attribute}
     * @return its value
     * @throws CudaException if the driver does not know the attribute
     */
    public int attribute(int attribute) {
        return attribute(handle, ordinal, attribute);
    }

    /** @return the device ordinal */
    public int ordinal() {
        return ordinal;
    }

    /** @return the driver's handle */
    public CUdevice handle() {
        return handle;
    }

    /** @return the product name, for example {@code NVIDIA H100 80GB HBM3} */
    public String name() {
        return name;
    }

    /** @return the compute capability's major number */
    public int computeMajor() {
        return computeMajor;
    }

    /** @return the compute capability's minor number */
    public int computeMinor() {
        return computeMinor;
    }

    /** @return the compute capability, for example {@code 9.0} */
    public String computeCapability() {
        return computeMajor + "." + computeMinor;
    }

    /** @return streaming multiprocessors */
    public int multiprocessors() {
        return multiprocessors;
    }

    /** @return whether cooperative launches work ({@code CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH}) */
    public boolean cooperativeLaunch() {
        return cooperativeLaunch;
    }

    /**
     * @return whether a kernel may use the host address of registered host memory as is
     *         ({@code CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM})
     */
    public boolean hostPointerForRegisteredMemory() {
        return hostPointerForRegisteredMemory;
    }

    /** @return whether host and device share one address space ({@code CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING}) */
    public boolean unifiedAddressing() {
        return unifiedAddressing;
    }

    /** @return {@code "NAME (device N, compute capability M.m, S multiprocessors)"} */
    @Override
    public String toString() {
        return name + " (device " + ordinal + ", compute capability " + computeCapability() + ", " + multiprocessors
                + " multiprocessors)";
    }
}
