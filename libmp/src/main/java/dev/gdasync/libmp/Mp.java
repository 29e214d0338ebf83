package dev.gdasync.libmp;

// Why this file is long: Mp is LibMP's whole public API (mp_init to mp_finalize: two-sided, one-sided, atomics, words,
// streams, descriptor queues, KI exports), some 75 calls whose Javadoc is their contract (about half the file). Their
// bodies live beside it (MpMemory, RequestPosting, StreamForms, OneSidedOps, RequestWaits; MpContext is what those
// share of it), except the point-to-point core, which stays here with no layer between the caller and the peer link
// on its hot path: init and connect, isend/irecv, wait, waitAll, test, progress, the word wait, the job's failure,
// close. The request state, the peer links and the pool are their own classes too.

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.concurrent.CpuShare;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableExecutor;
import dev.gdasync.gdsync.memop.HostMemops;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.memory.RegionKind;
import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.NicProviders;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueueFullException;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.trace.MpFailureEvent;
import dev.gdasync.libmp.bootstrap.BootstrapException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * LibMP in Java: point-to-point and one-sided communication between the ranks of a job, driven by the
 * CPU ({@link #isend}, {@link #irecv}, {@link #wait}), by a stream ({@link #isendOnStream},
 * {@link #waitOnStream}) or by a kernel (KI export through {@link MpKiExport}).
 *
 * <p>{@link #init} connects a queue pair to every other rank over the software NIC; matching is per peer
 * and FIFO, as in LibMP. Every request prepares the wait for its completion when it is posted, so any
 * request can later be waited on by a stream. Buffers live in memory from {@link #allocate}, registered
 * with {@link #register}. An {@code Mp} is driven by one thread at a time.
 *
 * <p>Every call checks its arguments before it changes anything: a null argument (or a null element of a list
 * argument) is a {@link NullPointerException} whose message names the parameter ({@code "reg must not be null"},
 * {@code "bufs[1] must not be null"}; a request parameter is named {@code request}), a stream argument that is
 * closed or failed is refused before a request is taken, and a bad number (a peer that is not another rank, a
 * displacement outside the window) is an {@link IllegalArgumentException} that names it.
 */
public final class Mp implements AutoCloseable {
    /** The LibMP API version this class implements, encoded as LibMP does: {@code major << 16 | minor}. */
    public static final int API_VERSION = 2 << 16;

    private final Bootstrap bootstrap;
    private final MpConfig config;
    private final Nic nic;
    private final PeerLink[] links;
    /** What the classes beside this one know of it: they hold this, never the Mp. */
    private final MpContext context;
    /** The bodies of the calls on memory and registrations. */
    private final MpMemory memory;
    /** Starting requests on the peer links: shared by the two-sided core below, the stream forms and the one-sided. */
    private final RequestPosting posting;
    /** The bodies of the stream and prepared forms of two-sided traffic. */
    private final StreamForms streams;
    /** The bodies of the one-sided calls: windows, puts, gets, atomics. */
    private final OneSidedOps oneSided;
    /** The CPU's waits for completions, and the exceptions of failed requests. */
    private final RequestWaits waits;
    private final Completion completion = new Completion();
    private final WaitPolicy cpuWaits;
    /** What the CPU thread waits for: the idler parks through the NIC, which a delivering peer wakes. */
    private final PeerWait peerWait;
    private final BackoffIdler idler;
    private final RequestPool pool;
    /** This rank's place among the ranks sharing the host's CPUs (oversubscribed: waits yield). */
    private final CpuShare.Seat cpuSeat;
    /** What waits on words run between looks: the NIC's progress, and the end of the wait if the job failed. */
    private final WaitProgress wordWaitProgress = this::progressWordWait;
    /** What holds the two-sided calls' per-peer order ({@link #reserveTwoSided}), or null. */
    private volatile String twoSidedHolder;
    /** What the upper layers run when the job fails ({@link #onJobFailure}). */
    private final JobFailureListeners failureListeners = new JobFailureListeners();

    private Mp(Bootstrap bootstrap, MpConfig config) {
        this.bootstrap = bootstrap;
        this.config = config;
        this.cpuWaits = new WaitPolicy(BackoffPolicy.PEER_WAIT, config.waitTimeout().toNanos());
        this.links = new PeerLink[bootstrap.size()];
        this.context = new MpContext(bootstrap.rank(), links, wordWaitProgress);
        this.pool = new RequestPool(context, config.requestPool());
        this.nic = NicProviders.open(config.nic().withJobId(bootstrap.jobId()));
        this.memory = new MpMemory(context, nic);
        this.posting = new RequestPosting(context, links, pool, config.waitTimeout().toNanos(), this::progress);
        this.streams = new StreamForms(context, posting);
        this.oneSided = new OneSidedOps(context, bootstrap, memory, posting, streams);
        this.peerWait = new PeerWait(nic, links, completion);
        this.idler = new BackoffIdler(BackoffPolicy.PEER_WAIT, peerWait);
        this.waits = new RequestWaits(context, links, completion, peerWait, idler, config.waitTimeout());
        // Before connecting: once every rank connected, every rank of the job is in the CPU share registry.
        this.cpuSeat = CpuShare.join(cpuShareRegistry(), bootstrap.jobId(), bootstrap.rank());
        try {
            connect();
        } catch (RuntimeException e) {
            cpuSeat.close();
            nic.close();
            throw e;
        }
        bootstrap.onFailure(this::jobFailed);
    }

    /**
     * The job failed (the bootstrap says which rank and how): every queue pair fails at once, so outstanding
     * requests complete with errors and streams waiting for them move on; later operations are refused. Runs on
     * a thread of the bootstrap.
     */
    private void jobFailed(String reason) {
        context.jobFailed(reason);
        MpFailureEvent.record(rank(), reason);
        for (PeerLink l : links) {
            if (l != null) {
                l.qp.abort(ErrorDetail.JOB_FAILED);
            }
        }
        failureListeners.failed(reason);
    }

    /**
     * Registers what to run when the job fails (a rank's process gone, a rank that aborted, rank 0 gone): how an
     * upper layer whose waits look only at words in memory (a kernel's waits on the KI executor, a host stream's)
     * ends them at once rather than by their timeout. The listener runs once, with {@link #failure()}'s reason: on
     * a thread of the bootstrap after every queue pair was failed, or at once on this thread if the job failed
     * already. It must be quick and must not block (it runs on the thread that watches the job); it may be called
     * after {@link #close()}, until it is unregistered. Any thread.
     *
     * @param listener what to run; an exception it throws is printed to standard error and otherwise ignored
     * @return the registration: close it when the wait it guards cannot block any more
     * @throws NullPointerException if the listener is null
     */
    public JobFailureSubscription onJobFailure(java.util.function.Consumer<String> listener) {
        Objects.requireNonNull(listener, "listener must not be null");
        return failureListeners.add(listener);
    }

    /** @return job-failure listeners registered and not closed (for tests) */
    int jobFailureListeners() {
        return failureListeners.size();
    }

    /**
     * Joins the job: opens this rank's NIC, connects a queue pair to every other rank through the
     * bootstrap, and waits for every rank to be connected (LibMP's {@code mp_init}, collective).
     *
     * @param bootstrap how the ranks meet; the caller closes it after {@link #close()}
     * @param config    settings
     * @return this rank's endpoint of the job
     */
    public static Mp init(Bootstrap bootstrap, MpConfig config) {
        Objects.requireNonNull(bootstrap, "bootstrap must not be null");
        Objects.requireNonNull(config, "config must not be null");
        return new Mp(bootstrap, config);
    }

    /**
     * Joins the job with {@link MpConfig#defaults()}.
     *
     * @param bootstrap how the ranks meet
     * @return this rank's endpoint of the job
     */
    public static Mp init(Bootstrap bootstrap) {
        Objects.requireNonNull(bootstrap, "bootstrap must not be null");
        return init(bootstrap, MpConfig.defaults());
    }

    private void connect() {
        int me = bootstrap.rank();
        int n = bootstrap.size();
        List<byte[]> mine = new ArrayList<>();
        for (int p = 0; p < n; p++) {
            if (p != me) {
                QueuePair qp = nic.createQueuePair(config.queuePairs());
                links[p] = new PeerLink(p, qp, pool);
                mine.add(qp.endpoint().toBytes());
            } else {
                mine.add(new byte[0]);
            }
        }
        List<byte[]> all = bootstrap.allGather(Framing.join(mine));
        for (int p = 0; p < n; p++) {
            if (p != me) {
                List<byte[]> theirs = Framing.split(all.get(p));
                if (theirs.size() != n) {
                    throw new IllegalStateException("rank " + p + " published " + theirs.size() + " endpoints for a job of " + n);
                }
                links[p].qp.connect(Endpoint.of(theirs.get(me)));
            }
        }
        bootstrap.barrier();
    }

    /** @return this rank */
    public int rank() {
        return bootstrap.rank();
    }

    /** @return the number of ranks */
    public int size() {
        return bootstrap.size();
    }

    /** @return the NIC under this endpoint, from the provider {@link MpConfig#nic()} names */
    public Nic nic() {
        return nic;
    }

    /** @return the request pool's size */
    public int requestPoolSize() {
        return pool.capacity();
    }

    /** @return requests that can be started now */
    public int requestsAvailable() {
        return pool.available();
    }

    // ---- memory ----

    /**
     * Allocates shared memory that can be registered and reached by peers. The segment is exactly {@code bytes}
     * long (the shared-memory file behind it may be rounded up to a whole page; those extra bytes belong to no
     * segment, registration or window).
     *
     * @param bytes the length, {@code > 0}
     * @return the memory, zero-filled, exactly {@code bytes} long
     * @throws IllegalArgumentException     if the length is not positive, or too large to represent (see
     *                                      {@code ShmDirectory.MAX_LENGTH})
     * @throws java.io.UncheckedIOException if the shared-memory file system has less free space than the length
     *                                      (the message names the length, the free space and the directory) or
     *                                      the memory cannot be made; nothing is left allocated
     * @throws IllegalStateException        if this Mp is closed
     */
    public MemorySegment allocate(long bytes) {
        return memory.allocate(bytes);
    }

    /**
     * Frees memory from {@link #allocate}; its registrations end with it.
     *
     * @param memory the segment {@code allocate} returned (all of it, not a slice)
     * @throws NullPointerException     if the memory is null
     * @throws IllegalArgumentException if it did not come from {@code allocate}, was freed already, or is only a
     *                                  part of an allocation; nothing is freed then
     * @throws IllegalStateException    if this Mp is closed
     */
    public void free(MemorySegment memory) {
        this.memory.free(memory);
    }

    /**
     * Finds the allocation a buffer lies in.
     *
     * @param memory memory inside a segment from {@link #allocate} (the segment itself, or a slice of it)
     * @return that whole segment, exactly as long as {@code allocate} was asked
     * @throws NullPointerException     if the memory is null
     * @throws IllegalArgumentException if the memory is not from {@link #allocate}
     * @throws IllegalStateException    if this Mp is closed
     */
    public MemorySegment allocationOf(MemorySegment memory) {
        return this.memory.allocationOf(memory);
    }

    /**
     * Registers memory for communication (LibMP's {@code mp_register}): local writes, remote reads,
     * writes and atomics.
     *
     * @param memory memory inside a segment from {@link #allocate} (the segment itself, or a slice of it), at
     *               least one byte
     * @return the registration
     * @throws NullPointerException     if the memory is null
     * @throws IllegalArgumentException if the memory has no bytes (zero-byte registrations are refused), is a heap
     *                                  segment, or is not inside memory from {@link #allocate}
     * @throws IllegalStateException    if this Mp is closed, or the NIC's registration table is full
     */
    public MpRegistration register(MemorySegment memory) {
        return this.memory.register(memory);
    }

    /**
     * Allocates GPU memory that can be registered and reached by peers (LibMP's buffers from
     * {@code cudaMalloc}): zero-filled device memory that this rank's NIC made through the CUDA layer and can
     * move (the software NIC moves it with CUDA copies and publishes it to the other ranks of the node through
     * CUDA IPC: see {@code docs/swnic-device-memory.md}). Pass its ranges to sends, receives and puts as
     * address-only segments ({@code DeviceRegion.of(region).pointer(offset, length)} in the CUDA layer); the CPU
     * cannot touch its bytes. Closing the Mp frees it.
     *
     * @param device the GPU's ordinal (every device allocation of one Mp is on one GPU)
     * @param bytes  the length, {@code > 0}
     * @return the memory, a {@link RegionKind#DEVICE} region
     * @throws IllegalArgumentException      if the length is not positive, the GPU does not exist, or it is not
     *                                       the Mp's GPU
     * @throws UnsupportedOperationException if this Mp's NIC cannot use GPU memory
     * @throws RuntimeException              the CUDA layer's exception if the driver refuses
     */
    public Region allocateDevice(int device, long bytes) {
        return memory.allocateDevice(device, bytes);
    }

    /**
     * Frees GPU memory from {@link #allocateDevice}; its registrations end with it.
     *
     * @param memory the region {@code allocateDevice} returned
     * @throws IllegalArgumentException if it did not come from {@code allocateDevice} or was freed
     */
    public void free(Region memory) {
        this.memory.free(memory);
    }

    /**
     * Registers a whole GPU allocation for communication (LibMP's {@code mp_register} of device memory).
     * Atomics cannot target it: the software NIC refuses them on GPU memory.
     *
     * @param memory a region from {@link #allocateDevice}
     * @return the registration
     * @throws IllegalArgumentException if the region is not this Mp's, or was freed
     */
    public MpRegistration register(Region memory) {
        return this.memory.register(memory);
    }

    /**
     * Ends a registration.
     *
     * @param reg the registration
     * @throws IllegalArgumentException if it is another Mp's or already deregistered
     */
    public void deregister(MpRegistration reg) {
        memory.deregister(reg);
    }

    // ---- two-sided, CPU ----

    /**
     * Posts a receive of up to {@code buf.byteSize()} bytes from {@code peer}.
     *
     * @param buf  where the message lands
     * @param peer the sender
     * @param reg  a registration containing {@code buf}
     * @return the request, PENDING_NOWAIT
     */
    public MpRequest irecv(MemorySegment buf, int peer, MpRegistration reg) {
        Objects.requireNonNull(buf, "buf must not be null");
        Objects.requireNonNull(reg, "reg must not be null");
        return irecvv(List.of(buf), peer, reg);
    }

    /**
     * Posts a receive that scatters into several buffers of one registration (LibMP's {@code mp_irecvv}).
     *
     * @param bufs the buffers, filled in order (at most 8)
     * @param peer the sender
     * @param reg  a registration containing every buffer
     * @return the request, PENDING_NOWAIT
     */
    public MpRequest irecvv(List<MemorySegment> bufs, int peer, MpRegistration reg) {
        Args.noNulls(bufs, "bufs");
        Objects.requireNonNull(reg, "reg must not be null");
        PeerLink l = posting.link(peer);
        long bytes = posting.checkBuffers(bufs, reg);
        MpRequest r = posting.newRequest(MpRequest.Kind.RECV, peer, bytes, false);
        try {
            l.recvWr.reset().wrId(r.id());
            for (MemorySegment b : bufs) {
                l.recvWr.sge(b.address(), (int) b.byteSize(), reg.region.lkey());
            }
            try {
                l.qp.postRecv(l.recvWr);
            } catch (QueueFullException full) {
                posting.retryFullSlowly(() -> l.qp.postRecv(l.recvWr));
            }
        } catch (RuntimeException e) {
            pool.cancel(r);
            throw e;
        }
        r.posted(l.qp.recvCq(), l.qp.recvCq().reserveWait());
        l.awaitRecv(r);
        return r;
    }

    /**
     * Sends a buffer to {@code peer}; the CPU rings the doorbell now.
     *
     * @param buf  the message
     * @param peer the receiver
     * @param reg  a registration containing {@code buf}
     * @return the request, PENDING_NOWAIT
     */
    public MpRequest isend(MemorySegment buf, int peer, MpRegistration reg) {
        Objects.requireNonNull(buf, "buf must not be null");
        Objects.requireNonNull(reg, "reg must not be null");
        return isendv(List.of(buf), peer, reg);
    }

    /**
     * Sends several buffers of one registration as one message (LibMP's {@code mp_isendv}).
     *
     * @param bufs the buffers, gathered in order (at most 8)
     * @param peer the receiver
     * @param reg  a registration containing every buffer
     * @return the request, PENDING_NOWAIT
     */
    public MpRequest isendv(List<MemorySegment> bufs, int peer, MpRegistration reg) {
        Args.noNulls(bufs, "bufs");
        Objects.requireNonNull(reg, "reg must not be null");
        PeerLink l = posting.link(peer);
        long bytes = posting.checkBuffers(bufs, reg);
        MpRequest r = posting.newRequest(MpRequest.Kind.SEND, peer, bytes, false);
        posting.postSend(l, RequestPosting.sendWr(l, r, Opcode.SEND, SendFlags.SIGNALED, bufs, reg), r);
        r.posted(l.qp.sendCq(), l.qp.sendCq().reserveWait());
        l.awaitSend(r);
        return r;
    }

    // ---- completion ----

    /**
     * Waits for a request to complete and releases it (LibMP's {@code mp_wait}).
     *
     * @param r the request
     * @throws MpException           if it completed with an error or did not complete within the timeout
     * @throws IllegalStateException if it was already released, never posted, or is a NOWAIT put
     */
    public void wait(MpRequest r) {
        Objects.requireNonNull(r, "request must not be null");
        requireWaitable(r);
        PeerLink l = links[r.peer()];
        l.releaseOnCpu(r);
        waits.awaitComplete(l, r);
        pool.release(r);
        waits.throwIfFailed(r, 0);
    }

    /**
     * Waits for every request and releases them all (LibMP's {@code mp_wait_all}). A request that fails is
     * reported as soon as its completion arrives, whatever its position in the list: the requests complete by
     * then are released, and the others stay outstanding (wait for them, or abort the job).
     *
     * @param requests the requests
     * @throws MpException if one failed (the first in the list among those complete), or time ran out
     */
    public void waitAll(List<MpRequest> requests) {
        Args.noNulls(requests, "requests");
        for (MpRequest r : requests) {
            requireWaitable(r);
        }
        for (MpRequest r : requests) {
            links[r.peer()].releaseOnCpu(r);
        }
        waits.awaitAllOrAFailure(requests);
        MpRequest failed = null;
        int outstanding = 0;
        for (MpRequest r : requests) {
            if (!r.isComplete()) {
                outstanding++;
                continue;
            }
            pool.release(r);
            if (failed == null && r.status() != CompletionStatus.SUCCESS) {
                failed = r;
            }
        }
        if (failed != null) {
            waits.throwIfFailed(failed, outstanding);
        }
    }

    /**
     * Waits for every request and releases them all.
     *
     * @param requests the requests
     */
    public void waitAll(MpRequest... requests) {
        Args.noNulls(requests, "requests");
        waitAll(List.of(requests));
    }

    /**
     * Makes requests progress without waiting (LibMP's {@code mp_progress_all(count, reqs)}): releases
     * their completions to the CPU, as {@link #wait} would, and reaps. Nothing is released to the pool.
     *
     * @param requests posted requests
     * @return how many of them are complete
     */
    public int progress(MpRequest... requests) {
        Args.noNulls(requests, "requests");
        for (MpRequest r : requests) {
            requireWaitable(r);
            links[r.peer()].releaseOnCpu(r);
        }
        progress();
        int complete = 0;
        for (MpRequest r : requests) {
            if (r.isComplete()) {
                complete++;
            }
        }
        return complete;
    }

    /**
     * Reaps every completion already released to the CPU: those of requests being waited on by the CPU,
     * and of requests whose stream passed its wait. A request nobody waits on yet keeps its completion
     * held (it may still be waited on by a stream); progress it with {@link #progress(MpRequest...)}.
     *
     * @return requests completed by this call
     */
    public int progress() {
        requireOpen();
        int n = 0;
        for (PeerLink l : links) {
            if (l != null) {
                n += l.progress(completion);
            }
        }
        return n;
    }

    /**
     * Reaps completions and says whether a request completed; if it did, releases it (MPI's
     * {@code MPI_Test}).
     *
     * @param r the request
     * @return whether it completed (and is now released)
     * @throws MpException if it completed with an error
     */
    public boolean test(MpRequest r) {
        Objects.requireNonNull(r, "request must not be null");
        requireWaitable(r);
        PeerLink l = links[r.peer()];
        l.releaseOnCpu(r);
        if (!r.isComplete()) {
            l.progress(completion);
        }
        if (!r.isComplete()) {
            return false;
        }
        pool.release(r);
        waits.throwIfFailed(r, 0);
        return true;
    }

    // ---- two-sided on a stream (SA) ----

    /**
     * Sends with the doorbell rung by a stream when it reaches this point (LibMP's
     * {@code mp_isend_on_stream}). The CPU reaps the completion later with {@link #wait}.
     *
     * @param buf    the message
     * @param peer   the receiver
     * @param reg    a registration containing {@code buf}
     * @param stream the stream
     * @return the request, PENDING_NOWAIT
     */
    public MpRequest isendOnStream(MemorySegment buf, int peer, MpRegistration reg, Stream stream) {
        return streams.isendOnStream(buf, peer, reg, stream);
    }

    /**
     * A gathering send rung by a stream (LibMP's {@code mp_isendv_on_stream}).
     *
     * @param bufs   the buffers, gathered in order (at most 8)
     * @param peer   the receiver
     * @param reg    a registration containing every buffer
     * @param stream the stream
     * @return the request, PENDING_NOWAIT
     */
    public MpRequest isendvOnStream(List<MemorySegment> bufs, int peer, MpRegistration reg, Stream stream) {
        return streams.isendvOnStream(bufs, peer, reg, stream);
    }

    /**
     * Sends with the doorbell rung by a stream, which then also waits for the send's completion
     * (LibMP's {@code mp_send_on_stream}).
     *
     * @param buf    the message
     * @param peer   the receiver
     * @param reg    a registration containing {@code buf}
     * @param stream the stream
     * @return the request, PENDING
     */
    public MpRequest sendOnStream(MemorySegment buf, int peer, MpRegistration reg, Stream stream) {
        return streams.sendOnStream(buf, peer, reg, stream);
    }

    /**
     * Prepares a send without ringing it (LibMP's {@code mp_send_prepare}).
     *
     * @param buf  the message
     * @param peer the receiver
     * @param reg  a registration containing {@code buf}
     * @return the request, PREPARED
     */
    public MpRequest sendPrepare(MemorySegment buf, int peer, MpRegistration reg) {
        return streams.sendPrepare(buf, peer, reg);
    }

    /**
     * Prepares a gathering send (LibMP's {@code mp_sendv_prepare}).
     *
     * @param bufs the buffers
     * @param peer the receiver
     * @param reg  a registration containing every buffer
     * @return the request, PREPARED
     */
    public MpRequest sendvPrepare(List<MemorySegment> bufs, int peer, MpRegistration reg) {
        return streams.sendvPrepare(bufs, peer, reg);
    }

    /**
     * Rings a prepared send (or put) on a stream, and makes the stream wait for its completion
     * (LibMP's {@code mp_send_post_on_stream}).
     *
     * @param r      a PREPARED request
     * @param stream the stream
     */
    public void sendPostOnStream(MpRequest r, Stream stream) {
        Objects.requireNonNull(r, "request must not be null");
        Args.usable(stream);
        sendPostAllOnStream(List.of(r), stream);
    }

    /**
     * Rings a prepared send (or put) on a stream (LibMP's {@code mp_isend_post_on_stream}).
     *
     * @param r      a PREPARED request
     * @param stream the stream
     */
    public void isendPostOnStream(MpRequest r, Stream stream) {
        Objects.requireNonNull(r, "request must not be null");
        Args.usable(stream);
        isendPostAllOnStream(List.of(r), stream);
    }

    /**
     * Rings prepared sends on a stream, then waits for all their completions there, in one batch
     * (LibMP's {@code mp_send_post_all_on_stream}).
     *
     * @param requests PREPARED requests, in prepare order per peer
     * @param stream   the stream
     */
    public void sendPostAllOnStream(List<MpRequest> requests, Stream stream) {
        streams.sendPostAllOnStream(requests, stream);
    }

    /**
     * Rings prepared sends on a stream in one batch (LibMP's {@code mp_isend_post_all_on_stream}).
     *
     * @param requests PREPARED requests, in prepare order per peer
     * @param stream   the stream
     */
    public void isendPostAllOnStream(List<MpRequest> requests, Stream stream) {
        streams.isendPostAllOnStream(requests, stream);
    }

    /**
     * Makes a stream wait for a request's completion (LibMP's {@code mp_wait_on_stream}). The CPU still
     * reaps it later with {@link #wait}.
     *
     * @param r      a posted request (PENDING_NOWAIT or COMPLETE)
     * @param stream the stream
     */
    public void waitOnStream(MpRequest r, Stream stream) {
        Objects.requireNonNull(r, "request must not be null");
        Args.usable(stream);
        waitAllOnStream(List.of(r), stream);
    }

    /**
     * Makes a stream wait for several completions, in one batch (LibMP's {@code mp_wait_all_on_stream}).
     *
     * @param requests posted requests
     * @param stream   the stream
     */
    public void waitAllOnStream(List<MpRequest> requests, Stream stream) {
        streams.waitAllOnStream(requests, stream);
    }

    // ---- one-sided ----

    /**
     * Creates a window over this rank's buffer; collective: every rank calls it (LibMP's
     * {@code mp_window_create}). Each rank publishes its buffer's exact size ({@code buffer.byteSize()}), which
     * {@link MpWindow#size(int)} returns and every put and get is checked against.
     *
     * @param buffer memory from {@link #allocate} (the segment or a slice of it, at least one byte) that peers may
     *               put into and get from
     * @return the window
     * @throws NullPointerException     if the buffer is null (this rank then takes no part in the collective)
     * @throws IllegalArgumentException if the buffer cannot be registered (see {@link #register(MemorySegment)}); this
     *                                  rank then takes no part in the collective
     * @throws IllegalStateException    if this Mp is closed (this rank then takes no part); if the NIC's registration
     *                                  table is full: this rank still takes part, publishing that it has no window,
     *                                  so every rank fails
     * @throws WindowRefusedException   on the other ranks, if a rank could not register its buffer (naming it); no
     *                                  window then exists anywhere
     */
    public MpWindow windowCreate(MemorySegment buffer) {
        return oneSided.windowCreate(buffer);
    }

    /**
     * Destroys a window; collective (LibMP's {@code mp_window_destroy}).
     *
     * @param window the window
     */
    public void windowDestroy(MpWindow window) {
        oneSided.windowDestroy(window);
    }

    /**
     * Writes a local buffer into a peer's window, rung by the CPU now (LibMP's {@code mp_iput}).
     *
     * @param src          the data
     * @param reg          a registration containing {@code src}
     * @param peer         the target rank
     * @param displacement byte offset in the peer's window
     * @param window       the window
     * @param flags        {@link PutFlags}
     * @return the request, PENDING_NOWAIT (a NOWAIT put releases itself)
     */
    public MpRequest iput(MemorySegment src, MpRegistration reg, int peer, long displacement, MpWindow window, int flags) {
        return oneSided.iput(src, reg, peer, displacement, window, flags);
    }

    /**
     * Reads from a peer's window into a local buffer, rung by the CPU now (LibMP's {@code mp_iget}).
     *
     * @param dst          where the data lands
     * @param reg          a registration containing {@code dst}
     * @param peer         the source rank
     * @param displacement byte offset in the peer's window
     * @param window       the window
     * @return the request, PENDING_NOWAIT
     */
    public MpRequest iget(MemorySegment dst, MpRegistration reg, int peer, long displacement, MpWindow window) {
        return oneSided.iget(dst, reg, peer, displacement, window);
    }

    /**
     * A put rung by a stream (LibMP's {@code mp_iput_on_stream}).
     *
     * @param src          the data
     * @param reg          a registration containing {@code src}
     * @param peer         the target rank
     * @param displacement byte offset in the peer's window
     * @param window       the window
     * @param flags        {@link PutFlags}
     * @param stream       the stream
     * @return the request, PENDING_NOWAIT
     */
    public MpRequest iputOnStream(MemorySegment src, MpRegistration reg, int peer, long displacement, MpWindow window,
                                  int flags, Stream stream) {
        return oneSided.iputOnStream(src, reg, peer, displacement, window, flags, stream);
    }

    /**
     * A get rung by a stream (LibMP's {@code mp_iget_on_stream}).
     *
     * @param dst          where the data lands
     * @param reg          a registration containing {@code dst}
     * @param peer         the source rank
     * @param displacement byte offset in the peer's window
     * @param window       the window
     * @param stream       the stream
     * @return the request, PENDING_NOWAIT
     */
    public MpRequest igetOnStream(MemorySegment dst, MpRegistration reg, int peer, long displacement, MpWindow window,
                                  Stream stream) {
        return oneSided.igetOnStream(dst, reg, peer, displacement, window, stream);
    }

    /**
     * Prepares a put (LibMP's {@code mp_put_prepare}); ring it with {@link #iputPostOnStream}.
     *
     * @param src          the data
     * @param reg          a registration containing {@code src}
     * @param peer         the target rank
     * @param displacement byte offset in the peer's window
     * @param window       the window
     * @param flags        {@link PutFlags}
     * @return the request, PREPARED
     */
    public MpRequest putPrepare(MemorySegment src, MpRegistration reg, int peer, long displacement, MpWindow window, int flags) {
        return oneSided.putPrepare(src, reg, peer, displacement, window, flags);
    }

    /**
     * Rings a prepared put on a stream (LibMP's {@code mp_iput_post_on_stream}).
     *
     * @param r      a PREPARED put
     * @param stream the stream
     */
    public void iputPostOnStream(MpRequest r, Stream stream) {
        Objects.requireNonNull(r, "request must not be null");
        Args.usable(stream);
        isendPostOnStream(r, stream);
    }

    /**
     * Rings prepared puts on a stream in one batch (LibMP's {@code mp_iput_post_all_on_stream}).
     *
     * @param requests PREPARED puts
     * @param stream   the stream
     */
    public void iputPostAllOnStream(List<MpRequest> requests, Stream stream) {
        Args.noNulls(requests, "requests");
        Args.usable(stream);
        isendPostAllOnStream(requests, stream);
    }

    /**
     * Atomically adds to a 64-bit word of a peer's window and returns the word's previous value, rung by the CPU now
     * (the NIC's fetch-and-add; LibMP has no such call). The NIC applies it with a hardware atomic at the target, so
     * it is atomic with respect to every other atomic on that word, from any rank.
     *
     * @param result       8 bytes of registered host memory that receive the word's value before the add
     * @param reg          a registration containing {@code result}
     * @param peer         the target rank (not this rank: update the own window with a CPU atomic)
     * @param displacement byte offset of the word in the peer's window, a multiple of 8
     * @param addend       what is added (two's complement: a negative addend subtracts)
     * @param window       the window
     * @return the request, PENDING_NOWAIT; {@code result} holds the old value once it completed
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code result} is not 8 bytes or not inside {@code reg}, the displacement is
     *                                  not 8-aligned or the word is past the window, or the peer is unknown or this rank
     * @throws IllegalStateException    if the window was destroyed or this Mp is closed
     */
    public MpRequest ifetchAdd(MemorySegment result, MpRegistration reg, int peer, long displacement, long addend,
                               MpWindow window) {
        return oneSided.ifetchAdd(result, reg, peer, displacement, addend, window);
    }

    /**
     * Prepares a fetch-and-add for a stream to ring (as {@link #ifetchAdd}, rung later with {@link #iputPostOnStream}
     * or {@link #isendPostOnStream}; gdasync's own, like the atomics): a stream can then add to a peer's counter, as
     * a signal, in its own order.
     *
     * @param result       8 bytes of registered host memory that receive the word's value before the add
     * @param reg          a registration containing {@code result}
     * @param peer         the target rank (not this rank)
     * @param displacement byte offset of the word in the peer's window, a multiple of 8
     * @param addend       what is added
     * @param window       the window
     * @return the request, PREPARED
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException as {@link #ifetchAdd}
     * @throws IllegalStateException    if the window was destroyed or this Mp is closed
     */
    public MpRequest fetchAddPrepare(MemorySegment result, MpRegistration reg, int peer, long displacement, long addend,
                                     MpWindow window) {
        return oneSided.fetchAddPrepare(result, reg, peer, displacement, addend, window);
    }

    /**
     * Atomically replaces a 64-bit word of a peer's window by {@code swap} if it equals {@code compare}, and returns
     * the word's previous value, rung by the CPU now (the NIC's compare-and-swap). The swap happened exactly when the
     * returned value equals {@code compare}.
     *
     * @param result       8 bytes of registered host memory that receive the word's value before the operation
     * @param reg          a registration containing {@code result}
     * @param peer         the target rank (not this rank)
     * @param displacement byte offset of the word in the peer's window, a multiple of 8
     * @param compare      the expected value
     * @param swap         the value stored when the word equals {@code compare}
     * @param window       the window
     * @return the request, PENDING_NOWAIT; {@code result} holds the old value once it completed
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code result} is not 8 bytes or not inside {@code reg}, the displacement is
     *                                  not 8-aligned or the word is past the window, or the peer is unknown or this rank
     * @throws IllegalStateException    if the window was destroyed or this Mp is closed
     */
    public MpRequest icompareSwap(MemorySegment result, MpRegistration reg, int peer, long displacement, long compare,
                                  long swap, MpWindow window) {
        return oneSided.icompareSwap(result, reg, peer, displacement, compare, swap, window);
    }

    // ---- memory words ----

    /**
     * Spins on the CPU until a word satisfies a condition (LibMP's {@code mp_wait32}, with EQ meaning
     * equal).
     *
     * @param word      the word
     * @param value     the operand
     * @param condition the condition
     * @throws dev.gdasync.gdsync.memop.WaitTimeoutException after the wait timeout
     * @throws MpException if the job fails meanwhile (nobody will write the word then)
     */
    public void wait32(MemoryWord word, int value, WaitCondition condition) {
        Objects.requireNonNull(word, "word must not be null");
        Objects.requireNonNull(condition, "condition must not be null");
        peerWait.word(word, value, condition);
        try {
            HostMemops.await32(word, value, condition, cpuWaits, idler, () -> false, wordWaitProgress);
        } finally {
            peerWait.clear();
        }
    }

    /**
     * Makes a stream wait until a word satisfies a condition (LibMP's {@code mp_wait32_on_stream}; GEQ,
     * EQ and AND keep their meaning, NOR is available too).
     *
     * @param word      the word
     * @param value     the operand
     * @param condition the condition
     * @param stream    the stream
     */
    public void wait32OnStream(MemoryWord word, int value, WaitCondition condition, Stream stream) {
        streams.wait32OnStream(word, value, condition, stream);
    }

    /**
     * Makes a stream write a word, after everything it wrote before (LibMP's {@code mp_write32_on_stream}).
     *
     * @param word   the word
     * @param value  the value
     * @param stream the stream
     */
    public void write32OnStream(MemoryWord word, int value, Stream stream) {
        streams.write32OnStream(word, value, stream);
    }

    /** @return a new, empty descriptor queue (LibMP's {@code mp_desc_queue_alloc}) */
    public MpDescQueue descQueue() {
        requireOpen();
        return new MpDescQueue(context);
    }

    /** @return a new KI export of this Mp's requests into a descriptor table */
    public MpKiExport kiExport() {
        requireOpen();
        return new MpKiExport(context);
    }

    /**
     * Starts a KI export for the tables of one executor (a GPU stream, the host KI executor): it names
     * memory its way (a GPU: device pointers of registered host memory), and runs its tables in launch
     * order, so a peer's sends may continue from one of its tables into the next before the first ran.
     *
     * @param executor the executor that will run the table
     * @return an empty export
     */
    public MpKiExport kiExport(KiTableExecutor executor) {
        Objects.requireNonNull(executor, "executor must not be null");
        requireOpen();
        return new MpKiExport(context, KiTable.builder(Objects.requireNonNull(executor, "executor")));
    }

    /**
     * Runs, on the calling thread, sends exported to a KI table whose doorbells a kernel has rung by plain
     * stores, instead of waiting for the NIC's agent ({@code Nic.progressStoreRings}): give it to a host KI
     * executor as its after-ring hook.
     *
     * @return how many queue pairs had work run
     */
    public int progressStoreRings() {
        return nic.progressStoreRings();
    }

    /**
     * Declares that a layer built on this Mp keeps receives posted on every queue pair (a program's own message layer
     * that pre-posts its slots, say; MPJ Express's device does not: it puts its fragments one-sided). The per-peer order of the two-sided calls then belongs to that layer. Layers that need two-sided messages of
     * their own (the collectives of {@code coll}, the global arrays of {@code ga}) refuse this Mp at once, naming the
     * holder, instead of waiting for messages that would land in its receives. The holder's own calls go on. Calling
     * it again with the same holder changes nothing.
     *
     * @param holder who holds them, for messages
     * @throws NullPointerException  if holder is null
     * @throws IllegalStateException if this Mp is closed, or another holder holds them already
     */
    public void reserveTwoSided(String holder) {
        Objects.requireNonNull(holder, "holder must not be null");
        requireOpen();
        String there = twoSidedHolder;
        if (there != null && !there.equals(holder)) {
            throw new IllegalStateException("rank " + rank() + ": the two-sided calls of this Mp are held by " + there
                    + ", not by " + holder);
        }
        twoSidedHolder = holder;
    }

    /** @return what holds this Mp's two-sided calls ({@link #reserveTwoSided}), or null when they are free */
    public String twoSidedHolder() {
        return twoSidedHolder;
    }

    /** @return the configuration this Mp was started with */
    public MpConfig config() {
        return config;
    }

    /**
     * Returns once every rank has called it (through the bootstrap).
     *
     * @throws dev.gdasync.libmp.bootstrap.BootstrapException (an {@link MpException}) if a rank is gone or the
     *                                                        bootstrap's timeout passed
     * @throws IllegalStateException if this Mp is closed
     */
    public void barrier() {
        requireOpen();
        bootstrap.barrier();
    }

    /**
     * Aborts the job (MPI's {@code MPI_Abort}, NCCL's {@code ncclCommAbort}): every rank's outstanding and later
     * operations fail at once with a message that names this rank and the reason, on this rank too. Returns
     * without waiting for the other ranks; {@link #close()} then leaves without a barrier. The processes go on:
     * ending them is the application's (or the launcher's) call.
     *
     * @param reason why, for every rank's messages
     * @throws NullPointerException if the reason is null
     */
    public void abort(String reason) {
        Objects.requireNonNull(reason, "reason must not be null");
        String why = "rank " + rank() + " aborted the job: " + reason;
        try {
            bootstrap.abort(why);
        } finally {
            jobFailed(why);
        }
    }

    /**
     * @return why the job failed (a rank's process gone, a rank that aborted, rank 0 gone), or null while it is
     *         healthy
     */
    public String failure() {
        return context.jobFailure();
    }

    /**
     * Leaves the job (LibMP's {@code mp_finalize}): a barrier, so that no peer still talks to this rank,
     * then the NIC closes. After the job failed there is no barrier: the NIC closes at once. Closing twice does
     * nothing. If the barrier fails (a rank died meanwhile), the NIC is closed anyway and the barrier's exception
     * is thrown, unless a call of this rank already threw for that failure (a request that failed when the peer
     * died, before the bootstrap's news arrived): the application knows, and a second exception would only hide
     * the first.
     */
    @Override
    public void close() {
        if (!context.markClosed()) {
            return;
        }
        if (context.jobFailure() != null) {
            cpuSeat.close();
            nic.close();
            return;
        }
        try {
            bootstrap.barrier();
        } catch (BootstrapException e) {
            if (!context.isFailureReported() || (context.jobFailure() == null && bootstrap.failure() == null)) {
                throw e;
            }
        } finally {
            cpuSeat.close();
            nic.close();
        }
    }

    /** @return the CPU share registry of this user's shared-memory base, beside the jobs' directories */
    private static java.nio.file.Path cpuShareRegistry() {
        return ShmDirectory.userRoot(ShmDirectory.defaultBase()).resolve("cpu-share");
    }

    // ---- internals ----

    /**
     * Run by host threads between looks at a word a peer writes (a flag put into a window): progresses the NIC,
     * and ends the wait once the job failed, since no peer will write the word then. Waits for completions need no
     * such end: a failed job fails the queue pairs, which write their completions.
     *
     * @return what the NIC's progress did
     * @throws MpException if the job failed
     */
    private int progressWordWait() {
        String failed = context.jobFailure();
        if (failed != null) {
            context.noteFailureReported();
            throw new MpException("rank " + rank() + " stopped waiting on a word: the job failed: " + failed, null,
                    ErrorDetail.JOB_FAILED);
        }
        WaitProgress p = nic.waitProgress();
        return p == null ? 0 : p.progress();
    }

    /**
     * Another rank's registered host memory for direct loads and stores from this process, where the NIC maps that
     * rank's memory here (the software NIC over shared memory does; OpenSHMEM's {@code shmem_ptr} for any
     * registration rather than a window). The key is checked as a remote access would be: it must name a live
     * registration of that rank granting remote read and write that covers the range. Loads and stores through it
     * bypass the queue pairs: order them with the owner's by a flag written with release and read with acquire
     * semantics. Valid while the owner keeps the registration.
     *
     * @param rank    the owner, a rank of the job
     * @param address the address of the range in the owner's process (its {@code MemorySegment.address()})
     * @param rkey    the owner's key of a registration covering it ({@link MpRegistration#rkey()})
     * @param bytes   the length of the range, &gt;= 1
     * @return the range mapped here; this rank's own memory is not looked up (null); null also when the NIC cannot map
     *         it (another transport, device memory, a failed connection, a key that does not grant the range)
     * @throws IllegalArgumentException if the rank is not a rank of the job or bytes &lt; 1
     */
    public MemorySegment peerMemory(int rank, long address, long rkey, long bytes) {
        requireOpen();
        if (rank < 0 || rank >= size()) {
            throw new IllegalArgumentException("rank " + rank + " is not a rank of this job: ranks are 0.." + (size() - 1));
        }
        if (bytes < 1) {
            throw new IllegalArgumentException("bytes must be >= 1, got " + bytes);
        }
        PeerLink l = links[rank];
        return l == null ? null : l.qp.peerMemory(rkey, address, bytes);
    }

    /**
     * Why this rank can no longer reach another one, as its queue pair to it says: the peer's process is gone, it
     * closed, or the job failed. Cheap enough to poll from a wait loop.
     *
     * @param rank a rank of the job other than this one
     * @return a sentence naming the rank and the reason, or null while the link is usable
     * @throws IllegalArgumentException if the rank is not a rank of the job
     */
    public String linkFailure(int rank) {
        if (rank < 0 || rank >= size()) {
            throw new IllegalArgumentException("rank " + rank + " is not a rank of this job: ranks are 0.." + (size() - 1));
        }
        String failed = context.jobFailure();
        if (failed != null) {
            return "the job failed: " + failed;
        }
        PeerLink l = links[rank];
        if (l == null) {
            return null;
        }
        QpState s = l.qp.state();
        if (s == QpState.ERROR || s == QpState.CLOSED) {
            return "the link to rank " + rank + " failed (" + l.qp.errorDetail().text() + ")";
        }
        return null;
    }

    /**
     * Whether the queue pair to a rank holds sends prepared for a stream (or a kernel) that it has not rung yet. Until
     * it rang them, a CPU post to that rank ({@link #isend}, {@link #iput}, {@link #iget}, the atomics) is refused,
     * since the queue pair rings in prepare order: a layer that shares this Mp with the program's stream sends (MPJ's
     * device) holds its own posts back meanwhile. A hint, true or false a moment later.
     *
     * @param rank a rank of the job other than this one
     * @return whether CPU posts to it wait for a stream now
     * @throws IllegalArgumentException if the rank is not a rank of the job, or is this rank
     * @throws IllegalStateException    if this Mp is closed
     */
    public boolean sendsAwaitStream(int rank) {
        PeerLink l = otherRanksLink(rank);
        return l != null && l.qp.holdsUnrungSends();
    }

    /**
     * After stores into a peer's memory mapped here ({@link #peerMemory}, {@link MpWindow#peerMemory}): wakes the
     * peer's threads parked waiting for their peers, as a put into that memory would. A layer that writes a flag
     * straight into a peer's mapped memory calls it after the store, so that a peer asleep in its wait sees the flag
     * at once rather than at its next timed look. Nothing where the NIC maps no memory of that rank.
     *
     * @param rank a rank of the job other than this one
     * @throws IllegalArgumentException if the rank is not another rank of the job
     * @throws IllegalStateException    if this Mp is closed
     */
    public void wakePeer(int rank) {
        PeerLink l = otherRanksLink(rank);
        if (l != null) {
            l.qp.wakePeer();
        }
    }

    /** @return the link to another rank of the job, null where none was made; checks the Mp is open and the rank */
    private PeerLink otherRanksLink(int rank) {
        requireOpen();
        if (rank < 0 || rank >= size() || rank == rank()) {
            throw new IllegalArgumentException("rank " + rank + " is not another rank of this job: ranks are 0.."
                    + (size() - 1) + ", this one " + rank());
        }
        return links[rank];
    }

    /** @return the link to a peer (for this package's tests, which look at its queue pair) */
    PeerLink peerLink(int peer) {
        return links[peer];
    }

    private void requireWaitable(MpRequest r) {
        Objects.requireNonNull(r, "request").checkWaitable(context);
    }

    private void requireOpen() {
        context.requireOpen();
    }

    @Override
    public String toString() {
        return "Mp{rank " + rank() + " of " + size() + ", " + nic.name() + "}";
    }
}
