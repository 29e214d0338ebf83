package dev.gdasync.gdsync.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * CUDA inter-process memory handles: another process of the node maps device memory by the 64 bytes
 * of its {@code CUipcMemHandle}.
 *
 * <p>These three calls are FFM downcalls into {@code libcuda.so.1}, not JCuda: JCuda's
 * {@code CUipcMemHandle} keeps its bytes in a private field, so a handle could neither be written to a
 * file nor rebuilt from one. The downcalls are bound on first use, after {@link CudaDriver#open()}
 * found the driver library.
 */
@SuppressWarnings("restricted") // binding the driver's IPC entry points is a native lookup by design
public final class CudaIpc {
    /** {@code CU_IPC_HANDLE_SIZE}: the bytes of a handle. */
    public static final int HANDLE_BYTES = 64;
    /** {@code CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS}: enable peer access to the owner's device if needed. */
    public static final int LAZY_ENABLE_PEER_ACCESS = 1;

    private CudaIpc() {
    }

    /**
     * Gets the handle of a {@code cuMemAlloc} allocation ({@code cuIpcGetMemHandle}).
     *
     * @param context the context it was allocated in
     * @param base    the allocation's first byte (not an address inside it)
     * @return the {@value #HANDLE_BYTES} bytes of the handle
     * @throws CudaException if the driver refuses (IPC unsupported, not an allocation's base, ...)
     */
    public static byte[] handleOf(CudaContext context, long base) {
        CudaDriver.open();
        Calls.require();
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment handle = arena.allocate(Calls.HANDLE);
            int rc = (int) Calls.GET.invokeExact(handle, base);
            CudaException.check(rc, "cuIpcGetMemHandle(" + CudaMemory.hex(base) + ")");
            return handle.toArray(JAVA_BYTE);
        } catch (CudaException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("cuIpcGetMemHandle downcall failed", t);
        }
    }

    /**
     * Maps another process's device memory into a context ({@code cuIpcOpenMemHandle} with
     * {@link #LAZY_ENABLE_PEER_ACCESS}). The same process cannot open its own handles.
     *
     * @param context the context to map into
     * @param handle  the {@value #HANDLE_BYTES} bytes from {@link #handleOf} in the owner
     * @return the device address of the mapping's first byte, valid in this process
     * @throws IllegalArgumentException if the handle does not have {@value #HANDLE_BYTES} bytes
     * @throws CudaException            if the driver refuses (the owner freed it, no peer access, ...)
     */
    public static long open(CudaContext context, byte[] handle) {
        if (handle.length != HANDLE_BYTES) {
            throw new IllegalArgumentException("a CUDA IPC handle has " + HANDLE_BYTES + " bytes, got " + handle.length);
        }
        CudaDriver.open();
        Calls.require();
        context.makeCurrent();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment h = arena.allocate(Calls.HANDLE);
            MemorySegment.copy(handle, 0, h, JAVA_BYTE, 0, HANDLE_BYTES);
            MemorySegment out = arena.allocate(JAVA_LONG);
            int rc = (int) Calls.OPEN.invokeExact(out, h, LAZY_ENABLE_PEER_ACCESS);
            CudaException.check(rc, "cuIpcOpenMemHandle(LAZY_ENABLE_PEER_ACCESS on " + context.device() + ")");
            return out.get(JAVA_LONG, 0);
        } catch (CudaException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("cuIpcOpenMemHandle downcall failed", t);
        }
    }

    /**
     * Unmaps memory {@link #open} mapped ({@code cuIpcCloseMemHandle}).
     *
     * @param context the context it was mapped into
     * @param address the address {@code open} returned
     * @throws CudaException if the driver refuses
     */
    public static void close(CudaContext context, long address) {
        Calls.require();
        context.makeCurrent();
        try {
            int rc = (int) Calls.CLOSE.invokeExact(address);
            CudaException.check(rc, "cuIpcCloseMemHandle(" + CudaMemory.hex(address) + ")");
        } catch (CudaException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("cuIpcCloseMemHandle downcall failed", t);
        }
    }

    /** The downcall handles, bound when first used (after the driver library was found). */
    private static final class Calls {
        static final StructLayout HANDLE = MemoryLayout.structLayout(
                MemoryLayout.sequenceLayout(HANDLE_BYTES, JAVA_BYTE).withName("reserved")).withName("CUipcMemHandle");
        static final MethodHandle GET;
        static final MethodHandle OPEN;
        static final MethodHandle CLOSE;
        static final String FAILURE;

        static {
            MethodHandle get = null;
            MethodHandle open = null;
            MethodHandle close = null;
            String failure = null;
            try {
                Linker linker = Linker.nativeLinker();
                SymbolLookup driver = SymbolLookup.libraryLookup(DriverLibrary.NAME, Arena.global());
                // CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
                get = linker.downcallHandle(find(driver, "cuIpcGetMemHandle"),
                        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
                // CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags):
                // the handle is passed by value.
                open = linker.downcallHandle(find(driver, "cuIpcOpenMemHandle_v2"),
                        FunctionDescriptor.of(JAVA_INT, ADDRESS, HANDLE, JAVA_INT));
                // CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
                close = linker.downcallHandle(find(driver, "cuIpcCloseMemHandle"),
                        FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
            } catch (RuntimeException e) {
                failure = e.getMessage();
            }
            GET = get;
            OPEN = open;
            CLOSE = close;
            FAILURE = failure;
        }

        /** Throws where the driver library lacks the IPC entry points. */
        static void require() {
            if (FAILURE != null) {
                throw new CudaException(FAILURE, CudaException.NO_RESULT);
            }
        }

        private static MemorySegment find(SymbolLookup driver, String name) {
            return driver.find(name).orElseThrow(() -> new IllegalStateException(DriverLibrary.NAME + " does not export "
                    + name + ": the NVIDIA driver is too old or built without CUDA IPC"));
        }

        private Calls() {
        }
    }
}
