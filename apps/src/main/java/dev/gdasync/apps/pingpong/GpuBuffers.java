package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.cuda.CudaAddressMap;
import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.CudaStream;
import dev.gdasync.gdsync.cuda.DeviceRegion;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.ki.cuda.ComputeKernel;
import dev.gdasync.libmp.MpRegistration;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A rank's GPU side for {@code --buffers gpu}, made once per run: the primary context of device 0, the send
 * and receive buffers in one GPU allocation of the rank's Mp (registered once), the compute kernel, the CUDA
 * stream the {@code host} mode launches it on, and page-locked host staging buffers through which
 * {@code --validate} writes and reads the patterns.
 */
final class GpuBuffers implements AutoCloseable {
    final CudaContext context;
    final CudaAddressMap map;
    final DeviceRegion region;
    final MpRegistration reg;
    final ComputeKernel kernel;
    final CudaStream hostModeStream;
    final MemorySegment stagingOut;
    final MemorySegment stagingIn;
    private final long slot;
    private final Arena arena = Arena.ofShared();

    /**
     * @param pair     the ranks (its Mp allocates the GPU memory)
     * @param maxBytes the largest message
     */
    GpuBuffers(Pair pair, int maxBytes) {
        this.context = CudaContext.retainPrimary(CudaDriver.open().device(0));
        this.map = new CudaAddressMap(context);
        this.slot = (maxBytes + 4095L) & -4096L;
        this.region = DeviceRegion.of(pair.mp.allocateDevice(context.device().ordinal(), 2 * slot));
        this.reg = pair.mp.register(region);
        this.kernel = ComputeKernel.load(context);
        this.hostModeStream = CudaStream.create("pingpong-host-rank" + pair.rank, context, map, WaitPolicy.defaults());
        this.stagingOut = arena.allocate(slot, 4096);
        this.stagingIn = arena.allocate(slot, 4096);
        // Page-locked, so that the stream's copies to and from them are asynchronous and in stream order.
        map.register(stagingOut);
        map.register(stagingIn);
    }

    /** @return the device address of the send buffer */
    long sendAddress() {
        return region.address();
    }

    /** @return the device address of the receive buffer */
    long recvAddress() {
        return region.address() + slot;
    }

    /** @return the receive buffer's offset in the allocation */
    long recvOffset() {
        return slot;
    }

    /**
     * @param bytes the message size
     * @return the send buffer's first bytes, as the address-only segment the Mp takes
     */
    MemorySegment send(int bytes) {
        return region.pointer(0, bytes);
    }

    /**
     * @param bytes the message size
     * @return the receive buffer's first bytes, as the address-only segment the Mp takes
     */
    MemorySegment recv(int bytes) {
        return region.pointer(slot, bytes);
    }

    /** Closes the stream, the kernel module, the host registrations and the context; the Mp frees the GPU memory. */
    @Override
    public void close() {
        try {
            hostModeStream.close();
            kernel.close();
            map.close();
        } finally {
            arena.close();
            context.close();
        }
    }
}
