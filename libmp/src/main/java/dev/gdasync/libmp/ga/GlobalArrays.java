package dev.gdasync.libmp.ga;

// Why this file is long: GlobalArrays is the GA runtime's whole public API (create with its agreement and back-out,
// put/get/acc and their non-blocking forms, scatter/gather, readInc, fence and sync) with its Javadoc; the blocks,
// patches, staging and the agreement already live in classes of their own. Splitting the operation families is
// part of the libmp rooms work (issue 34).

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;
import dev.gdasync.libmp.WindowRefusedException;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One rank's global-array runtime over an {@link Mp} (CoGA's {@code coGA_Initialize}): it creates the rank's {@link
 * GlobalArray}s and owns what their transfers share: staging memory for buffers that are not registered, the
 * non-blocking operations in flight, the fence, and short messages between ranks.
 *
 * <p>Threading: a runtime, its arrays and handles belong to the thread that uses its Mp (Mp is single-threaded).
 *
 * <p>Completion: a put, get or accumulate returns once its transfers completed on the software NIC, which means the
 * data reached the owner's memory (the NIC completes a write after it copied the bytes into the target region, over
 * shared memory and over UCX alike). A non-blocking operation completes at {@link #nbWait}, {@link #fence} or {@link
 * #sync}. Operations of this rank on overlapping patches of one array happen in call order: an operation first
 * completes the non-blocking operations in flight on that array whose patches overlap its own.
 */
public final class GlobalArrays implements AutoCloseable {
    /** Bytes before the block in each rank's window: the accumulate lock word (0 free, else holder rank + 1). */
    static final long HEADER = 8;
    /** The bytes of one short-message frame; the first frame starts with the message's 8-byte length. */
    static final int FRAME = 4096;
    private static final long INITIAL_STAGING = 1 << 20;
    private static final VarHandle WORD = JAVA_LONG.varHandle();

    private final Mp mp;
    private final int maxInFlight;
    private final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
    private final List<GaHandle> open = new ArrayList<>();
    private final List<GlobalArray> arrays = new ArrayList<>();
    private final List<GaBuffer> buffers = new ArrayList<>();
    /** 8 bytes of atomic results, a send frame, a receive frame, a create record, then the create agreement areas. */
    private final MemorySegment scratch;
    private final MpRegistration scratchReg;
    private final CreateAgreement agreement;
    private MemorySegment staging;
    private MpRegistration stagingReg;
    /** Which parts of {@link #staging} operations in flight hold. */
    private final StagingSpace stagingSpace = new StagingSpace(INITIAL_STAGING);
    private boolean fencing;
    private boolean closed;

    private record InFlight(MpRequest request, GaHandle handle) {
    }

    /**
     * Starts the runtime of this rank; not collective (every rank that creates arrays needs one).
     *
     * @param mp this rank's Mp, used by this runtime's thread only from now on
     * @throws NullPointerException  if mp is null
     * @throws IllegalStateException if the Mp is closed
     */
    public GlobalArrays(Mp mp) {
        this.mp = Objects.requireNonNull(mp, "mp must not be null");
        this.maxInFlight = Math.max(1, Math.min(256, mp.requestPoolSize() / 4));
        long record = 8 + 2L * FRAME;
        long areas = record + CreateAgreement.RECORD;
        this.scratch = mp.allocate(areas + CreateAgreement.areaBytes(mp.size()));
        this.scratchReg = mp.register(scratch);
        this.agreement = new CreateAgreement(mp, scratch.asSlice(record, CreateAgreement.RECORD),
                scratch.asSlice(areas), scratchReg, maxInFlight);
        this.staging = mp.allocate(INITIAL_STAGING);
        this.stagingReg = mp.register(staging);
    }

    /** @return the Mp the runtime works over */
    public Mp mp() {
        return mp;
    }

    /** @return this rank */
    public int rank() {
        return mp.rank();
    }

    /** @return the number of ranks */
    public int size() {
        return mp.size();
    }

    /**
     * Creates a global array; collective: every rank calls it with the same name, type and distribution, in the same
     * order as its other collective calls (GA's {@code NGA_Create}, CoGA's {@code coGA_Create}). Its elements start at
     * zero.
     *
     * <p>Before anything is allocated the ranks compare their calls (name, type, dimensions, grid and block starts)
     * through a window of the runtime, as {@code Shmem.malloc} compares sizes, and check that every rank's block has a
     * byte size a long can hold; a refusal is the same on every rank, allocates nothing, leaves nothing in flight and
     * keeps the ranks in step, so the next create works. After the allocation the ranks compare the window sizes they
     * published: if a rank could not allocate its block or register its window, every rank frees what it made and
     * throws.
     *
     * @param name         a name for messages, the same on every rank
     * @param type         the element type
     * @param distribution how the index space is split over the ranks; for exactly {@link #size()} ranks
     * @return the array
     * @throws NullPointerException     if an argument is null (this rank then takes no part)
     * @throws IllegalArgumentException on every rank: if the ranks' calls differ (naming the first differing rank, both
     *                                  calls and what differs), the name is blank, the distribution is for another
     *                                  number of ranks, or a rank's block has more bytes than a long holds
     * @throws IllegalStateException    if the runtime is closed (this rank then takes no part); on the other ranks, if a
     *                                  rank could not allocate its block or register its window (that rank throws
     *                                  what {@link Mp#allocate} or {@link Mp#windowCreate} threw)
     * @throws MpException              if the job failed
     */
    public GlobalArray create(String name, GaType type, Distribution distribution) {
        Objects.requireNonNull(name, "name must not be null");
        Objects.requireNonNull(type, "type must not be null");
        Objects.requireNonNull(distribution, "distribution must not be null");
        requireOpen();
        agreement.agree(name, type, distribution);
        // The ranks agree on every argument, so each check below fails on every rank alike.
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank");
        }
        if (distribution.ranks() != size()) {
            throw new IllegalArgumentException("the distribution is for " + distribution.ranks() + " ranks, the job has " + size());
        }
        long[] windowBytes = windowBytes(name, type, distribution);
        MemorySegment memory = null;
        RuntimeException failed = null;
        try {
            memory = allocateBlock(windowBytes[rank()]);
        } catch (RuntimeException e) {
            failed = e;
        }
        // A rank without memory publishes a 1-byte window, a size no block has (each is a multiple of 8 bytes), so
        // that every rank learns of the failure from the window sizes and backs out with it.
        MpWindow window;
        try {
            window = mp.windowCreate(memory != null ? memory : scratch.asSlice(0, 1));
        } catch (RuntimeException e) {
            // A rank could not register its window (every rank learns it from the window's exchange): back out.
            if (memory != null) {
                mp.free(memory);
            }
            if (failed != null) {
                throw failed;
            }
            if (e instanceof WindowRefusedException w) {
                throw refusedWindow(name, w);
            }
            throw e;
        }
        for (int p = 0; p < size(); p++) {
            if (window.size(p) != windowBytes[p]) {
                mp.windowDestroy(window);
                if (memory != null) {
                    mp.free(memory);
                }
                if (failed != null) {
                    throw failed;
                }
                throw new IllegalStateException("GlobalArrays.create of array '" + name + "': rank " + p
                        + " could not allocate its block's window of " + windowBytes[p] + " bytes (its own exception says"
                        + " why); nothing was created");
            }
        }
        GlobalArray a = new GlobalArray(this, name, type, distribution, memory, window);
        arrays.add(a);
        return a;
    }

    /** @return the error of a create whose window (the block's, or the agreement's) a rank could not register */
    static IllegalStateException refusedWindow(String name, WindowRefusedException e) {
        return new IllegalStateException("GlobalArrays.create of array '" + name + "': rank " + e.rank()
                + " could not register its window (its own exception says why); nothing was created", e);
    }

    /**
     * The window bytes of every rank's block: the lock word, then the block rounded up to whole 8-byte words (readInc
     * on an INT element updates the word that contains it).
     *
     * @throws IllegalArgumentException if a rank's block has more bytes than a long holds
     */
    private static long[] windowBytes(String name, GaType type, Distribution d) {
        long[] bytes = new long[d.ranks()];
        for (int p = 0; p < bytes.length; p++) {
            GaPatch block = d.block(p);
            long elements = block.elements(); // exact: a distribution's element count is a long
            try {
                bytes[p] = Math.addExact(HEADER, Math.addExact(Math.multiplyExact(elements, type.bytes()), 7) & ~7L);
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("GlobalArrays.create of array '" + name + "' (" + type + " "
                        + Arrays.toString(d.dims()) + "): rank " + p + "'s block " + patch(block.lo(), block.hi()) + " has " + elements
                        + " elements of " + type.bytes() + " bytes, more bytes than a long holds; nothing was created");
            }
        }
        return bytes;
    }

    /** Allocates this rank's window memory (Mp.allocate zero-fills it); frees it again if it is not 8-byte aligned. */
    private MemorySegment allocateBlock(long bytes) {
        MemorySegment m = mp.allocate(bytes);
        if ((m.address() & 7) != 0) {
            mp.free(m);
            throw new IllegalStateException("Mp.allocate returned memory that is not 8-byte aligned: " + m);
        }
        return m;
    }

    /**
     * Allocates and registers a local buffer (CoGA's pre-registered local cache): transfers from and into it skip the
     * staging copy. Not collective.
     *
     * @param bytes its length, {@code >= 1}
     * @return the buffer, zero-filled
     * @throws IllegalArgumentException if bytes is not positive
     * @throws IllegalStateException    if the runtime is closed
     */
    public GaBuffer registeredBuffer(long bytes) {
        requireOpen();
        if (bytes < 1) {
            throw new IllegalArgumentException("bytes must be >= 1, got " + bytes);
        }
        MemorySegment m = mp.allocate(bytes);
        m.fill((byte) 0);
        GaBuffer b = new GaBuffer(this, m, mp.register(m));
        buffers.add(b);
        return b;
    }

    /**
     * Waits until a non-blocking operation completed locally (GA's {@code NGA_NbWait}): a put's or accumulate's
     * buffer may be reused, a get's buffer holds the data. Waiting again for a completed handle does nothing.
     *
     * @param handle the operation
     * @throws NullPointerException if handle is null
     * @throws IllegalArgumentException if the handle belongs to another runtime
     * @throws MpException          if one of its transfers failed (a dead rank fails them, never hangs them)
     */
    public void nbWait(GaHandle handle) {
        Objects.requireNonNull(handle, "handle must not be null");
        if (handle.array.runtime() != this) {
            throw new IllegalArgumentException("the handle belongs to another runtime");
        }
        finish(handle);
    }

    /**
     * Starts counting this rank's operations for a {@link #fence()} (GA's {@code GA_Init_fence}).
     *
     * @throws IllegalStateException if the runtime is closed
     */
    public void initFence() {
        requireOpen();
        fencing = true;
    }

    /**
     * Waits until every operation this rank started is complete at its target (GA's {@code GA_Fence}, CoGA's
     * {@code coGA_Fence}): local, not collective; ends the fence begun by {@link #initFence()}.
     *
     * @throws IllegalStateException if no {@code initFence} came first
     * @throws MpException           if an operation failed
     */
    public void fence() {
        requireOpen();
        if (!fencing) {
            throw new IllegalStateException("fence() without initFence(): call initFence() before the operations to fence");
        }
        fencing = false;
        finishAll();
    }

    /**
     * Barrier with every operation of every rank complete (GA's {@code GA_Sync}, CoGA's {@code coGA_Sync}); collective.
     *
     * @throws MpException if an operation failed or the job failed
     */
    public void sync() {
        requireOpen();
        finishAll();
        mp.barrier();
    }

    /** The messages travel as the Mp's sends and receives: refused when another layer holds them. */
    private void requireTwoSided(String call) {
        String holder = mp.twoSidedHolder();
        if (holder != null) {
            throw new IllegalStateException(call + " on rank " + mp.rank() + ": the messages need this Mp's two-sided"
                    + " calls, and " + holder + " holds them: send messages through that layer");
        }
    }

    /**
     * Sends a short message to a rank (CoGA's {@code coGA_sendMsg}); returns once it left this rank's buffers. It
     * travels in frames of {@value #FRAME} bytes, each of which waits for the receiver to call {@link #recvMsg} (within
     * the software NIC's receiver-not-ready timeout), so keep messages short.
     *
     * @param peer    the receiving rank (not this one)
     * @param message the bytes to send, heap or native, at most {@code Integer.MAX_VALUE}
     * @throws NullPointerException     if message is null
     * @throws IllegalArgumentException if the peer is unknown or this rank, or the message is too long
     * @throws IllegalStateException    if another layer holds the Mp's two-sided calls ({@link Mp#reserveTwoSided})
     * @throws MpException              if the transfer failed
     */
    public void sendMsg(int peer, MemorySegment message) {
        Objects.requireNonNull(message, "message must not be null");
        requireOpen();
        checkPeer(peer);
        requireTwoSided("sendMsg");
        if (message.byteSize() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a message has at most " + Integer.MAX_VALUE + " bytes, got " + message.byteSize());
        }
        MemorySegment frame = scratch.asSlice(8, FRAME);
        long length = message.byteSize();
        frame.set(JAVA_LONG, 0, length);
        long sent = Math.min(length, FRAME - 8);
        MemorySegment.copy(message, 0, frame, 8, sent);
        mp.wait(mp.isend(frame.asSlice(0, 8 + sent), peer, scratchReg));
        while (sent < length) {
            long n = Math.min(length - sent, FRAME);
            MemorySegment.copy(message, sent, frame, 0, n);
            mp.wait(mp.isend(frame.asSlice(0, n), peer, scratchReg));
            sent += n;
        }
    }

    /**
     * Receives the next short message from a rank (CoGA's {@code coGA_recvMsg}); messages from one rank arrive in the
     * order sent.
     *
     * @param peer the sending rank (not this one)
     * @return the message, a heap segment of exactly its length, 8-byte aligned
     * @throws IllegalArgumentException if the peer is unknown or this rank
     * @throws IllegalStateException    if another layer holds the Mp's two-sided calls ({@link Mp#reserveTwoSided})
     * @throws MpException              if the transfer failed or none came within the wait timeout
     */
    public MemorySegment recvMsg(int peer) {
        requireOpen();
        checkPeer(peer);
        requireTwoSided("recvMsg");
        MemorySegment frame = scratch.asSlice(8 + FRAME, FRAME);
        MpRequest first = mp.irecv(frame, peer, scratchReg);
        mp.wait(first);
        long length = frame.get(JAVA_LONG, 0);
        long got = first.byteCount() - 8;
        if (length < 0 || length > Integer.MAX_VALUE || got < 0 || got > length) {
            throw new IllegalStateException("rank " + peer + " sent a frame that does not start a message (length "
                    + length + ", " + first.byteCount() + " bytes): is it using Mp two-sided calls beside sendMsg?");
        }
        // Backed by a long[] so that any element layout, aligned, can read it.
        MemorySegment message = MemorySegment.ofArray(new long[(int) ((length + 7) / 8)]).asSlice(0, length);
        MemorySegment.copy(frame, 8, message, 0, got);
        while (got < length) {
            MpRequest r = mp.irecv(frame, peer, scratchReg);
            mp.wait(r);
            long n = Math.min(r.byteCount(), length - got);
            MemorySegment.copy(frame, 0, message, got, n);
            got += n;
        }
        return message;
    }

    /**
     * Destroys the arrays still alive, in creation order (collective, like {@link GlobalArray#destroy()}; after a job
     * failure only locally), and frees the runtime's memory. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            for (GlobalArray a : List.copyOf(arrays)) {
                a.destroy();
            }
        } finally {
            closed = true;
            for (GaBuffer b : List.copyOf(buffers)) {
                b.close();
            }
            if (mp.failure() == null) {
                mp.deregister(stagingReg);
                mp.free(staging);
                mp.deregister(scratchReg);
                mp.free(scratch);
            }
        }
    }

    // ---- for GlobalArray ----

    void forget(GlobalArray a) {
        arrays.remove(a);
    }

    void release(GaBuffer b) {
        finishAll();
        buffers.remove(b);
        if (mp.failure() == null) {
            mp.deregister(b.registration);
            mp.free(b.segment());
        }
    }

    void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the GlobalArrays runtime of rank " + rank() + " is closed");
        }
    }

    private void checkPeer(int peer) {
        if (peer < 0 || peer >= size()) {
            throw new IllegalArgumentException("unknown peer " + peer + ": ranks are 0.." + (size() - 1));
        }
        if (peer == rank()) {
            throw new IllegalArgumentException("rank " + peer + " is this rank: messages go to other ranks");
        }
    }

    /** The registration of the GaBuffer that holds a segment, or null if none does. */
    private MpRegistration registrationOf(MemorySegment s) {
        for (GaBuffer b : buffers) {
            if (b.contains(s)) {
                return b.registration;
            }
        }
        return null;
    }

    /** Completes this array's operations in flight that overlap a patch, so operations on it keep call order. */
    void orderAfter(GlobalArray a, int[] lo, int[] hi) {
        for (GaHandle h : List.copyOf(open)) {
            if (h.array == a && h.overlaps(lo, hi)) {
                finishQuietly(h);
            }
        }
    }

    /** Completes this array's operations in flight (before destroy). */
    void finishAll(GlobalArray a) {
        for (GaHandle h : List.copyOf(open)) {
            if (h.array == a) {
                finishQuietly(h);
            }
        }
    }

    /**
     * Starts a put (or a scatter: one run per element): runs to this rank are copied now, the others posted from the
     * caller's registered buffer or a staging copy.
     */
    GaHandle startPut(GlobalArray a, RunList runs, MemorySegment user, int[] lo, int[] hi) {
        orderAfter(a, lo, hi);
        GaHandle h = new GaHandle(a, lo, hi);
        int me = rank();
        MpRegistration direct = registrationOf(user);
        MemorySegment stage = direct == null ? reserve(h, runs.remoteBytes(me, 0, runs.size())) : null;
        open.add(h);
        try {
            long so = 0;
            for (int i = 0; i < runs.size(); i++) {
                int owner = runs.owner(i);
                long n = runs.bytes(i);
                if (owner == me) {
                    MemorySegment.copy(user, runs.user(i), a.local(), HEADER + runs.remote(i), n);
                    continue;
                }
                MemorySegment src;
                if (direct != null) {
                    src = user.asSlice(runs.user(i), n);
                } else {
                    src = stage.asSlice(so, n);
                    so += n;
                    MemorySegment.copy(user, runs.user(i), src, 0, n);
                }
                post(h, mp.iput(src, direct != null ? direct : stagingReg, owner, HEADER + runs.remote(i), a.window(), 0));
            }
        } catch (RuntimeException e) {
            abandon(h, e);
            throw e;
        }
        return h;
    }

    /** Starts a get (or a gather): runs of this rank are copied now, the others land in the buffer or in staging. */
    GaHandle startGet(GlobalArray a, RunList runs, MemorySegment user, int[] lo, int[] hi) {
        orderAfter(a, lo, hi);
        GaHandle h = new GaHandle(a, lo, hi);
        int me = rank();
        MpRegistration direct = registrationOf(user);
        MemorySegment stage = direct == null ? reserve(h, runs.remoteBytes(me, 0, runs.size())) : null;
        h.user = user;
        open.add(h);
        try {
            long so = 0;
            for (int i = 0; i < runs.size(); i++) {
                int owner = runs.owner(i);
                long n = runs.bytes(i);
                if (owner == me) {
                    MemorySegment.copy(a.local(), HEADER + runs.remote(i), user, runs.user(i), n);
                    continue;
                }
                MemorySegment dst;
                if (direct != null) {
                    dst = user.asSlice(runs.user(i), n);
                } else {
                    dst = stage.asSlice(so, n);
                    h.unpackLater(so, runs.user(i), n);
                    so += n;
                }
                post(h, mp.iget(dst, direct != null ? direct : stagingReg, owner, HEADER + runs.remote(i), a.window()));
            }
        } catch (RuntimeException e) {
            abandon(h, e);
            throw e;
        }
        return h;
    }

    /**
     * Ends an operation that was refused part-way (a post the Mp refused): waits for what it posted already, so that
     * nothing stays in flight and no later sync copies into the caller's buffer, and frees its staging.
     */
    private void abandon(GaHandle h, RuntimeException refusal) {
        if (h.failure == null) {
            h.failure = refusal;
        }
        finishQuietly(h);
    }

    /**
     * patch += alpha * buffer, owner by owner: under the owner's accumulate lock, the owner's part is read, added to
     * and written back; one lock is held at a time, so accumulates never deadlock.
     */
    void accumulate(GlobalArray a, RunList runs, MemorySegment user, double alpha, int[] lo, int[] hi) {
        orderAfter(a, lo, hi);
        int me = rank();
        GaType type = a.type();
        int es = type.bytes();
        for (int from = 0; from < runs.size(); ) {
            int owner = runs.owner(from);
            int to = from;
            while (to < runs.size() && runs.owner(to) == owner) {
                to++;
            }
            if (owner == me) {
                lockLocal(a);
                try {
                    for (int i = from; i < to; i++) {
                        type.accumulate(a.local(), HEADER + runs.remote(i), user, runs.user(i), runs.bytes(i) / es, alpha);
                    }
                } finally {
                    WORD.setVolatile(a.local(), 0L, 0L);
                }
            } else {
                accumulateRemote(a, runs, from, to, user, alpha);
            }
            from = to;
        }
    }

    private void accumulateRemote(GlobalArray a, RunList runs, int from, int to, MemorySegment user, double alpha) {
        int owner = runs.owner(from);
        GaHandle get = new GaHandle(a, a.lo(), a.hi());
        MemorySegment stage = reserve(get, runs.remoteBytes(-1, from, to));
        open.add(get);
        GaHandle put = null;
        boolean locked = false;
        boolean unlocked = false;
        try {
            lockRemote(a, owner);
            locked = true;
            long so = 0;
            for (int i = from; i < to; i++) {
                post(get, mp.iget(stage.asSlice(so, runs.bytes(i)), stagingReg, owner, HEADER + runs.remote(i), a.window()));
                so += runs.bytes(i);
            }
            finish(get);
            // The put reuses the get's staging: nothing else reserves staging before this call returns.
            put = new GaHandle(a, a.lo(), a.hi());
            open.add(put);
            so = 0;
            for (int i = from; i < to; i++) {
                long n = runs.bytes(i);
                a.type().accumulate(stage, so, user, runs.user(i), n / a.type().bytes(), alpha);
                post(put, mp.iput(stage.asSlice(so, n), stagingReg, owner, HEADER + runs.remote(i), a.window(), 0));
                so += n;
            }
            finish(put);
            unlocked = true;
            unlockRemote(a, owner);
        } catch (RuntimeException e) {
            // Nothing of this accumulate stays in flight or holds staging.
            abandon(get, e);
            if (put != null) {
                abandon(put, e);
            }
            throw e;
        } finally {
            if (!unlocked && locked && mp.failure() == null) {
                try {
                    unlockRemote(a, owner);
                } catch (RuntimeException suppressed) {
                    // The first failure is the one to report.
                }
            }
        }
    }

    /** Atomically adds to a long, or to an int through its containing 64-bit word; returns the old value. */
    long readInc(GlobalArray a, int owner, long elementOffset, long increment) {
        long byteOffset = HEADER + elementOffset;
        if (a.type() == GaType.LONG) {
            if (owner == rank()) {
                return (long) WORD.getAndAdd(a.local(), byteOffset, increment);
            }
            MemorySegment result = scratch.asSlice(0, 8);
            mp.wait(mp.ifetchAdd(result, scratchReg, owner, byteOffset, increment, a.window()));
            return result.get(JAVA_LONG, 0);
        }
        long word = byteOffset & ~7L;
        int shift = IntInWord.shift(byteOffset - word);
        long seen = owner == rank() ? (long) WORD.getVolatile(a.local(), word) : cas(a, owner, word, 0, 0);
        for (;;) {
            int old = (int) (seen >>> shift);
            long next = (seen & ~(0xFFFF_FFFFL << shift)) | (((long) (old + (int) increment) & 0xFFFF_FFFFL) << shift);
            long now = owner == rank() ? (long) WORD.compareAndExchange(a.local(), word, seen, next) : cas(a, owner, word, seen, next);
            if (now == seen) {
                return old;
            }
            seen = now;
        }
    }

    /** Where a 4-byte int sits in its 8-byte word, by the platform's byte order. */
    private static final class IntInWord {
        private static final boolean LITTLE = java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN;

        static int shift(long byteInWord) {
            return (int) (LITTLE ? byteInWord * 8 : (4 - byteInWord) * 8);
        }
    }

    private long cas(GlobalArray a, int owner, long offset, long compare, long swap) {
        MemorySegment result = scratch.asSlice(0, 8);
        mp.wait(mp.icompareSwap(result, scratchReg, owner, offset, compare, swap, a.window()));
        return result.get(JAVA_LONG, 0);
    }

    private void lockLocal(GlobalArray a) {
        long mine = rank() + 1L;
        Backoff b = new Backoff(a, rank());
        long held;
        while ((held = (long) WORD.compareAndExchange(a.local(), 0L, 0L, mine)) != 0) {
            b.idle(held);
        }
    }

    private void lockRemote(GlobalArray a, int owner) {
        long mine = rank() + 1L;
        Backoff b = new Backoff(a, owner);
        long held;
        while ((held = cas(a, owner, 0, 0, mine)) != 0) {
            b.idle(held);
        }
    }

    private void unlockRemote(GlobalArray a, int owner) {
        long held = cas(a, owner, 0, rank() + 1L, 0);
        if (held != rank() + 1L) {
            throw new IllegalStateException("rank " + rank() + " released the accumulate lock of array '" + a.name()
                    + "' at rank " + owner + " but it was held by " + (held == 0 ? "nobody" : "rank " + (held - 1)));
        }
    }

    /** Idles between tries of a lock (spin, yield, short parks); fails once the job failed or the Mp's wait timeout passed. */
    private final class Backoff {
        private final GlobalArray array;
        private final int owner;
        private final long start = System.nanoTime();
        /** Nobody wakes a lock's waiter: it polls the word, as every wait for memory does. */
        private final BackoffIdler idler = new BackoffIdler(BackoffPolicy.SPIN_THEN_YIELD);

        Backoff(GlobalArray array, int owner) {
            this.array = array;
            this.owner = owner;
        }

        void idle(long held) {
            String failed = mp.failure();
            if (failed != null) {
                throw new MpException("rank " + rank() + " stopped waiting for the accumulate lock of array '" + array.name()
                        + "' at rank " + owner + ": the job failed: " + failed, null, ErrorDetail.JOB_FAILED);
            }
            if (System.nanoTime() - start > mp.config().waitTimeout().toNanos()) {
                throw new MpException("rank " + rank() + " timed out after " + mp.config().waitTimeout().toMillis()
                        + " ms waiting for the accumulate lock of array '" + array.name() + "' at rank " + owner
                        + ", held by rank " + (held - 1), null, null);
            }
            idler.idle();
        }
    }

    /** Takes staging memory for a handle; when too little is free, finishes everything first and grows if needed. */
    private MemorySegment reserve(GaHandle h, long bytes) {
        if (bytes == 0) {
            return null;
        }
        long at = stagingSpace.reserve(bytes);
        if (at < 0) {
            // Every handle that holds staging is open, so after this nothing is held.
            finishAll();
            if (staging.byteSize() < bytes) {
                long size = Math.max(bytes, staging.byteSize() > Long.MAX_VALUE / 2 ? bytes : 2 * staging.byteSize());
                stagingSpace.grow(size);
                mp.deregister(stagingReg);
                mp.free(staging);
                staging = mp.allocate(size);
                stagingReg = mp.register(staging);
            }
            at = stagingSpace.reserve(bytes);
            if (at < 0) {
                throw new IllegalStateException("staging: " + bytes + " bytes do not fit in " + staging.byteSize()
                        + " with " + stagingSpace.holders() + " parts still held after finishing every operation");
            }
        }
        MemorySegment s = staging.asSlice(at, bytes);
        h.holdsStaging = true;
        h.stage = s;
        return s;
    }

    private void post(GaHandle h, MpRequest r) {
        h.pending++;
        inFlight.add(new InFlight(r, h));
        while (inFlight.size() > maxInFlight) {
            completeOldest();
        }
    }

    /** Waits for the oldest transfer in flight; a failure is kept by its handle (and thrown by that handle's wait). */
    private void completeOldest() {
        InFlight f = inFlight.poll();
        f.handle.pending--;
        try {
            mp.wait(f.request);
        } catch (RuntimeException e) {
            if (f.handle.failure == null) {
                f.handle.failure = e;
            }
        }
    }

    private void finish(GaHandle h) {
        if (h.done) {
            if (h.failure != null) {
                throw h.failure;
            }
            return;
        }
        while (h.pending > 0) {
            completeOldest();
        }
        h.done = true;
        open.remove(h);
        if (h.failure == null && h.unpack != null) {
            for (long[] u : h.unpack) {
                MemorySegment.copy(h.stage, u[0], h.user, u[1], u[2]);
            }
        }
        if (h.holdsStaging) {
            h.holdsStaging = false;
            stagingSpace.release();
        }
        if (h.failure != null) {
            throw h.failure;
        }
    }

    private void finishQuietly(GaHandle h) {
        try {
            finish(h);
        } catch (RuntimeException e) {
            // Kept by the handle: its own nbWait reports it.
        }
    }

    /** Finishes every operation in flight; throws the first failure after all are finished. */
    private void finishAll() {
        RuntimeException first = null;
        for (GaHandle h : List.copyOf(open)) {
            try {
                finish(h);
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public String toString() {
        return "GlobalArrays{rank " + rank() + " of " + size() + ", " + arrays.size() + " arrays, " + open.size()
                + " operations in flight" + (closed ? ", closed" : "") + "}";
    }

    static String patch(int[] lo, int[] hi) {
        return Arrays.toString(lo) + ".." + Arrays.toString(hi);
    }
}
