package dev.gdasync.ki.cuda;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.cuda.CudaAddressMap;
import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDevice;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.CudaException;
import dev.gdasync.gdsync.cuda.CudaMemory;
import dev.gdasync.gdsync.cuda.CudaPointers;
import dev.gdasync.gdsync.cuda.CudaResults;
import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.MscclTableLayout;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.KiExecutor;
import dev.gdasync.ki.KiLaunch;
import dev.gdasync.ki.kernels.KiCopyWork;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiKernelLayout;
import dev.gdasync.ki.kernels.KiTemplateArgs;
import dev.gdasync.ki.msccl.MscclKernelTable;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
    /** Device memory of MSCCL runs that had not ended by their timeout: freed on close, after the stream drained. */
    private final List<Long> abandoned = new ArrayList<>();
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

    /**
     * Launches {@code gds_shmem_ordering} (the KI-model ordering check of {@code docs/shmem.md}) over a launch that
     * {@code Shmem.kiPrepare(this, blocks, ...)} prepared: block b's thread 0 runs context b. A sender (this PE puts)
     * fills its {@code bytes} of {@code data} with round i's pattern ({@code (i + b) & 0xff}), puts them to the same
     * place on {@code peer} and SET-signals flag b with i + 1 (one put-with-signal, or put, fence, p), then waits for
     * ack b to reach i + 1; a receiver waits for flag b to equal i + 1, counts the bytes that differ from the pattern
     * into {@code mismatches[b]} and acks with p. Flags and acks must start below the first round's value.
     *
     * @param table      the prepared launch's table
     * @param state      its state
     * @param blocks     the blocks it was prepared for (the grid)
     * @param data       {@code blocks * bytes} bytes of the symmetric heap
     * @param flags      {@code blocks} 64-bit words of the symmetric heap
     * @param acks       {@code blocks} 64-bit words of the symmetric heap
     * @param bytes      bytes per block and round, {@code >= 1}
     * @param rounds     rounds, {@code >= 1}
     * @param sender     whether this PE sends (else it receives and checks)
     * @param useSignal  put-with-signal instead of put, fence, p
     * @param peer       the other PE
     * @param mismatches {@code blocks} 64-bit counters the receiver adds to (device-visible memory: the heap)
     * @return the running launch; join it, then complete the prepared launch
     * @throws IllegalArgumentException if an argument does not fit the state or the kernel
     * @throws KiException              if the grid cannot be co-resident, or the launch is refused
     */
    public KiLaunch shmemOrdering(KiTable table, MemorySegment state, int blocks, MemorySegment data,
                                  MemorySegment flags, MemorySegment acks, long bytes, int rounds, boolean sender,
                                  boolean useSignal, int peer, MemorySegment mismatches) {
        LaunchChecks.positive("bytes", bytes);
        LaunchChecks.positive("rounds", rounds);
        LaunchChecks.positive("blocks", blocks);
        LaunchChecks.kernelMemory("data", data, Math.multiplyExact(bytes, (long) blocks));
        LaunchChecks.kernelMemory("flags", flags, 8L * blocks);
        LaunchChecks.kernelMemory("acks", acks, 8L * blocks);
        LaunchChecks.kernelMemory("mismatches", mismatches, 8L * blocks);
        synchronized (this) {
            requireOpen();
            context.makeCurrent();
            long s = shmemState(table, state, blocks, peer);
            KernelArgs args = KernelArgs.of(KernelAbi.SHMEM_ORDERING, s, addresses.deviceAddressOf(data),
                    addresses.deviceAddressOf(flags), addresses.deviceAddressOf(acks), bytes, rounds, sender ? 1 : 0,
                    useSignal ? 1 : 0, peer, addresses.deviceAddressOf(mismatches));
            return launchShmem(KernelAbi.SHMEM_ORDERING, table, args, blocks);
        }
    }

    /**
     * Launches {@code gds_shmem_fetch_add}: thread 0 of each block adds 1 to {@code counter} on PE {@code pe},
     * {@code count} times (a direct system-scope atomic on that PE's heap as mapped in this process), and stores each
     * old value into {@code olds[block * count + i]}.
     *
     * @param table   the prepared launch's table
     * @param state   its state
     * @param blocks  the blocks it was prepared for (the grid)
     * @param counter a 64-bit word of the symmetric heap (the same offset is used on {@code pe})
     * @param count   fetch-adds per block, {@code >= 1}
     * @param pe      the PE whose counter is added to
     * @param olds    {@code blocks * count} 64-bit words of device-visible memory (the heap)
     * @return the running launch; join it, then complete the prepared launch
     * @throws IllegalArgumentException if an argument does not fit the state or the kernel
     * @throws KiException              if the grid cannot be co-resident, or the launch is refused
     */
    public KiLaunch shmemFetchAdd(KiTable table, MemorySegment state, int blocks, MemorySegment counter, int count,
                                  int pe, MemorySegment olds) {
        LaunchChecks.positive("count", count);
        LaunchChecks.positive("blocks", blocks);
        LaunchChecks.kernelMemory("counter", counter, 8);
        LaunchChecks.kernelMemory("olds", olds, 8L * blocks * count);
        synchronized (this) {
            requireOpen();
            context.makeCurrent();
            long s = shmemState(table, state, blocks, pe);
            KernelArgs args = KernelArgs.of(KernelAbi.SHMEM_FETCH_ADD, s, addresses.deviceAddressOf(counter), count, pe,
                    addresses.deviceAddressOf(olds));
            return launchShmem(KernelAbi.SHMEM_FETCH_ADD, table, args, blocks);
        }
    }

    /**
     * Launches {@code gds_shmem_ops}: thread 0 of block 0 runs one device call {@code count} times toward {@code pe},
     * then quiets (op codes: 0 put_nbi, 1 p, 2 SET put_signal_nbi, 3 fetch-add, 4 get, 5 put, 6 compare-swap, 7 swap,
     * 8 fetch, 9 set, 10 inc, 11 fetch-inc, 12 ADD put_signal, 13 wait_until(word &gt;= i); {@code ki_templates.cu}).
     * A launch prepared for more blocks still runs block 0 only; the others' contexts end unused.
     *
     * @param table  the prepared launch's table
     * @param state  its state, prepared for 1 block
     * @param op     the call, 0..13
     * @param dest   the destination of puts and gets (symmetric heap)
     * @param src    their source (symmetric heap)
     * @param bytes  their length, {@code >= 1}
     * @param word   the 64-bit word of p, signals, atomics and waits (symmetric heap)
     * @param count  calls, {@code >= 1}
     * @param pe     the target PE
     * @return the running launch; join it, then complete the prepared launch
     * @throws IllegalArgumentException if an argument does not fit the state or the kernel
     * @throws KiException              if the launch is refused
     */
    public KiLaunch shmemOps(KiTable table, MemorySegment state, int op, MemorySegment dest, MemorySegment src,
                             long bytes, MemorySegment word, int count, int pe) {
        if (op < 0 || op > 13) {
            throw new IllegalArgumentException("op must be in 0..13 (ki_templates.cu, gds_shmem_ops), got " + op);
        }
        LaunchChecks.positive("bytes", bytes);
        LaunchChecks.positive("count", count);
        LaunchChecks.kernelMemory("dest", dest, bytes);
        LaunchChecks.kernelMemory("src", src, bytes);
        LaunchChecks.kernelMemory("word", word, 8);
        synchronized (this) {
            requireOpen();
            context.makeCurrent();
            long s = shmemState(table, state, 1, pe);
            KernelArgs args = KernelArgs.of(KernelAbi.SHMEM_OPS, s, op, addresses.deviceAddressOf(dest),
                    addresses.deviceAddressOf(src), bytes, addresses.deviceAddressOf(word), count, pe);
            return launchShmem(KernelAbi.SHMEM_OPS, table, args, 1);
        }
    }

    /** Checks the state against this executor's view of the table; returns the state's device address. */
    private long shmemState(KiTable table, MemorySegment state, int blocks, int pe) {
        Objects.requireNonNull(table, "table must not be null");
        Objects.requireNonNull(state, "state must not be null");
        LaunchChecks.shmemState(table, state, blocks, addresses.deviceAddressOf(table.segment()), pe);
        return addresses.deviceAddressOf(state);
    }

    /**
     * Called with the lock held: a cooperative launch of one-thread blocks (a context's calls are made by thread 0;
     * blocks take tickets toward a PE in turn, so a block that was not resident would stall the others).
     */
    private CudaLaunch launchShmem(KernelAbi.Signature kernel, KiTable table, KernelArgs args, int blocks) {
        requireCoResident(kernel, blocks, 1, "prepare fewer blocks (Shmem.kiPrepare)");
        return launch(kernel, table, args, blocks, 1, true, null);
    }

    private void requireCoResident(KernelAbi.Signature kernel, int blocks, int threads, String remedy) {
        int[] perSm = new int[1];
        CudaException.check(JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor(perSm, functions.get(kernel),
                threads, 0), "cuOccupancyMaxActiveBlocksPerMultiprocessor(" + kernel.function() + ", " + threads
                + " threads)");
        CudaDevice d = context.device();
        Optional<String> problem = CoResidency.problem(kernel.label(), d.name(), blocks, threads, perSm[0],
                d.multiprocessors(), d.cooperativeLaunch(), remedy);
        if (problem.isPresent()) {
            throw new KiException(problem.get(), (KiTable.Status) null);
        }
    }

    /**
     * Runs the MSCCL-IR kernel interpreter ({@code gds_msccl_interpreter}) once and waits for it: every rank of the
     * program in one cooperative launch on this GPU, one CUDA block per thread block. The table image and the arena
     * are copied to device memory of their own (on the executor's stream, so the kernel sees them), the kernel runs,
     * and the arena comes back into {@code arena}: the ranks' outputs lie where the table's layout says.
     *
     * <p>Every wait of the kernel gives up after {@code spinLimit} polls (about 100 ns apart) and records the step in
     * its block's status; this call then throws, naming rank, thread block and step of each block that gave up. If
     * the kernel has not ended within {@code timeout} this call throws too; the kernel's device memory is then kept
     * until the executor closes.
     *
     * @param table           the checked table (its image's block records receive the run's status words); a table
     *                        may be run again, with a fresh arena or one whose flags and semaphores were reset
     * @param arena           the arena's host image, {@code table.arenaBytes()} bytes: the inputs written, every flag,
     *                        acknowledgement word and semaphore 0 (or below the run's epoch); receives the arena
     * @param threadsPerBlock threads of each block, 1..1024
     * @param spinLimit       polls before a wait gives up, {@code >= 1}
     * @param timeout         how long to wait for the kernel to end
     * @throws IllegalArgumentException if the arena or a bound does not fit
     * @throws KiException              if the grid cannot be co-resident on this GPU, a block gave up, the kernel did
     *                                  not end in time, or the driver failed (the message says which)
     */
    public void runMscclInterpreter(MscclKernelTable table, MemorySegment arena, int threadsPerBlock, long spinLimit,
                                    Duration timeout) {
        LaunchChecks.msccl(table, arena, threadsPerBlock, spinLimit, timeout);
        KernelAbi.Signature kernel = KernelAbi.MSCCL_INTERPRETER;
        synchronized (this) {
            requireOpen();
            context.makeCurrent();
            requireCoResident(kernel, table.blocks(), threadsPerBlock, "run a program with fewer thread blocks, or "
                    + "fewer threads per block");
            table.clearStatuses();
            MemorySegment image = table.image();
            long deviceTable = CudaMemory.allocate(context, image.byteSize());
            long deviceArena;
            try {
                deviceArena = CudaMemory.allocate(context, arena.byteSize());
            } catch (RuntimeException e) {
                CudaMemory.free(context, deviceTable);
                throw e;
            }
            boolean ended = false;
            CUevent event = new CUevent();
            try {
                CudaException.check(JCudaDriver.cuMemcpyHtoDAsync(CudaPointers.device(deviceTable),
                        CudaPointers.host(image.address()), image.byteSize(), stream), "cuMemcpyHtoDAsync(table)");
                CudaException.check(JCudaDriver.cuMemcpyHtoDAsync(CudaPointers.device(deviceArena),
                        CudaPointers.host(arena.address()), arena.byteSize(), stream), "cuMemcpyHtoDAsync(arena)");
                KernelArgs args = KernelArgs.of(kernel, deviceTable, deviceTable + table.tbsOffset(),
                        deviceTable + table.stepsOffset(), deviceArena, spinLimit);
                CudaException.check(JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING),
                        "cuEventCreate");
                String call = "cuLaunchCooperativeKernel(" + args + ", grid " + table.blocks() + ", block "
                        + threadsPerBlock + ")";
                int rc = JCudaDriver.cuLaunchCooperativeKernel(functions.get(kernel), table.blocks(), 1, 1,
                        threadsPerBlock, 1, 1, 0, stream, args.pack());
                if (rc != CudaResults.SUCCESS) {
                    CudaException cause = CudaException.of(rc, call);
                    throw new KiException(kernel.label() + " on " + name + " could not be launched: "
                            + cause.getMessage(), cause);
                }
                CudaException.check(JCudaDriver.cuEventRecord(event, stream), "cuEventRecord after " + call);
                awaitEvent(event, kernel, timeout, spinLimit);
                ended = true;
                CudaException.check(JCudaDriver.cuMemcpyDtoH(CudaPointers.host(arena.address()),
                        CudaPointers.device(deviceArena), arena.byteSize()), "cuMemcpyDtoH(arena)");
                MemorySegment tbs = image.asSlice(table.tbsOffset(), (long) MscclTableLayout.TB_BYTES * table.blocks());
                CudaException.check(JCudaDriver.cuMemcpyDtoH(CudaPointers.host(tbs.address()),
                        CudaPointers.device(deviceTable + table.tbsOffset()), tbs.byteSize()), "cuMemcpyDtoH(tbs)");
                List<String> failures = table.failures(tbs);
                if (!failures.isEmpty()) {
                    throw new KiException(kernel.label() + " on " + name + ": " + String.join("; ", failures)
                            + " (every wait gives up after spin_limit " + spinLimit + " polls: a dependency cycle, a "
                            + "lost peer block, or a spin limit too small for the run)", (KiTable.Status) null);
                }
            } finally {
                if (ended || JCudaDriver.cuStreamQuery(stream) == CudaResults.SUCCESS) {
                    CudaMemory.free(context, deviceArena);
                    CudaMemory.free(context, deviceTable);
                } else {
                    abandoned.add(deviceArena);
                    abandoned.add(deviceTable);
                }
                JCudaDriver.cuEventDestroy(event);
            }
        }
    }

    /** Polls the event with backoff until it is reached, the driver reports an error, or the timeout passes. */
    private void awaitEvent(CUevent event, KernelAbi.Signature kernel, Duration timeout, long spinLimit) {
        long deadline = System.nanoTime() + timeout.toNanos();
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.LOW_LATENCY);
        while (true) {
            int rc = JCudaDriver.cuEventQuery(event);
            if (rc == CudaResults.SUCCESS) {
                return;
            }
            if (rc != CudaResults.NOT_READY) {
                CudaException cause = CudaException.of(rc, "cuEventQuery after " + kernel.function());
                throw new KiException(kernel.label() + " on " + name + " failed: " + cause.getMessage(), cause);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new KiException(kernel.label() + " on " + name + " had not ended after " + timeout + "; it is "
                        + "still running (each of its waits gives up after spin_limit " + spinLimit + " polls) and its "
                        + "device memory is kept until the executor closes", (KiTable.Status) null);
            }
            idler.idle();
        }
    }

    /** Called with the lock held, the context current and the arguments written. */
    private CudaLaunch launch(KernelAbi.Signature kernel, KiTable table, KernelArgs args, int grid, int block,
                              boolean cooperative, ScratchPool.Block scratchBlock) {
        CUevent event = new CUevent();
        CudaException.check(JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        table.clearStatusForLaunch();
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
            if (rc == CudaResults.SUCCESS) {
                for (long a : abandoned) {
                    CudaMemory.free(context, a);
                }
            }
            abandoned.clear();
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
