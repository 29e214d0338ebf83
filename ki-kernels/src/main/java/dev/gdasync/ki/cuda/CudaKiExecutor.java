package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.cuda.CudaAddressMap;
import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDevice;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.CudaException;
import dev.gdasync.gdsync.cuda.CudaResults;
import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.KiCopyWork;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.KiExchange;
import dev.gdasync.ki.KiExecutor;
import dev.gdasync.ki.KiKernelLayout;
import dev.gdasync.ki.KiLaunch;
import dev.gdasync.ki.KiTemplateArgs;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The KI kernels on a GPU, launched through JCuda: the CUDA counterpart of the host KI executor, over the
 * same tables and work descriptions ({@code docs/ki.md}, {@code docs/cuda.md}).
 *
 * <p>{@link #open(int)} loads the kernels' module into the device's primary context: the packaged cubin
 * built for the device's compute capability when there is one, else the packaged PTX, which the driver
 * compiles for the device ({@link #description()} says which). Kernels run on a stream of the executor's
 * own, in launch order. Tables, buffers and the executor's own kernel arguments are host memory registered
 * with CUDA through the executor's {@link CudaAddressMap}: export tables for this executor with
 * {@link #addresses()}.
 */
public final class CudaKiExecutor implements KiExecutor {
    private static final long CTL_BYTES = 64;

    private final CudaContext context;
    private final ModuleImage image;
    private final CUmodule module;
    private final Map<KernelAbi.Signature, CUfunction> functions;
    private final CUstream stream;
    private final int exchangeBlocksPerSm;
    private final CudaAddressMap addresses;
    private final Arena arena;
    private final ScratchPool scratch;
    private final String name;
    private final Set<CudaLaunch> running = new HashSet<>();
    private boolean closed;

    private CudaKiExecutor(CudaContext context, ModuleImage image, CUmodule module, Map<KernelAbi.Signature, CUfunction> functions,
                           CUstream stream, int exchangeBlocksPerSm) {
        this.context = context;
        this.image = image;
        this.module = module;
        this.functions = functions;
        this.stream = stream;
        this.exchangeBlocksPerSm = exchangeBlocksPerSm;
        this.addresses = new CudaAddressMap(context);
        this.arena = Arena.ofShared();
        this.scratch = new ScratchPool(arena, addresses::deviceAddressOf);
        CudaDevice d = context.device();
        this.name = d.name() + " (device " + d.ordinal() + ")";
    }

    /**
     * Opens an executor on a device with the kernels packaged in ki-kernels.
     *
     * @param device the device ordinal
     * @return the executor
     * @throws CudaException            if CUDA cannot be used here (the message says why and what to do)
     * @throws IllegalArgumentException if there is no such device
     * @throws KiException              if no packaged kernel image runs on the device, or it does not load
     */
    public static CudaKiExecutor open(int device) {
        return open(device, KernelImages.packaged(CudaKiExecutor.class.getClassLoader()));
    }

    /**
     * Opens an executor with the given kernel images.
     *
     * @param device the device ordinal
     * @param images the kernels
     * @return the executor
     */
    static CudaKiExecutor open(int device, KernelImages images) {
        CudaDevice d = CudaDriver.open().device(device);
        ModuleImage image;
        try {
            image = ImageChoice.choose(images, d.computeMajor(), d.computeMinor());
        } catch (IllegalStateException e) {
            throw new KiException("the KI kernels cannot run on " + d + ": " + e.getMessage(), e);
        }
        CudaContext context = CudaContext.retainPrimary(d);
        CUmodule module = null;
        CUstream stream = null;
        try {
            module = new CUmodule();
            int rc = image.kind() == ModuleImage.Kind.CUBIN ? JCudaDriver.cuModuleLoadData(module, image.bytes())
                    : JCudaDriver.cuModuleLoadData(module, image.text());
            if (rc != CudaResults.SUCCESS) {
                module = null;
                throw new KiException("the KI kernels did not load on " + d + ": "
                        + CudaResults.describe(rc, "cuModuleLoadData(" + image.description() + ")"), CudaException.of(rc,
                        "cuModuleLoadData"));
            }
            Map<KernelAbi.Signature, CUfunction> functions = new HashMap<>();
            for (KernelAbi.Signature s : KernelAbi.ALL) {
                CUfunction f = new CUfunction();
                rc = JCudaDriver.cuModuleGetFunction(f, module, s.function());
                if (rc != CudaResults.SUCCESS) {
                    throw new KiException("the KI kernel module (" + image.description() + ") has no " + s.function()
                            + ": " + CudaResults.describe(rc, "cuModuleGetFunction(" + s.function() + ")")
                            + "; rebuild ki-kernels", CudaException.of(rc, "cuModuleGetFunction"));
                }
                functions.put(s, f);
            }
            int[] blocks = new int[1];
            CudaException.check(JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks,
                            functions.get(KernelAbi.EXCHANGE), KernelAbi.EXCHANGE_BLOCK_THREADS, 0),
                    "cuOccupancyMaxActiveBlocksPerMultiprocessor(" + KernelAbi.EXCHANGE.function() + ", "
                            + KernelAbi.EXCHANGE_BLOCK_THREADS + " threads)");
            stream = new CUstream();
            rc = JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
            if (rc != CudaResults.SUCCESS) {
                stream = null;
                throw CudaException.of(rc, "cuStreamCreate");
            }
            return new CudaKiExecutor(context, image, module, Map.copyOf(functions), stream, blocks[0]);
        } catch (RuntimeException e) {
            if (stream != null) {
                JCudaDriver.cuStreamDestroy(stream);
            }
            if (module != null) {
                JCudaDriver.cuModuleUnload(module);
            }
            context.close();
            throw e;
        }
    }

    /** @return the GPU's name and ordinal, for messages: {@code "NVIDIA H100 80GB HBM3 (device 0)"} */
    @Override
    public String name() {
        return name;
    }

    /** @return the device, its compute capability and the kernel image it runs (cubin, or JIT-compiled PTX) */
    public String description() {
        return context.device() + ", KI kernels from " + image.description();
    }

    /** @return the device */
    public CudaDevice device() {
        return context.device();
    }

    /** @return exchange blocks of 128 threads one multiprocessor holds (the occupancy calculator's answer) */
    public int exchangeBlocksPerMultiprocessor() {
        return exchangeBlocksPerSm;
    }

    /** @return the executor's address map (a {@link CudaAddressMap}): registered host memory, by device pointer */
    @Override
    public DeviceAddressMap addresses() {
        return addresses;
    }

    @Override
    public KiLaunch pingPong(KiTable table, int count, boolean initiator, long computeNs, long timeoutNs) {
        LaunchChecks.pingPong(table, count, computeNs, timeoutNs);
        synchronized (this) {
            requireOpen();
            context.makeCurrent();
            long t = addresses.deviceAddressOf(table.segment());
            KernelArgs args = KernelArgs.of(KernelAbi.PINGPONG, t, count, initiator ? 1 : 0, computeNs, timeoutNs);
            return launch(KernelAbi.PINGPONG, table, args, 1, 1, false, null);
        }
    }

    @Override
    public KiLaunch sendTemplates(KiTable table, List<KiTemplateArgs> args) {
        List<KiTemplateArgs> checked = LaunchChecks.sendTemplates(table, args);
        synchronized (this) {
            requireOpen();
            context.makeCurrent();
            long t = addresses.deviceAddressOf(table.segment());
            ScratchPool.Block block = scratch.acquire(Math.max(1, WorkWriter.templateArgsBytes(checked.size())));
            try {
                WorkWriter.writeTemplateArgs(checked, block.segment());
                KernelArgs kernelArgs = KernelArgs.of(KernelAbi.SEND_TEMPLATES, t, block.deviceAddress(), checked.size());
                return launch(KernelAbi.SEND_TEMPLATES, table, kernelArgs, 1, 1, false, block);
            } catch (RuntimeException e) {
                scratch.release(block);
                throw e;
            }
        }
    }

    @Override
    public KiLaunch exchange(KiTable table, KiExchange exchange, long timeoutNs) {
        KiCopyWork work = LaunchChecks.exchange(table, exchange, timeoutNs);
        CudaDevice d = context.device();
        Optional<String> tooMany = CoResidency.problem(KernelAbi.EXCHANGE.label(), d.name(), exchange.blocks(),
                KernelAbi.EXCHANGE_BLOCK_THREADS, exchangeBlocksPerSm, d.multiprocessors(), d.cooperativeLaunch());
        if (tooMany.isPresent()) {
            throw new KiException(tooMany.get(), (KiTable.Status) null);
        }
        synchronized (this) {
            requireOpen();
            context.makeCurrent();
            long t = addresses.deviceAddressOf(table.segment());
            ScratchPool.Block block = scratch.acquire(CTL_BYTES + WorkWriter.copyWorkBytes(work));
            try {
                MemorySegment memory = block.segment();
                WorkWriter.writeCopyWork(work, memory.asSlice(CTL_BYTES), block.deviceAddress() + CTL_BYTES,
                        addresses::deviceAddressOf);
                WorkWriter.zeroCtl(memory);
                KernelArgs args = KernelArgs.of(KernelAbi.EXCHANGE, t, block.deviceAddress(),
                        block.deviceAddress() + CTL_BYTES, exchange.packBlocks(), exchange.unpackBlocks(), timeoutNs);
                return launch(KernelAbi.EXCHANGE, table, args, exchange.blocks(), KernelAbi.EXCHANGE_BLOCK_THREADS, true,
                        block);
            } catch (RuntimeException e) {
                scratch.release(block);
                throw e;
            }
        }
    }

    /** Called with the lock held, the context current and the arguments written. */
    private CudaLaunch launch(KernelAbi.Signature kernel, KiTable table, KernelArgs args, int grid, int block,
                              boolean cooperative, ScratchPool.Block scratchBlock) {
        CUevent event = new CUevent();
        CudaException.check(JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        table.clearStatus();
        CUfunction f = functions.get(kernel);
        String call = (cooperative ? "cuLaunchCooperativeKernel" : "cuLaunchKernel") + "(" + args + ", grid " + grid
                + ", block " + block + ")";
        int rc = cooperative
                ? JCudaDriver.cuLaunchCooperativeKernel(f, grid, 1, 1, block, 1, 1, 0, stream, args.pack())
                : JCudaDriver.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, stream, args.pack(), null);
        if (rc != CudaResults.SUCCESS) {
            JCudaDriver.cuEventDestroy(event);
            CudaException cause = CudaException.of(rc, call);
            throw new KiException(kernel.label() + " on " + name + " could not be launched: " + cause.getMessage(), cause);
        }
        rc = JCudaDriver.cuEventRecord(event, stream);
        if (rc != CudaResults.SUCCESS) {
            // The kernel is queued, but its end cannot be observed on its own: wait for it here.
            int done = JCudaDriver.cuStreamSynchronize(stream);
            JCudaDriver.cuEventDestroy(event);
            CudaException cause = CudaException.of(rc, "cuEventRecord after " + call);
            throw new KiException(kernel.label() + " on " + name + " was launched, but its end could not be observed ("
                    + "the stream was synchronized instead, with " + CudaResults.name(done) + "; the table's status is "
                    + table.status() + "): " + cause.getMessage(), cause);
        }
        CudaLaunch[] self = new CudaLaunch[1];
        self[0] = new CudaLaunch(context, name, kernel.label(), table, event, () -> ended(self[0], scratchBlock));
        running.add(self[0]);
        return self[0];
    }

    private void ended(CudaLaunch launch, ScratchPool.Block block) {
        synchronized (this) {
            running.remove(launch);
        }
        if (block != null) {
            scratch.release(block);
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the CUDA KI executor on " + name + " is closed");
        }
    }

    /**
     * Waits for every launch to end, then unregisters the executor's memory, unloads the kernels and releases
     * the context. Launches that had not been joined can still be joined: they report their table's status.
     */
    @Override
    public void close() {
        List<CudaLaunch> pending;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            context.makeCurrent();
            int rc = JCudaDriver.cuStreamSynchronize(stream);
            pending = List.copyOf(running);
            for (CudaLaunch l : pending) {
                l.end(rc, "cuStreamSynchronize");
            }
        }
        try {
            JCudaDriver.cuStreamDestroy(stream);
            JCudaDriver.cuModuleUnload(module);
            addresses.close();
        } finally {
            arena.close();
            context.close();
        }
    }

    @Override
    public String toString() {
        return "CUDA KI executor on " + description();
    }
}
