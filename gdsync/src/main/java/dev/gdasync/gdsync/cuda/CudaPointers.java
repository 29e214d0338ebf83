package dev.gdasync.gdsync.cuda;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * Raw addresses in and out of JCuda.
 *
 * <p>JCuda passes addresses as {@link Pointer} objects, and the constructors that take a raw address
 * ({@code Pointer(long)}) and the accessors that give one back ({@code getNativePointer()},
 * {@code getByteOffset()}) are protected. This project's memory is FFM {@code MemorySegment}s (and, later,
 * mapped device pages) known by address, so two tiny subclasses reach those members. The alternative,
 * wrapping a direct {@code ByteBuffer} ({@link Pointer#to(java.nio.Buffer)}), would need a buffer view
 * of every segment and cannot express device addresses at all.
 */
public final class CudaPointers {
    private CudaPointers() {
    }

    /**
     * @param address an address in this process
     * @return a JCuda pointer to it, for calls such as {@code cuMemHostRegister}
     */
    public static Pointer host(long address) {
        return new HostPointer(address);
    }

    /**
     * @param address a device address (from {@code cuMemAlloc}, {@code cuIpcOpenMemHandle}, ...)
     * @return a JCuda device pointer to it, for calls such as {@code cuMemcpyHtoD}
     */
    public static CUdeviceptr device(long address) {
        // The driver binding passes a pointer's native address plus its byte offset; a fresh CUdeviceptr's
        // native address is 0, so the public withByteOffset carries the whole address.
        return new CUdeviceptr().withByteOffset(address);
    }

    /** @return an empty device pointer for a driver call to fill; read it back with {@link #address(CUdeviceptr)} */
    public static CUdeviceptr deviceOut() {
        return new DevicePointer();
    }

    /**
     * @param pointer a device pointer from {@link #deviceOut()}, filled by the driver
     * @return the address it holds
     * @throws IllegalArgumentException if it was not made by {@link #deviceOut()}
     */
    public static long address(CUdeviceptr pointer) {
        if (!(pointer instanceof DevicePointer p)) {
            throw new IllegalArgumentException("read device addresses from CudaPointers.deviceOut() pointers only");
        }
        return p.address();
    }

    /** A host address as a JCuda pointer: the protected {@code Pointer(long)} constructor. */
    private static final class HostPointer extends Pointer {
        HostPointer(long address) {
            super(address);
        }
    }

    /** A device pointer whose address (native pointer plus byte offset, both protected) can be read. */
    private static final class DevicePointer extends CUdeviceptr {
        long address() {
            return getNativePointer() + getByteOffset();
        }
    }
}
