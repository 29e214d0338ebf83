package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.concurrent.AgentThread;
import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.Descriptors;
import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.gdsync.stream.StreamFailedException;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.JCudaDriver;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

// Why this file is long: one CUDA stream's whole contract lives here (posting with the order checks, batching memops
// into driver calls, host tasks, events, the monitor agent and the bounded synchronize), all on the stream's own
// state; the translation and the address map are already their own classes.
/**
 * A CUDA stream that triggers network work and waits for it by itself: memops become CUDA stream memory
 * operations, host tasks become host functions, events become CUDA events.
 *
 * <p>The stream is a non-blocking {@code CUstream} of its own in a {@link CudaContext}. Memops name host
 * memory; a {@link CudaAddressMap} gives the device address of each word, registering its segment on first
 * use. {@link MemopTranslator} turns a batch into driver operations for this GPU's {@link CudaCapabilities};
 * runs of them go to the driver in one {@code cuStreamBatchMemOp_v2} call per 255 (an FFM downcall: JCuda does
 * not support that call), or one {@code cuStreamWriteValue32/64} / {@code cuStreamWaitValue32/64} call each
 * (JCuda) where batches cannot be used or a run holds one operation.
 *
 * <p>A doorbell the stream writes is rung by a plain store, as a GPU rings it: there is no call to the
 * provider. {@link #post(List)} therefore announces each send to its provider
 * ({@link dev.gdasync.gdsync.nic.SendRequest#expectPlainStoreRing()}), after the same order checks as
 * {@link dev.gdasync.gdsync.stream.HostStream} ({@link Descriptors}).
 *
 * <p>Completion is watched by one monitor thread per stream ({@code gdasync-cuda-stream-<name>}), an agent
 * ({@link AgentThread}) whose duty cycle polls the stream's CUDA events in order; it idles with the wait
 * policy's spin-yield-park backoff while any is pending and parks otherwise. It completes the stream's
 * {@link Event}s, and fails the stream when the driver reports an error or when nothing progressed (no event
 * reached, no host task started or ended) for the wait policy's timeout. {@link #synchronize()} polls
 * {@code cuStreamQuery} under the same bound, so neither ever waits forever; the timeout's message says what
 * the stream still had queued.
 *
 * <p>A failed stream stays failed: later calls throw {@link StreamFailedException} with the first cause, its
 * pending events fail, and host work it still has queued (tasks, host copies) is skipped. Memops the GPU
 * already has cannot be taken back; they still run. {@link #close()} fails the pending events, drops queued
 * host work and destroys the stream; the GPU finishes what it was given, as {@code cuStreamDestroy} lets it,
 * and memory the stream owns stays allocated and registered when the stream had not drained.
 */
public final class CudaStream implements Stream {
    private static final long IDLE_PARK_NANOS = 50_000_000;
    /** Pending CUDA events of every CUDA stream, for {@link #waitEvent} across streams. */
    private static final Map<Event, Pending> PENDING = new ConcurrentHashMap<>();
    /** The stream whose host task the current (driver) thread runs. */
    private static final ThreadLocal<CudaStream> RUNNING_TASK = new ThreadLocal<>();

    private final String name;
    private final CudaContext context;
    private final CudaAddressMap map;
    private final boolean ownsMap;
    private final WaitPolicy policy;
    private final StreamCalls calls;
    private final StreamHandle handle;
    private final long raw;
    private final CudaCapabilities caps;
    private final ScratchWords scratch;
    private final MemopTranslator translator;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment params;
    private final ReentrantLock submit = new ReentrantLock();
    /** Read-held around queries from any thread; write-held while the stream is destroyed. */
    private final ReentrantReadWriteLock life = new ReentrantReadWriteLock();
    private final Object reaping = new Object();
    private final ConcurrentLinkedDeque<Pending> pending = new ConcurrentLinkedDeque<>();
    private final QueuedWork queued = new QueuedWork();
    private final Set<Long> hostTokens = ConcurrentHashMap.newKeySet();
    private final AgentThread monitor;
    /** Guarded by {@link #submit}. */
    private long tickets;
    private volatile long lastProgress = System.nanoTime();
    private volatile Throwable failure;
    private volatile boolean closing;
    private volatile boolean torn;

    /** A CUDA event the stream recorded and the monitor has not seen reached yet. */
    private static final class Pending {
        final CUevent event;
        final Event.Completer completer;
        final Runnable onReached;
        final long ticket;
        final long recordedAt = System.nanoTime();
        /** Guarded by {@code this}: the CUDA event is destroyed. */
        boolean released;

        Pending(CUevent event, Event.Completer completer, Runnable onReached, long ticket) {
            this.event = event;
            this.completer = completer;
            this.onReached = onReached;
            this.ticket = ticket;
        }
    }

    private CudaStream(String name, CudaContext context, CudaAddressMap map, boolean ownsMap, WaitPolicy policy) {
        this.name = Objects.requireNonNull(name, "name must not be null");
        this.context = Objects.requireNonNull(context, "context must not be null");
        this.policy = Objects.requireNonNull(policy, "policy must not be null");
        this.map = map;
        this.ownsMap = ownsMap;
        this.calls = StreamCalls.get();
        context.makeCurrent();
        this.handle = new StreamHandle();
        CudaException.check(JCudaDriver.cuStreamCreate(handle, MemopCodes.STREAM_NON_BLOCKING),
                "cuStreamCreate for CUDA stream '" + name + "'");
        this.raw = handle.address();
        ScratchWords words = null;
        try {
            this.caps = readCapabilities(context.device(), calls, raw);
            caps.require();
            words = new ScratchWords(context, name);
            this.scratch = words;
            long fence = scratch.deviceAddressOf(scratch.fence());
            DeviceAddressMap addresses = word -> {
                long d = scratch.deviceAddressOf(word);
                return d >= 0 ? d : map.addressOf(word);
            };
            this.translator = new MemopTranslator(caps, addresses, fence);
            this.params = arena.allocate(MemopCodes.MAX_BATCH * BatchParams.SIZE, 8);
        } catch (RuntimeException | Error e) {
            JCudaDriver.cuStreamDestroy(handle);
            if (words != null) {
                words.close();
            }
            arena.close();
            throw e;
        }
        this.monitor = AgentThread.start(new Monitor(), new MonitorIdle());
    }

    /**
     * Creates a stream with the default wait policy and an address map of its own, closed with the stream.
     *
     * @param name    the stream's name
     * @param context the context to create it in
     * @return the stream
     * @throws NullPointerException if the name or the context is null
     * @throws CudaException if the driver refuses, or the GPU's streams cannot run memops (the message says
     *                       what to do, e.g. that memops are disabled in the driver)
     */
    public static CudaStream create(String name, CudaContext context) {
        Objects.requireNonNull(name, "name must not be null");
        Objects.requireNonNull(context, "context must not be null");
        return new CudaStream(name, context, new CudaAddressMap(context), true, WaitPolicy.defaults());
    }

    /**
     * Creates a stream.
     *
     * @param name    the stream's name
     * @param context the context to create it in
     * @param map     the address map that names host memory for the GPU; the caller keeps and closes it (share
     *                one per context: a host range is registered once)
     * @param policy  the wait policy: its timeout bounds {@link #synchronize()} and the monitor
     * @return the stream
     * @throws NullPointerException if an argument is null
     * @throws CudaException if the driver refuses, or the GPU's streams cannot run memops
     */
    public static CudaStream create(String name, CudaContext context, CudaAddressMap map, WaitPolicy policy) {
        Objects.requireNonNull(name, "name must not be null");
        Objects.requireNonNull(context, "context must not be null");
        Objects.requireNonNull(policy, "policy must not be null");
        return new CudaStream(name, context, Objects.requireNonNull(map, "map must not be null"), false, policy);
    }

    /**
     * Reads what the device and driver support, and probes the batch call with zero operations on a stream.
     *
     * @param device the device
     * @param calls  the FFM calls
     * @param stream the raw stream handle to probe on
     * @return the capabilities
     */
    static CudaCapabilities readCapabilities(CudaDevice device, StreamCalls calls, long stream) {
        int probe = calls.hasBatch() ? calls.batch(stream, 0, MemorySegment.NULL) : CudaException.NO_RESULT;
        return CudaCapabilities.decide(device.name() + " (device " + device.ordinal() + ")", CudaDriver.open().version(),
                attribute(device, MemopCodes.ATTR_STREAM_MEM_OPS_V1),
                attribute(device, MemopCodes.ATTR_64_BIT_STREAM_MEM_OPS),
                attribute(device, MemopCodes.ATTR_STREAM_WAIT_VALUE_NOR),
                attribute(device, MemopCodes.ATTR_FLUSH_REMOTE_WRITES), calls.hasBatch(), probe);
    }

    /** An attribute this driver does not know counts as 0 (unsupported). */
    private static int attribute(CudaDevice device, int attribute) {
        try {
            return device.attribute(attribute);
        } catch (CudaException e) {
            return 0;
        }
    }

    @Override
    public String name() {
        return name;
    }

    /** @return what the GPU lets this stream do, read when it was created */
    public CudaCapabilities capabilities() {
        return caps;
    }

    /** @return the stream's wait policy */
    public WaitPolicy policy() {
        return policy;
    }

    /** @return the context the stream runs in */
    public CudaContext context() {
        return context;
    }

    /** @return the map that gives the device addresses of memop words */
    public CudaAddressMap addressMap() {
        return map;
    }

    @Override
    public Throwable failure() {
        return failure;
    }

    @Override
    public boolean isClosed() {
        return closing;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Write64 doorbell hooks are not called: the GPU rings by the store. Memory the words live in is
     * registered with CUDA on first use.
     *
     * @throws IllegalArgumentException if this GPU cannot execute a memop of the batch (a NOR wait without NOR
     *                                  support, a 64-bit wait without 64-bit memops); nothing is queued
     * @throws CudaException            if registering the words' memory fails; nothing is queued
     */
    @Override
    public void post(MemopBatch batch) {
        Objects.requireNonNull(batch, "batch must not be null");
        submit.lock();
        try {
            requireUsable();
            List<DriverOp> ops = translator.translate(batch);
            queued.addAll(ticket(), batch);
            enqueue(ops);
        } finally {
            submit.unlock();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Each send is announced to its provider as a plain-store ring once queued, and each CQ wait as a wait by an
     * executor that cannot progress the provider.
     *
     * @throws IllegalArgumentException if this GPU cannot execute one of the memops; nothing is queued or posted
     */
    @Override
    public void post(List<? extends Descriptor> descriptors) {
        Objects.requireNonNull(descriptors, "descriptors must not be null");
        submit.lock();
        try {
            requireUsable();
            Descriptors.checkPost(descriptors, this);
            MemopBatch batch = Descriptors.translate(descriptors);
            List<DriverOp> ops = translator.translate(batch);
            queued.addAll(ticket(), batch);
            enqueue(ops);
            Descriptors.markPosted(descriptors, this);
            for (Descriptor d : descriptors) {
                if (d instanceof Descriptor.Send s) {
                    s.request().expectPlainStoreRing();
                } else if (d instanceof Descriptor.Wait w) {
                    w.request().expectExternalWait();
                }
            }
        } finally {
            submit.unlock();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>The task runs on a driver thread, as a host function ({@code cuLaunchHostFunc}) that holds later work
     * of the stream until it returns. It must not call CUDA, so it must not post to a CUDA stream either. An
     * exception it throws fails the stream; a task still queued when the stream failed or closed is skipped.
     */
    @Override
    public void launch(Runnable task) {
        Objects.requireNonNull(task, "task must not be null");
        submit.lock();
        try {
            requireUsable();
            queued.add(ticket(), "host task " + task);
            launchHost(() -> runTask(task), "host task");
        } finally {
            submit.unlock();
        }
    }

    /**
     * Queues a kernel launch ({@code cuLaunchKernel}, one-dimensional grid and blocks), in order with the
     * stream's memops, host tasks and events.
     *
     * @param function    the kernel, from a module loaded in this stream's context
     * @param gridX       blocks, {@code > 0}
     * @param blockX      threads per block, {@code > 0}
     * @param sharedBytes dynamic shared memory per block, {@code >= 0}
     * @param params      the kernel's parameters, as {@code cuLaunchKernel} takes them
     * @param what        what the kernel does, for timeout messages
     * @throws NullPointerException     if the function, the parameters or the description is null
     * @throws IllegalArgumentException if a dimension is not positive; nothing is queued
     * @throws StreamFailedException    if the driver refuses (the stream then fails) or the stream failed
     */
    public void launchKernel(CUfunction function, int gridX, int blockX, int sharedBytes, Pointer params, String what) {
        Objects.requireNonNull(function, "function must not be null");
        Objects.requireNonNull(params, "params must not be null");
        Objects.requireNonNull(what, "what must not be null");
        if (gridX <= 0 || blockX <= 0 || sharedBytes < 0) {
            throw new IllegalArgumentException("kernel " + what + ": grid " + gridX + ", block " + blockX + ", shared "
                    + sharedBytes + " bytes: grid and block must be positive, shared memory not negative");
        }
        submit.lock();
        try {
            requireUsable();
            context.makeCurrent();
            check(JCudaDriver.cuLaunchKernel(function, gridX, 1, 1, blockX, 1, 1, sharedBytes, handle, params, null),
                    "cuLaunchKernel (" + what + ")");
            queued.add(ticket(), "kernel " + what);
        } finally {
            submit.unlock();
        }
    }

    /**
     * Queues a copy from host memory to device memory ({@code cuMemcpyHtoDAsync}), in order with the stream's
     * other work. The host memory must stay mapped, and unchanged, until the stream has passed the copy; it
     * should be page-locked (registered) for the copy to be asynchronous.
     *
     * @param deviceAddress the device address of the first byte written
     * @param src           native host memory; all of it is copied
     * @throws NullPointerException     if {@code src} is null
     * @throws IllegalArgumentException if {@code src} is not native memory; nothing is queued
     * @throws StreamFailedException    if the driver refuses (the stream then fails) or the stream failed
     */
    public void copyHostToDevice(long deviceAddress, MemorySegment src) {
        requireNative(Objects.requireNonNull(src, "src must not be null"));
        submit.lock();
        try {
            requireUsable();
            context.makeCurrent();
            check(JCudaDriver.cuMemcpyHtoDAsync(CudaPointers.device(deviceAddress), CudaPointers.host(src.address()),
                    src.byteSize(), handle), "cuMemcpyHtoDAsync of " + src.byteSize() + " bytes");
            queued.add(ticket(), "copy of " + src.byteSize() + " bytes to device 0x" + Long.toHexString(deviceAddress));
        } finally {
            submit.unlock();
        }
    }

    /**
     * Queues a copy from device memory to host memory ({@code cuMemcpyDtoHAsync}), in order with the stream's
     * other work: a host task or an event after it sees the bytes.
     *
     * @param dst           native host memory; all of it is written
     * @param deviceAddress the device address of the first byte read
     * @throws NullPointerException     if {@code dst} is null
     * @throws IllegalArgumentException if {@code dst} is not native memory; nothing is queued
     * @throws StreamFailedException    if the driver refuses (the stream then fails) or the stream failed
     */
    public void copyDeviceToHost(MemorySegment dst, long deviceAddress) {
        requireNative(Objects.requireNonNull(dst, "dst must not be null"));
        submit.lock();
        try {
            requireUsable();
            context.makeCurrent();
            check(JCudaDriver.cuMemcpyDtoHAsync(CudaPointers.host(dst.address()), CudaPointers.device(deviceAddress),
                    dst.byteSize(), handle), "cuMemcpyDtoHAsync of " + dst.byteSize() + " bytes");
            queued.add(ticket(), "copy of " + dst.byteSize() + " bytes from device 0x" + Long.toHexString(deviceAddress));
        } finally {
            submit.unlock();
        }
    }

    private static void requireNative(MemorySegment segment) {
        if (!segment.isNative() || segment.byteSize() == 0) {
            throw new IllegalArgumentException("a copy needs native host memory of at least one byte, got " + segment);
        }
    }

    @Override
    public Event record() {
        submit.lock();
        try {
            requireUsable();
            Event.Completer completer = Event.pending(name);
            Pending p = recordEvent(completer, null, "event");
            PENDING.put(completer.event(), p);
            return completer.event();
        } finally {
            submit.unlock();
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>An event of a CUDA stream still pending becomes {@code cuStreamWaitEvent}. Any other pending event (a
     * host stream's) becomes a 32-bit wait on a pinned word of this stream that the event's completion sets. An
     * event that failed, now or later, fails this stream, as with a host stream.
     */
    @Override
    public void waitEvent(Event event) {
        Objects.requireNonNull(event, "event must not be null");
        submit.lock();
        try {
            requireUsable();
            if (!event.isDone()) {
                Pending p = PENDING.get(event);
                if (p != null) {
                    synchronized (p) {
                        if (!p.released) {
                            check(JCudaDriver.cuStreamWaitEvent(handle, p.event, 0), "cuStreamWaitEvent");
                            queued.add(ticket(), "wait for " + event);
                            return;
                        }
                    }
                } else {
                    waitOnWord(event);
                    return;
                }
            }
            if (event.failure() != null) {
                fail(waitedForFailed(event));
            }
        } finally {
            submit.unlock();
        }
    }

    /** Queues a wait on a scratch word that the event's end sets, and frees the word once the stream passed. */
    private void waitOnWord(Event event) {
        MemoryWord word = scratch.acquire();
        Memop.Wait32 wait = new Memop.Wait32(word, 1, WaitCondition.EQ);
        List<DriverOp> ops = translator.translate(MemopBatch.of(wait));
        long t = ticket();
        queued.add(t, "wait for " + event + " (" + QueuedWork.describe(wait) + ")");
        enqueue(ops);
        recordEvent(null, () -> scratch.release(word), "word release");
        event.whenDone(() -> {
            if (event.failure() != null) {
                fail(waitedForFailed(event));
            }
            word.set32(1, true);
        });
    }

    private IllegalStateException waitedForFailed(Event event) {
        return new IllegalStateException("CUDA stream '" + name + "' waited for " + event + ", whose stream failed",
                event.failure());
    }

    /**
     * {@inheritDoc}
     *
     * <p>Polls {@code cuStreamQuery} with the wait policy's backoff. When nothing progressed for the policy's
     * timeout, the stream fails with a {@link CudaStreamTimeoutException} that lists what it still had queued.
     *
     * @throws IllegalStateException if the stream is closed
     */
    @Override
    public void synchronize() {
        requireUsable();
        context.makeCurrent();
        BackoffIdler idler = new BackoffIdler(policy.backoff());
        long start = System.nanoTime();
        for (;;) {
            Throwable f = failure;
            if (f != null) {
                throw new StreamFailedException(name, f);
            }
            int rc = query();
            if (rc == CudaResults.SUCCESS) {
                break;
            }
            if (rc != CudaResults.NOT_READY) {
                fail(CudaException.of(rc, "cuStreamQuery on CUDA stream '" + name + "'"));
                continue;
            }
            long since = Math.max(start, lastProgress);
            long now = System.nanoTime();
            if (now - since >= policy.timeoutNanos()) {
                fail(timeout(now - since));
                continue;
            }
            idler.idle();
        }
        reap();
        Throwable f = failure;
        if (f != null) {
            throw new StreamFailedException(name, f);
        }
    }

    /** {@code cuStreamQuery}, unless the stream was destroyed meanwhile. */
    private int query() {
        life.readLock().lock();
        try {
            if (torn) {
                throw new IllegalStateException("CUDA stream '" + name + "' was closed");
            }
            return JCudaDriver.cuStreamQuery(handle);
        } finally {
            life.readLock().unlock();
        }
    }

    private CudaStreamTimeoutException timeout(long waited) {
        return new CudaStreamTimeoutException("CUDA stream '" + name + "' made no progress for " + waited / 1_000_000
                + " ms (the wait policy's timeout is " + policy.timeoutNanos() / 1_000_000 + " ms); still queued, "
                + "oldest first: " + queued.describe());
    }

    // ---------------------------------------------------------------------------------------------------
    // Submission (under the submit lock)

    private long ticket() {
        return ++tickets;
    }

    private void requireUsable() {
        if (closing) {
            throw new IllegalStateException("CUDA stream '" + name + "' is closed");
        }
        Throwable f = failure;
        if (f != null) {
            throw new StreamFailedException(name, f);
        }
    }

    /** Hands operations to the driver in order: runs of memops in batches or single calls, host copies apart. */
    private void enqueue(List<DriverOp> ops) {
        context.makeCurrent();
        int n = ops.size();
        int i = 0;
        while (i < n) {
            DriverOp first = ops.get(i);
            if (!first.kind().isMemop()) {
                hostCopy(first);
                i++;
                continue;
            }
            int j = i;
            while (j < n && ops.get(j).kind().isMemop()) {
                j++;
            }
            if (caps.batchMemop() && (j - i > 1 || first.kind() == DriverOp.Kind.BARRIER)) {
                for (int k = i; k < j; k += MemopCodes.MAX_BATCH) {
                    int end = Math.min(j, k + MemopCodes.MAX_BATCH);
                    MemorySegment p = BatchParams.encode(ops, k, end, params);
                    check(calls.batch(raw, end - k, p), "cuStreamBatchMemOp_v2 of " + (end - k) + " operations");
                }
            } else {
                for (int k = i; k < j; k++) {
                    single(ops.get(k));
                }
            }
            i = j;
        }
    }

    private void single(DriverOp op) {
        CUdeviceptr at = new CUdeviceptr().withByteOffset(op.address());
        switch (op.kind()) {
            case WRITE_VALUE_32 -> check(JCudaDriver.cuStreamWriteValue32(handle, at, (int) op.value(), op.flags()),
                    "cuStreamWriteValue32");
            case WRITE_VALUE_64 -> check(JCudaDriver.cuStreamWriteValue64(handle, at, op.value(), op.flags()),
                    "cuStreamWriteValue64");
            case WAIT_VALUE_32 -> check(JCudaDriver.cuStreamWaitValue32(handle, at, (int) op.value(), op.flags()),
                    "cuStreamWaitValue32");
            case WAIT_VALUE_64 -> check(JCudaDriver.cuStreamWaitValue64(handle, at, op.value(), op.flags()),
                    "cuStreamWaitValue64");
            default -> throw new IllegalStateException(op + " needs cuStreamBatchMemOp, which this stream cannot use");
        }
    }

    /** A driver call that queued work failed: the stream may hold part of a submission, so it fails. */
    private void check(int rc, String call) {
        if (rc == CudaResults.SUCCESS) {
            return;
        }
        String what = call + " on CUDA stream '" + name + "'";
        CudaException e = rc == MemopCodes.ERROR_NOT_SUPPORTED
                ? new CudaException(what + " failed with " + CudaResults.name(rc) + ": " + CudaCapabilities.DISABLED, rc)
                : CudaException.of(rc, what);
        fail(e);
        throw new StreamFailedException(name, e);
    }

    private void hostCopy(DriverOp op) {
        Memop.WriteMemory w = (Memop.WriteMemory) op.source();
        byte[] data = w.data();
        launchHost(() -> {
            if (failure == null && !closing) {
                MemorySegment.copy(MemorySegment.ofArray(data), 0, w.target(), w.offset(), data.length);
            }
        }, "host copy for WRITE_MEMORY");
    }

    private void launchHost(Runnable body, String what) {
        long[] token = new long[1];
        token[0] = StreamCalls.register(() -> {
            hostTokens.remove(token[0]);
            body.run();
        });
        hostTokens.add(token[0]);
        int rc = calls.launchHostFunc(raw, token[0]);
        if (rc != CudaResults.SUCCESS) {
            StreamCalls.cancel(token[0]);
            hostTokens.remove(token[0]);
            check(rc, "cuLaunchHostFunc (" + what + ")");
        }
    }

    /** Runs a host task on the driver's thread; nothing may escape to the upcall. */
    private void runTask(Runnable task) {
        lastProgress = System.nanoTime();
        RUNNING_TASK.set(this);
        try {
            if (failure == null && !closing) {
                task.run();
            }
        } catch (Throwable t) {
            fail(t);
        } finally {
            RUNNING_TASK.remove();
            lastProgress = System.nanoTime();
        }
    }

    private Pending recordEvent(Event.Completer completer, Runnable onReached, String what) {
        CUevent event = new CUevent();
        check(JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        int rc = JCudaDriver.cuEventRecord(event, handle);
        if (rc != CudaResults.SUCCESS) {
            JCudaDriver.cuEventDestroy(event);
            check(rc, "cuEventRecord");
        }
        long t = ticket();
        queued.add(t, what);
        Pending p = new Pending(event, completer, onReached, t);
        pending.add(p);
        monitor.wake();
        return p;
    }

    /** Records the first failure and wakes the monitor, which fails the pending events. Safe on any thread. */
    private void fail(Throwable cause) {
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failure = cause;
        }
        AgentThread m = monitor; // null while the constructor has not started it
        if (m != null) {
            m.wake();
        }
    }

    // ---------------------------------------------------------------------------------------------------
    // Completion (monitor thread, and synchronize)

    /** The monitor: each duty cycle completes the events reached, or fails the stream when it stalled. */
    private final class Monitor implements Agent {
        @Override
        public String roleName() {
            return "gdasync-cuda-stream-" + name;
        }

        @Override
        public void onStart() {
            try {
                context.makeCurrent();
            } catch (RuntimeException e) {
                fail(e);
            }
        }

        @Override
        public int doWork() {
            if (closing) {
                throw new AgentTerminationException("CUDA stream '" + name + "' closed", true);
            }
            boolean progressed = reap();
            Pending head = pending.peek();
            if (head == null) {
                return 0; // MonitorIdle parks until an event is recorded
            }
            if (progressed) {
                return 1;
            }
            long since = Math.max(lastProgress, head.recordedAt);
            long now = System.nanoTime();
            if (now - since >= policy.timeoutNanos()) {
                fail(timeout(now - since));
                return 1; // the next cycle fails the pending events
            }
            return 0;
        }

        /** The monitor's last act: {@code tearDown()}. */
        @Override
        public void onClose() {
            tearDown();
        }
    }

    /**
     * How the monitor idles: with the wait policy's backoff while an event is pending; otherwise it parks
     * until an event is recorded, the stream fails or it closes (each unparks it), at most
     * {@code IDLE_PARK_NANOS} at a time.
     */
    private final class MonitorIdle implements IdleStrategy {
        private final BackoffIdler backoff = new BackoffIdler(policy.backoff());

        @Override
        public void idle(int workCount) {
            if (workCount > 0) {
                backoff.reset();
            } else {
                idle();
            }
        }

        @Override
        public void idle() {
            if (pending.isEmpty()) {
                backoff.reset();
                LockSupport.parkNanos(this, IDLE_PARK_NANOS);
            } else {
                backoff.idle();
            }
        }

        @Override
        public void reset() {
            backoff.reset();
        }
    }

    /**
     * Completes the events the stream reached, in order; fails all when the stream failed.
     *
     * @return whether an event was reached or failed
     */
    private boolean reap() {
        synchronized (reaping) {
            if (torn) {
                return false;
            }
            Throwable f = failure;
            if (f != null) {
                return failAll(f);
            }
            boolean any = false;
            for (Pending p; (p = pending.peek()) != null; ) {
                int rc = JCudaDriver.cuEventQuery(p.event);
                if (rc == CudaResults.NOT_READY) {
                    break;
                }
                if (rc != CudaResults.SUCCESS) {
                    fail(CudaException.of(rc, "cuEventQuery on CUDA stream '" + name + "'"));
                    return failAll(failure) || any;
                }
                if (failure != null) {
                    // The failure came first (a host task before this event threw): the event fails too.
                    return failAll(failure) || any;
                }
                pending.poll();
                lastProgress = System.nanoTime();
                queued.reachedBefore(p.ticket + 1);
                if (p.onReached != null) {
                    p.onReached.run();
                }
                if (p.completer != null) {
                    p.completer.complete();
                }
                release(p);
                any = true;
            }
            return any;
        }
    }

    /** Fails every pending event (guarded by {@link #reaping}). */
    private boolean failAll(Throwable why) {
        boolean any = false;
        for (Pending p; (p = pending.poll()) != null; ) {
            if (p.completer != null) {
                p.completer.fail(why);
            }
            release(p);
            any = true;
        }
        return any;
    }

    private void release(Pending p) {
        synchronized (p) {
            p.released = true;
            if (p.completer != null) {
                PENDING.remove(p.completer.event());
            }
            JCudaDriver.cuEventDestroy(p.event);
        }
    }

    /** The monitor's last act: fails what is pending, drops host work, destroys the stream, frees memory. */
    private void tearDown() {
        submit.lock();
        try {
            synchronized (reaping) {
                reapQuietly();
                Throwable f = failure;
                failAll(f != null ? f : new IllegalStateException("CUDA stream '" + name + "' was closed"));
                torn = true;
            }
            for (Long token : hostTokens) {
                StreamCalls.cancel(token);
            }
            hostTokens.clear();
            boolean drained;
            life.writeLock().lock();
            try {
                drained = JCudaDriver.cuStreamQuery(handle) == CudaResults.SUCCESS;
                JCudaDriver.cuStreamDestroy(handle);
            } finally {
                life.writeLock().unlock();
            }
            arena.close();
            if (drained) {
                scratch.close();
                if (ownsMap) {
                    map.close();
                }
            }
        } catch (RuntimeException e) {
            fail(e);
        } finally {
            submit.unlock();
        }
    }

    /** Completes the events already reached before close fails the rest. */
    private void reapQuietly() {
        if (failure == null) {
            try {
                reap();
            } catch (RuntimeException e) {
                // the rest fails below
            }
        }
    }

    /**
     * Stops the stream: pending events fail, host tasks and host copies not yet run are dropped, and the CUDA
     * stream is destroyed. The GPU still finishes the memops it was given (as {@code cuStreamDestroy} lets it);
     * memory the stream owns is freed only if the stream had drained, since the GPU may still use it. Closing
     * twice does nothing. Called from a host task of this stream, it returns at once and the monitor finishes.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
        }
        if (!submit.isHeldByCurrentThread() && !onHostTask()) {
            monitor.close(); // returns at once on the monitor's own thread
        } else {
            monitor.wake();
        }
    }

    /** @return whether the calling thread is running a host task of this stream */
    private boolean onHostTask() {
        return RUNNING_TASK.get() == this;
    }

    @Override
    public String toString() {
        return "CudaStream{" + name + ", " + caps + (failure != null ? ", failed: " + failure : "")
                + (closing ? ", closed" : "") + "}";
    }
}
