package dev.gdasync.libmp.mpj;

// Why this file is long: it is MPJ's whole xdev.Device (init and finish, sends, receives, probes, peek, waits, the
// rendezvous reads and the failure of every pending request) around one lock, whose invariants (a request is pending
// until finished, a matched message is bound to one receive, a FIN follows every read) would otherwise spread over
// several classes; the per-peer fragments, credits, matching, buffers and window live in classes of their own, and the
// sends and waits of streams in StreamPath, which reaches the device's state through the few accessors marked for it.

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import mpjbuf.Buffer;
import mpjdev.Request;
import mpjdev.Status;
import xdev.Device;
import xdev.ProcessID;
import xdev.XDevException;

import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

/**
 * MPJ Express's device over gdasync: MPJ's {@code mpi} and {@code mpjdev} layers (communicators, groups, collectives,
 * datatypes) run unchanged on top, and every message goes over libmp's point-to-point between the job's ranks
 * (shared memory on one host, UCX between hosts). {@link MpjMain} installs it before the program's
 * {@code MPI.Init}, which then calls {@link #init}.
 *
 * <p>Messages travel as fragments that the sender writes into its ring of receive slots at the receiver, one-sided
 * (stores on one host, puts between hosts; {@link PeerChannel}, {@link SlotRings}): the device posts no receives, so libmp's own two-sided calls, and the layers
 * built on them, run on the same Mp beside MPJ. A message
 * is matched against the posted receives, in their order, when its header arrives (its bytes then go straight into
 * the receive's buffer), else once it arrived completely; unmatched, it waits among the unexpected messages in arrival
 * order. A peer's messages arrive one after the other, so per (source, tag, context) messages keep their order. A synchronous send
 * completes when the receiver matched it (the receiver acknowledges).
 *
 * <p>Threads: every call may come from any thread; the state is guarded by one lock, and MPJ's completion handlers run
 * outside it. A failure (a rank gone, the job aborted, a request that failed) fails every pending request and every
 * later call with an {@link XDevException} whose message says why and names the rank.
 */
public final class GdasyncDevice implements Device {
    /** Receive slots per peer (and as many send slots): {@code -Dgdasync.mpj.slots}, default 16. */
    public static final String SLOTS_PROPERTY = "gdasync.mpj.slots";
    /** Bytes per slot, the largest fragment: {@code -Dgdasync.mpj.slot.bytes}, default 32 KiB. */
    public static final String SLOT_BYTES_PROPERTY = "gdasync.mpj.slot.bytes";
    /**
     * The smallest message sent by rendezvous (read by the receiver straight from the sender's copy) instead of
     * through the slots: {@code -Dgdasync.mpj.rendezvous.bytes}, default 32 KiB. Messages with serialized objects always
     * go through the slots.
     */
    public static final String RENDEZVOUS_BYTES_PROPERTY = "gdasync.mpj.rendezvous.bytes";
    /**
     * Each rank's rendezvous area, where its large messages wait to be read: {@code -Dgdasync.mpj.rendezvous.pool.bytes},
     * default 16 MiB; 0 sends every message through the slots. A large message that finds no room there goes into an
     * extent of the area ({@link #RENDEZVOUS_GROW_PROPERTY}), else through the slots.
     */
    public static final String RENDEZVOUS_POOL_PROPERTY = "gdasync.mpj.rendezvous.pool.bytes";
    /**
     * How far each rank's rendezvous area may grow, on demand, for large messages to ranks of its host once it is full:
     * {@code -Dgdasync.mpj.rendezvous.grow.bytes}, default 256 MiB, in extents as large as the area (or the message);
     * 0: it never grows. Extents are kept until the process leaves the job.
     */
    public static final String RENDEZVOUS_GROW_PROPERTY = "gdasync.mpj.rendezvous.grow.bytes";

    /** How long {@link #finish} waits for peers to read this rank's rendezvous messages once all else was sent. */
    private static final long FIN_WAIT_NANOS = 5_000_000_000L;

    /** The high half of every rank's process id: ids only meet ids of the same job. */
    private static final long JOB_BITS = 0x6764617379_6E63L;

    private final Object lock = new Object();
    private Mp mp;
    private EnvBootstrap bootstrap;
    private boolean ownsMp;
    private int rank;
    private int size;
    private ProcessIds ids;
    private PeerChannel[] channels;
    private DeviceWindow window;
    private SlotRings rings;
    /** The NIC's progress for memory that peers put into, or null where their puts land without help. */
    private WaitProgress putProgress;
    private RendezvousPool pool;
    /** Where the rendezvous area grows (on one host). */
    private AreaExtents extents;
    /** MPJ's buffer factory while the device runs (large buffers in the rendezvous area), or null. */
    private RegisteredBuffers buffers;
    private int rendezvousBytes;
    /** The rendezvous area's size: 0 when there is none. */
    private int areaBytes;
    private final Matching matching = new Matching();
    /** Rendezvous reads that wait for the program's stream sends to their sender to be rung (between hosts). */
    private final java.util.ArrayDeque<HeldRead> heldReads = new java.util.ArrayDeque<>();

    /** A matched rendezvous message not read yet, since {@code since} ({@link System#nanoTime}). */
    private record HeldRead(Inbound m, DeviceRequest r, MemorySegment target, long since) {
    }
    /** Completed requests not yet seen by a wait or a test, in completion order: what {@link #peek} hands out. */
    private final RequestList completed = new RequestList(RequestList.Kind.COMPLETED);
    private final RequestList pending = new RequestList(RequestList.Kind.PENDING);
    /** Why the device failed; read without the lock by the waits of streams. */
    private volatile String failure;
    private boolean finished;
    /** The device closed the Mp it made: the process is ending. */
    private boolean left;
    /** Sends rung and requests waited for by streams. */
    private StreamPath streams;
    // Made once: method references made per progress call cost an allocation each on the small-message path.
    private final Consumer<Inbound> onStarted = this::started;
    private final Consumer<Inbound> onArrived = this::arrived;
    private final Consumer<DeviceRequest> onSendCopied = this::sendCopied;
    private final Consumer<DeviceRequest> onAcknowledged = this::acknowledged;
    // A stream rang a send prepared for it: it completes as a standard send whose bytes are in a send slot.
    private final Consumer<DeviceRequest> onStreamSendRung = r -> finish(r, ids.sendStatus(r.peer, r.tag), null);

    /** A device that joins the job of the environment ({@code scripts/mprun --mpj}) when MPJ initializes it. */
    public GdasyncDevice() {
    }

    /**
     * A device over an Mp the caller made (and closes after {@code MPI.Finalize}).
     *
     * @param mp the job's Mp; the device makes one-sided calls only on it, so the caller's own calls (two-sided too)
     *           go on beside MPJ's messages
     */
    public GdasyncDevice(Mp mp) {
        this.mp = java.util.Objects.requireNonNull(mp, "mp must not be null");
    }

    /**
     * Makes this device the one MPJ Express's {@code MPI.Init} uses in this JVM: MPJ's device layer takes a device
     * already set in {@code mpjdev.javampjdev.MPJDev.dev} instead of building one by the name in its arguments. The
     * device is put back there after each {@code MPI.Finalize}, so that the program may call {@code MPI.Init} again,
     * as MPJ allows.
     *
     * @param device the device
     * @throws IllegalStateException if MPJ already has a device
     */
    public static void install(GdasyncDevice device) {
        MpjDeviceSlot.install(device);
    }

    @Override
    public ProcessID[] init(String[] args) throws XDevException {
        if (ids != null) {
            return initAgain(args);
        }
        // The settings first: a mistake leaves the job untouched.
        int slots = intProperty(SLOTS_PROPERTY, 16);
        int slotBytes = intProperty(SLOT_BYTES_PROPERTY, 32 * 1024);
        if (slots < 1 || slots > 1024) {
            throw new XDevException(SLOTS_PROPERTY + " must be from 1 to 1024, got " + slots);
        }
        if (slotBytes < 2 * Frames.HEADER || slotBytes > (1 << 24) || slotBytes % 8 != 0) {
            throw new XDevException(SLOT_BYTES_PROPERTY + " must be a multiple of 8 from " + 2 * Frames.HEADER + " to "
                    + (1 << 24) + ", got " + slotBytes);
        }
        int rdvBytes = intProperty(RENDEZVOUS_BYTES_PROPERTY, 32 * 1024);
        int poolBytes = intProperty(RENDEZVOUS_POOL_PROPERTY, 16 << 20);
        if (rdvBytes < 1) {
            throw new XDevException(RENDEZVOUS_BYTES_PROPERTY + " must be at least 1, got " + rdvBytes);
        }
        if (poolBytes < 0 || poolBytes > (1 << 30) || poolBytes % 64 != 0) {
            throw new XDevException(RENDEZVOUS_POOL_PROPERTY + " must be a multiple of 64 from 0 to " + (1 << 30)
                    + ", got " + poolBytes);
        }
        long growBytes = longProperty(RENDEZVOUS_GROW_PROPERTY, 256L << 20);
        if (growBytes < 0 || growBytes > (1L << 40)) {
            throw new XDevException(RENDEZVOUS_GROW_PROPERTY + " must be from 0 to " + (1L << 40) + ", got " + growBytes);
        }
        if (mp == null) {
            try {
                bootstrap = EnvBootstrap.fromEnvironment();
            } catch (RuntimeException e) {
                throw new XDevException("MPJ over gdasync runs in the ranks of scripts/mprun --mpj (or any launcher that "
                        + "sets GDASYNC_RANK, GDASYNC_SIZE, GDASYNC_RENDEZVOUS ...): " + e.getMessage());
            }
            try {
                mp = Mp.init(bootstrap);
            } catch (RuntimeException e) {
                bootstrap.close();
                throw new XDevException("MPJ over gdasync could not join the job: " + e.getMessage());
            }
            ownsMp = true;
            // The device stays in the job from one MPI.Finalize to the next MPI.Init (below): it leaves when the
            // process ends.
            Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("gdasync-mpj-leave").unstarted(this::leave));
        }
        rank = mp.rank();
        size = mp.size();
        checkRank(args);
        try {
            window = new DeviceWindow(mp, poolBytes);
            rings = new SlotRings(mp, slots, slotBytes);
        } catch (RuntimeException e) {
            throw new XDevException("MPJ over gdasync could not make its windows: " + e.getMessage());
        }
        putProgress = mp.nic().waitProgress();
        pool = new RendezvousPool(poolBytes);
        extents = new AreaExtents(mp, poolBytes, growBytes);
        streams = new StreamPath(this, new StreamWords(mp));
        rendezvousBytes = rdvBytes;
        areaBytes = poolBytes;
        if (poolBytes > 0) {
            buffers = RegisteredBuffers.install(lock, pool, window.pool(), extents, rdvBytes);
        }
        ids = new ProcessIds(size);
        channels = new PeerChannel[size];
        synchronized (lock) {
            for (int p = 0; p < size; p++) {
                if (p != rank) {
                    channels[p] = new PeerChannel(mp, p, rings, slots, slotBytes, window);
                }
            }
        }
        MpjGdasync.installed(this);
        return ids.all();
    }

    private void checkRank(String[] args) {
        if (args != null && args.length > 0) {
            try {
                int given = Integer.parseInt(args[0].strip());
                if (given != rank) {
                    throw new XDevException("MPI.Init was given rank " + given + " but this process is rank " + rank
                            + " of the gdasync job");
                }
            } catch (NumberFormatException e) {
                throw new XDevException("MPI.Init's first argument must be this process's rank, got '" + args[0] + "'");
            }
        }
    }

    /**
     * {@code MPI.Init} after {@code MPI.Finalize}, which MPJ Express allows (its own test suite does it ten times in a
     * row, then once per case): the device never left the job (its channels, slots and credits are as
     * {@link #finish} left them, and messages the peers sent meanwhile wait among the unexpected ones), so it only
     * opens again. Requests of the last run that nobody waited for are forgotten.
     */
    private ProcessID[] initAgain(String[] args) {
        checkRank(args);
        synchronized (lock) {
            if (!finished) {
                throw new XDevException("MPI.Init refused: MPJ over gdasync on rank " + rank + " is initialized already"
                        + " (MPI.Finalize first)");
            }
            if (failure != null) {
                throw new XDevException("MPI.Init refused: " + failure);
            }
            if (left) {
                throw new XDevException("MPI.Init refused: MPJ over gdasync on rank " + rank + " has left the job");
            }
            finished = false;
            completed.clear();
            progressLocked();
        }
        if (areaBytes > 0) {
            buffers = RegisteredBuffers.install(lock, pool, window.pool(), extents, rendezvousBytes);
        }
        MpjGdasync.installed(this);
        return ids.all();
    }

    /**
     * Leaves the job, when the process ends (a shutdown hook): closes the Mp the device made, which meets every rank
     * once (a barrier of the bootstrap). Nothing when the program is between {@code MPI.Init} and
     * {@code MPI.Finalize} (the process just ends, and the other ranks hear it is gone), nor for an Mp the caller made.
     */
    void leave() {
        synchronized (lock) {
            if (!ownsMp || !finished || left) {
                return;
            }
            left = true;
        }
        try {
            mp.close();
        } catch (RuntimeException e) {
            if (failure == null) {
                System.err.println("MPJ over gdasync, rank " + rank + ": leaving the job failed: " + e.getMessage());
            }
        } finally {
            bootstrap.close();
        }
    }

    private static int intProperty(String name, int otherwise) {
        String v = System.getProperty(name);
        if (v == null) {
            return otherwise;
        }
        try {
            return Integer.parseInt(v.strip());
        } catch (NumberFormatException e) {
            throw new XDevException(name + " must be a whole number, got '" + v + "'");
        }
    }

    private static long longProperty(String name, long otherwise) {
        String v = System.getProperty(name);
        if (v == null) {
            return otherwise;
        }
        try {
            return Long.parseLong(v.strip());
        } catch (NumberFormatException e) {
            throw new XDevException(name + " must be a whole number, got '" + v + "'");
        }
    }

    /** @return the Mp messages travel over (null before {@link #init}) */
    Mp mp() {
        return mp;
    }

    // ---- what the stream path (StreamPath) uses ----

    /** @return the lock that guards the device's state */
    Object lock() {
        return lock;
    }

    /** @return the device's stream path (after {@link #init}) */
    StreamPath streams() {
        requireInitialized();
        return streams;
    }

    /** @return this rank */
    int rank() {
        return rank;
    }

    /** @return the rank of a destination's id; throws naming the call when it is not one of this job's */
    int rankOf(String call, ProcessID dst) {
        requireInitialized();
        return ids.rankOf(call, "destination", dst);
    }

    /** @return the channel to a peer (null for this rank) */
    PeerChannel channel(int peer) {
        return channels[peer];
    }

    /** @return the device's window (credit words, rendezvous area) */
    DeviceWindow window() {
        return window;
    }

    /** @return why the device failed, or null; any thread */
    String failure() {
        return failure;
    }

    /** A request the device will complete (or fail with every other pending one). Under the lock. */
    void track(DeviceRequest r) {
        pending.add(r);
    }

    /** Moves every channel on, as each call does, after refusing the call if the device failed or finished. Under the lock. */
    void progressHealthy(String call) {
        requireHealthy(call);
        progressLocked();
        requireHealthy(call);
    }

    /** Moves every channel on. Under the lock. */
    void progressUnderLock() {
        progressLocked();
    }

    /** @return an idler for a thread waiting on the device, parked through the NIC */
    BackoffIdler waitIdler() {
        return idler();
    }

    @Override
    public int getSendOverhead() {
        return 0;
    }

    @Override
    public int getRecvOverhead() {
        return 0;
    }

    @Override
    public ProcessID id() {
        requireInitialized();
        return ids.of(rank);
    }

    @Override
    public void finish() throws XDevException {
        requireInitialized();
        synchronized (lock) {
            if (buffers != null && !finished) {
                // The program is done with its messages: the senders of those still read in place may free them.
                buffers.returnAllLent();
            }
        }
        BackoffIdler idler = idler();
        long sentAt = 0;
        while (true) {
            synchronized (lock) {
                if (finished) {
                    return;
                }
                progressLocked();
                boolean sent = true;
                boolean idle = true;
                for (PeerChannel c : channels) {
                    // A peer gone cannot read this rank's rendezvous messages any more: nothing to wait for.
                    boolean gone = c == null || mp.linkFailure(c.peer) != null;
                    sent &= gone || c.allSent();
                    idle &= gone || c.idle();
                }
                if (sent && sentAt == 0) {
                    sentAt = System.nanoTime();
                }
                // A message copied into the area that no receive ever took (an erroneous program) must not hold
                // MPI.Finalize forever: its reader has had FIN_WAIT_NANOS since everything else went out.
                boolean waitedEnough = sentAt != 0 && System.nanoTime() - sentAt > FIN_WAIT_NANOS;
                if (idle || waitedEnough || failure != null) {
                    finished = true;
                    break;
                }
            }
            idler.idle();
        }
        MpjGdasync.installed(null);
        if (buffers != null) {
            buffers.uninstall();
            buffers = null;
        }
        // The device stays in the job (it leaves when the process ends, leave()): a later MPI.Init opens it again,
        // and MPJ finds it again in its slot.
        MpjDeviceSlot.putBackAfterFinish(this);
    }

    // ---- sends ----

    @Override
    public Request isend(Buffer buf, ProcessID dst, int tag, int context) throws XDevException {
        return post("isend", buf, dst, tag, context, false);
    }

    @Override
    public void send(Buffer buf, ProcessID dst, int tag, int context) throws XDevException {
        int peer = destination("send", buf, dst);
        MpjBuffers.Content content = MpjBuffers.read("send", peer, tag, buf);
        if (!sendWhole(peer, content, tag, context)) {
            post("send", peer, content, tag, context, false).iwait();
        }
    }

    /**
     * The lean path of a blocking send ({@link PeerChannel#sendWhole}): a small message to a peer of this host, with
     * nothing before it to that peer, is written into the peer's slot at once, with no request to wait for. A blocking
     * send has no request MPJ sees, so nothing else is owed.
     *
     * @return whether it went (false: nothing changed, and it goes the usual way)
     */
    private boolean sendWhole(int peer, MpjBuffers.Content content, int tag, int context) {
        if (peer == rank || content.hasObjects() || content.length() >= rendezvousBytes) {
            return false;
        }
        if (content.unwritten() != null) {
            content.unwritten().writeOut(); // a small message in one of the area's buffers: copied before it goes
        }
        synchronized (lock) {
            // The job's failure as the usual way's progress would find it: a send after it fails.
            return failure == null && !finished && mp.failure() == null && channels[peer].sendWhole(context, tag,
                    content.type(), content.elements(), content.memory(), content.offset(), content.length());
        }
    }

    @Override
    public Request issend(Buffer buf, ProcessID dst, int tag, int context) throws XDevException {
        return post("issend", buf, dst, tag, context, true);
    }

    @Override
    public void ssend(Buffer buf, ProcessID dst, int tag, int context) throws XDevException {
        post("ssend", buf, dst, tag, context, true).iwait();
    }

    private DeviceRequest post(String call, Buffer buf, ProcessID dst, int tag, int context, boolean sync) {
        int peer = destination(call, buf, dst);
        return post(call, peer, MpjBuffers.read(call, peer, tag, buf), tag, context, sync);
    }

    /** @return the rank a send goes to, after refusing a call before {@code MPI.Init} or without a buffer */
    private int destination(String call, Buffer buf, ProcessID dst) {
        requireInitialized();
        if (buf == null) {
            throw new XDevException(call + ": the buffer is null");
        }
        return ids.rankOf(call, "destination", dst);
    }

    /** Posts a send whose buffer was committed ({@link MpjBuffers#read}). */
    private DeviceRequest post(String call, int peer, MpjBuffers.Content content, int tag, int context, boolean sync) {
        // A large message MPJ packed into one of the area's buffers may still have the program's arrays to copy. To a
        // peer of this host that reads it in place, the request to send goes first and the copy follows in pieces the
        // peer reads as they land; otherwise the copy is made now.
        AreaBuffer telling = content.unwritten();
        if (telling != null && (peer == rank || !window.mapsPeer(peer) || content.hasObjects()
                || content.length() < rendezvousBytes)) {
            telling.writeOut();
            telling = null;
        }
        MemorySegment bytes = content.staticBytes();
        byte[] dynamic = content.dynamicBytes();
        int type = content.type();
        int elements = content.elements();
        DeviceRequest r = new DeviceRequest(this, sync ? DeviceRequest.Kind.SYNC_SEND : DeviceRequest.Kind.SEND, peer,
                tag, context, null, null);
        synchronized (lock) {
            if (failure != null || finished) { // the refusal's words are built only when it is refused
                requireHealthy(call + " to rank " + peer);
            }
            pending.add(r);
            if (peer == rank) {
                Inbound m = new Inbound(rank, context, tag, type, elements, sync, 0, (int) bytes.byteSize(),
                        dynamic == null ? 0 : dynamic.length, sync ? r : null).assemble();
                m.append(bytes, 0, (int) bytes.byteSize());
                if (dynamic != null && dynamic.length > 0) {
                    m.append(MemorySegment.ofArray(dynamic), 0, dynamic.length);
                }
                sendCopied(r);
                deliver(m);
            } else {
                PeerChannel c = channels[peer];
                long sequence = c.nextSequence();
                if (sync) {
                    c.awaitAck(sequence, r);
                }
                int flags = sync ? Frames.FLAG_SYNC : 0;
                long n = bytes.byteSize();
                boolean large = n >= rendezvousBytes && (dynamic == null || dynamic.length == 0);
                long own = large && buffers != null ? buffers.offsetOf(bytes) : -1;
                // An extent's block only to a peer of this host: one on another host could not read it (no window).
                AreaExtents.Place x = large && own < 0 && buffers != null && window.mapsPeer(peer)
                        ? buffers.extentPlaceOf(bytes) : null;
                long at = large && own < 0 && x == null ? pool.allocate(n) : -1;
                if (telling != null && own < 0 && x == null) {
                    telling.writeOut(); // (an area's buffer is always found in it: this is a safeguard)
                    telling = null;
                }
                if (own >= 0 || x != null) {
                    // MPJ packed the message in the area (or an extent of it): the receiver reads it from there, and
                    // the send completes once it was matched (ACK, the receiver reads it in place until its program is
                    // done with it) or read (FIN). MPJ frees the buffer then, but its block stays the reader's until
                    // the FIN.
                    r.awaitsRead = true;
                    if (!sync) {
                        c.awaitAck(sequence, r);
                    }
                    RendezvousPool blocks = x != null ? x.pool() : pool;
                    long offset = x != null ? x.offset() : own;
                    blocks.holdForReader(offset);
                    c.awaitFin(sequence, blocks, offset, n, true);
                    long writtenAt = telling != null ? telling.startTelling() : -1;
                    c.enqueue(x != null
                            ? new Outbound(context, tag, type, elements, flags, sequence, x.offset(), (int) n,
                                    x.extent().memory().address(), x.rkey(), writtenAt, r)
                            : new Outbound(context, tag, type, elements, flags, sequence, own, (int) n, 0, 0,
                                    writtenAt, r));
                } else if (at >= 0) {
                    // The one copy of a rendezvous: the buffer is free again once it returns, as for an eager send.
                    MemorySegment.copy(bytes, 0, window.pool(), at, n);
                    c.awaitFin(sequence, pool, at, n, false);
                    c.enqueue(new Outbound(context, tag, type, elements, flags, sequence, at, (int) n, 0, 0, -1, r));
                } else {
                    c.enqueue(new Outbound(Frames.DATA, context, tag, type, elements, flags, sequence, bytes, dynamic, r));
                }
                progressLocked();
            }
        }
        if (telling != null) {
            // Outside the lock: the copy is the program's thread's own work, in pieces the peer reads as they land.
            telling.writeOutTelling();
        }
        return r;
    }

    /** A send's bytes are all in send slots (or delivered to this rank): a standard send completes. */
    private void sendCopied(DeviceRequest r) {
        r.copied = true;
        if (r.kind == DeviceRequest.Kind.SEND && !r.awaitsRead || r.acknowledged) {
            finish(r, ids.sendStatus(r.peer, r.tag), null);
        }
    }

    /** The receiver matched a synchronous send. */
    private void acknowledged(DeviceRequest r) {
        r.acknowledged = true;
        if (r.copied) {
            finish(r, ids.sendStatus(r.peer, r.tag), null);
        }
    }

    // ---- receives ----

    @Override
    public Status recv(Buffer buf, ProcessID src, int tag, int context) throws XDevException {
        Status s = recvWhole(buf, src, tag, context);
        return s != null ? s : receive("recv", buf, src, tag, context, null).iwait();
    }

    /**
     * The lean path of a blocking receive from one rank (a ping-pong's): while nothing else of this rank's is under
     * way (no request pending, so no receive posted before it; no unexpected message; no read held back), it watches
     * the peer's ring itself, as long as its idler spins, and takes a whole small message from there straight into the
     * buffer ({@link PeerChannel#wholeMessageWaiting}): no request, no matching, no other peer's ring looked at. Anything
     * else (another kind of fragment first, nothing in the spin, a failure, a message that does not fit) goes the usual
     * way, which finds everything as it was, and keeps the usual promises (errors, a dead peer found, no busy wait).
     *
     * @return the message's status, or null (then receive it the usual way)
     */
    private Status recvWhole(Buffer buf, ProcessID src, int tag, int context) {
        if (ids == null || buf == null) {
            return null;
        }
        int peer = ids.sourceOf("recv", src);
        if (peer == ANY_SOURCE || peer == rank) {
            return null;
        }
        PeerChannel c = channels[peer];
        BackoffIdler idler = null;
        while (true) {
            synchronized (lock) {
                if (failure != null || finished || mp.failure() != null || !pending.isEmpty()
                        || !matching.noneUnexpected() || !heldReads.isEmpty()) {
                    return null;
                }
                MemorySegment slot = c.wholeMessageWaiting(tag, context);
                if (slot != null) {
                    int length = Frames.getInt(slot, Frames.STATIC_LENGTH);
                    if (!MpjBuffers.receiveWhole(buf, c.waitingSlotBuffer(), Frames.HEADER, length)) {
                        return null; // the usual way says why it does not fit
                    }
                    Status s = ids.envelope(peer, Frames.getInt(slot, Frames.TAG), Frames.getInt(slot, Frames.TYPE),
                            Frames.getInt(slot, Frames.ELEMENTS), length, new Status());
                    c.takenWhole();
                    return s;
                }
                if (c.fragmentWaiting()) {
                    return null; // another kind of fragment first
                }
            }
            if (idler == null) {
                idler = idler();
            }
            if (!idler.isSpinning()) {
                return null;
            }
            idler.idle();
        }
    }

    @Override
    public Request irecv(Buffer buf, ProcessID src, int tag, int context, Status status) throws XDevException {
        return receive("irecv", buf, src, tag, context, status);
    }

    private DeviceRequest receive(String call, Buffer buf, ProcessID src, int tag, int context, Status status) {
        requireInitialized();
        if (buf == null) {
            throw new XDevException(call + ": the buffer is null");
        }
        int peer = ids.sourceOf(call, src);
        DeviceRequest r = new DeviceRequest(this, DeviceRequest.Kind.RECEIVE, peer, tag, context, buf,
                status != null ? status : new Status());
        synchronized (lock) {
            if (failure != null || finished) { // the refusal's words are built only when it is refused
                requireHealthy(call + " from " + (peer == ANY_SOURCE ? "any rank" : "rank " + peer));
            }
            pending.add(r);
            progressLocked();
            Inbound m = matching.takeUnexpected(peer, tag, context);
            if (m != null) {
                fillGuarded(r, m);
            } else if (!r.done) {
                matching.post(r);
            }
        }
        return r;
    }

    /**
     * A message's header arrived: the first posted receive that matches takes it now, its bytes written straight into
     * the receive's buffer (unless they do not fit: then the message is assembled and the receive fails once it is
     * complete); else it is assembled on its own.
     */
    private void started(Inbound m) {
        if (m.isRendezvous()) {
            DeviceRequest r = matching.bind(m);
            if (r != null) {
                readRendezvous(m, r, MpjBuffers.target(r.buffer, m.staticLength));
            }
            return;
        }
        if (matching.bind(m) == null) {
            m.assemble();
        } else if (m.sync) {
            acknowledge(m);
        }
    }

    /**
     * Takes a matched rendezvous message from its sender's area. On one host, into a receive buffer of this rank's
     * area, it is not copied: the buffer reads the message in place ({@link RegisteredBuffers#lend}), the sender hears
     * it was matched (ACK: its send completes), and it may free the block once MPJ freed the buffer, after unpacking
     * it (FIN). Otherwise it is read into the receive's buffer, and the FIN follows at once (which also acknowledges
     * the send).
     *
     * <p>Between hosts, while the queue pair to the sender holds the program's stream sends not rung yet (a get would
     * ring them early), the read is held back ({@link #readHeldReads}) and the receive completes later: the device
     * never waits for a stream under its lock, where a stream waiting for an MPJ request would need it.
     *
     * @param r      the receive
     * @param target the receive's buffer, or null when the message is not to be read (it does not fit)
     * @return whether the message was taken now (false: its read is held back, and the receive completes then)
     */
    private boolean readRendezvous(Inbound m, DeviceRequest r, MemorySegment target) {
        if (target != null && window.readWaitsForStream(m.source)) {
            m.readHeld = true;
            heldReads.add(new HeldRead(m, r, target, System.nanoTime()));
            return false;
        }
        if (target != null && readsInPlace(m, r)) {
            PeerChannel c = channels[m.source];
            c.enqueue(Outbound.control(Frames.ACK, m.sequence));
            // At once: the sender may be waiting for it (its send completes when the message was matched).
            c.sendBacklog(onSendCopied);
        } else {
            readThenFin(m, target);
        }
        return true;
    }

    /** Reads a rendezvous message into the receive's buffer (unless null: it does not fit) and sends the FIN. */
    private void readThenFin(Inbound m, MemorySegment target) {
        if (target != null && m.beingWritten()) {
            AreaBuffer.awaitWritten(writtenWord(m), m.staticLength, m.source, writerWaits);
        }
        if (target != null && m.inExtent()) {
            MemorySegment.copy(extentMessage(m), 0, target, 0, target.byteSize());
        } else if (target != null) {
            window.read(m.source, m.rdvOffset, target);
        }
        PeerChannel c = channels[m.source];
        c.enqueue(Outbound.control(Frames.FIN, m.sequence));
        // At once: the sender may be waiting for it (its send completes when the message was read).
        c.sendBacklog(onSendCopied);
    }

    /**
     * Reads the held rendezvous messages whose senders' queue pairs no longer hold unrung stream sends, and completes
     * their receives. Under the lock.
     *
     * @throws IllegalStateException if a read waited longer than the Mp's wait timeout (a stream that never rings)
     */
    private void readHeldReads() {
        for (java.util.Iterator<HeldRead> it = heldReads.iterator(); it.hasNext(); ) {
            HeldRead h = it.next();
            Inbound m = h.m();
            if (window.readWaitsForStream(m.source)) {
                if (System.nanoTime() - h.since() > mp.config().waitTimeout().toNanos()) {
                    throw new IllegalStateException("reading a message of rank " + m.source + " waited "
                            + mp.config().waitTimeout() + " for a stream to ring the program's sends to that rank (a CPU"
                            + " get would ring them early)");
                }
                continue;
            }
            it.remove();
            readThenFin(m, h.target());
            MpjBuffers.received(h.r().buffer, m);
            finish(h.r(), ids.envelope(m, h.r().status), null);
        }
    }

    /** @return whether the receive's buffer was lent the message in place (see {@link #readRendezvous}) */
    private boolean readsInPlace(Inbound m, DeviceRequest r) {
        if (buffers == null || !window.mapsPeer(m.source) || r.buffer.offset() != 0 || m.staticLength == 0) {
            return false;
        }
        PeerChannel c = channels[m.source];
        long sequence = m.sequence;
        MemorySegment message = m.inExtent() ? extentMessage(m) : window.peerMessage(m.source, m.rdvOffset, m.staticLength);
        return buffers.lend(r.buffer.getStaticBuffer(), message, m.beingWritten() ? writtenWord(m) : null, m.source,
                writerWaits, () -> readInPlace(c, sequence));
    }

    /**
     * @return the written word of a rendezvous message its sender still writes ({@link AreaBuffer}), mapped here
     * @throws IllegalStateException if it lies outside what this rank can map of the sender's memory
     */
    private MemorySegment writtenWord(Inbound m) {
        return m.inExtent() ? extentRange(m, m.writtenAt, AreaBuffer.WORD_BYTES, "the written word of a message")
                : window.peerMessage(m.source, m.writtenAt, AreaBuffer.WORD_BYTES);
    }

    /** What a read of a message its sender still writes watches: the job's failure, and the job's wait timeout. */
    private final AreaBuffer.Waits writerWaits = new AreaBuffer.Waits() {
        @Override
        public String failure() {
            String f = failure;
            return f != null ? f : mp.failure();
        }

        @Override
        public long timeoutNanos() {
            return mp.config().waitTimeout().toNanos();
        }
    };

    /**
     * @return a rendezvous message in an extent of its sender's area, mapped here
     * @throws IllegalStateException if the NIC cannot map it (the sender's key does not grant the range)
     */
    private MemorySegment extentMessage(Inbound m) {
        return extentRange(m, m.rdvOffset, m.staticLength, "a message of " + m.staticLength + " bytes");
    }

    /**
     * @param what what the range holds, for the message
     * @return {@code length} bytes at {@code offset} of the extent a rendezvous message lies in, mapped here
     * @throws IllegalStateException if the NIC cannot map them (the sender's key does not grant the range)
     */
    private MemorySegment extentRange(Inbound m, long offset, long length, String what) {
        MemorySegment range = length < 1 ? null
                : mp.peerMemory(m.source, m.extentAddress + offset, m.extentKey, length);
        if (range == null) {
            throw new IllegalStateException("rank " + m.source + " announced " + what + " at offset " + offset
                    + " of an extent of its rendezvous area that this rank cannot map");
        }
        return range;
    }

    /** MPJ is done with a message it read in place: its sender may free it. Under the lock. */
    private void readInPlace(PeerChannel c, long sequence) {
        if (failure != null) {
            return;
        }
        try {
            c.enqueue(Outbound.control(Frames.FIN, sequence));
            c.sendBacklog(onSendCopied);
        } catch (MpException | IllegalStateException e) {
            failFrom(e);
        }
    }

    /** A message's last fragment arrived. */
    private void arrived(Inbound m) {
        DeviceRequest r = m.boundTo;
        if (r == null) {
            deliver(m);
            return;
        }
        if (m.readHeld) {
            return; // readHeldReads completes the receive
        }
        MpjBuffers.received(r.buffer, m);
        finish(r, ids.envelope(m, r.status), null);
    }

    /**
     * A message not taken when its header arrived is complete: the first posted receive that matches takes it, else
     * it waits among the unexpected messages.
     */
    private void deliver(Inbound m) {
        DeviceRequest r = matching.takePosted(m);
        if (r != null) {
            fill(r, m);
        } else {
            matching.park(m);
        }
    }

    /** Copies a matched message into the receive's buffer and completes the receive (and acknowledges a sync send). */
    private void fill(DeviceRequest r, Inbound m) {
        if (m.isRendezvous()) {
            MemorySegment target = MpjBuffers.target(r.buffer, m.staticLength);
            if (!readRendezvous(m, r, target)) {
                return; // readHeldReads completes the receive
            }
            String error = null;
            if (target == null) {
                error = MpjBuffers.notReceivable(r.toString(), r.buffer, m);
            } else {
                MpjBuffers.received(r.buffer, m);
            }
            finish(r, ids.envelope(m, r.status), error);
            return;
        }
        if (m.sync) {
            acknowledge(m);
        }
        String error = MpjBuffers.fill(r.toString(), r.buffer, m);
        finish(r, ids.envelope(m, r.status), error);
    }

    /** {@link #fill} outside {@link #progressLocked}: a rendezvous read that fails fails the device. */
    private void fillGuarded(DeviceRequest r, Inbound m) {
        try {
            fill(r, m);
        } catch (MpException | IllegalStateException e) {
            failFrom(e);
        }
    }

    private void acknowledge(Inbound m) {
        if (m.localSender != null) {
            acknowledged(m.localSender);
        } else {
            channels[m.source].enqueue(Outbound.control(Frames.ACK, m.sequence));
        }
    }

    /**
     * MPI's cancel of a request. A receive still among the posted receives (no message matched it yet) is removed from
     * them, so no later message matches it: the message it would have taken goes to the next matching receive or waits
     * among the unexpected ones. It completes as cancelled: no data, no error, MPJ's handlers not run, not handed out
     * by {@link #peek} (MPJ marks a cancelled request null), and the streams waiting on it move on. A receive that
     * matched (its bytes may still be arriving) or completed is not cancelled; nor is any send: MPI 4.0 deprecated
     * cancelling sends (docs/decisions.md, "MPI_Cancel in the MPJ device").
     *
     * @return whether the request was cancelled
     */
    boolean cancel(DeviceRequest r) {
        if (r.kind != DeviceRequest.Kind.RECEIVE) {
            return false;
        }
        synchronized (lock) {
            // No progress first: a message that arrived meanwhile, not yet seen, takes the next receive instead.
            if (r.done || !matching.unpost(r)) {
                return false;
            }
            r.cancelled = true;
            r.done = true;
            pending.remove(r);
        }
        streams.raiseWords(r);
        return true;
    }

    // ---- probes ----

    @Override
    public Status probe(ProcessID src, int tag, int context) throws XDevException {
        requireInitialized();
        int peer = ids.sourceOf("probe", src);
        BackoffIdler idler = idler();
        while (true) {
            Status s = lookFor("probe", peer, tag, context, null);
            if (s != null) {
                return s;
            }
            idler.idle();
        }
    }

    @Override
    public Status iprobe(ProcessID src, int tag, int context) throws XDevException {
        requireInitialized();
        return lookFor("iprobe", ids.sourceOf("iprobe", src), tag, context, null);
    }

    @Override
    public Status iprobe(ProcessID src, ProcessID dst, int tag, int context) throws XDevException {
        return iprobe(src, tag, context);
    }

    @Override
    public Status iprobeAndFetch(ProcessID src, ProcessID dst, int tag, int context, Buffer buf) throws XDevException {
        requireInitialized();
        if (buf == null) {
            throw new XDevException("iprobeAndFetch: the buffer is null");
        }
        return lookFor("iprobeAndFetch", ids.sourceOf("iprobeAndFetch", src), tag, context, buf);
    }

    /** One look among the unexpected messages; with a buffer, the message found is received into it. */
    private Status lookFor(String call, int peer, int tag, int context, Buffer into) {
        DeviceRequest r = null;
        synchronized (lock) {
            requireHealthy(call + " from " + (peer == ANY_SOURCE ? "any rank" : "rank " + peer));
            progressLocked();
            requireHealthy(call + " from " + (peer == ANY_SOURCE ? "any rank" : "rank " + peer));
            if (into == null) {
                Inbound m = matching.peekUnexpected(peer, tag, context);
                return m == null ? null : ids.envelope(m, new Status());
            }
            Inbound m = matching.takeUnexpected(peer, tag, context);
            if (m == null) {
                return null;
            }
            r = new DeviceRequest(this, DeviceRequest.Kind.RECEIVE, peer, tag, context, into, new Status());
            pending.add(r);
            fillGuarded(r, m);
        }
        return r.iwait();
    }

    @Override
    public Request peek() throws XDevException {
        requireInitialized();
        BackoffIdler idler = idler();
        while (true) {
            synchronized (lock) {
                if (completed.isEmpty()) {
                    progressLocked();
                }
                DeviceRequest r = completed.poll();
                if (r != null) {
                    return r;
                }
                requireHealthy("peek (a wait for any of several requests)");
            }
            idler.idle();
        }
    }

    // ---- waits ----

    /** Waits for a request; runs MPJ's handlers once; throws its error. */
    Status await(DeviceRequest r) {
        BackoffIdler idler = null;
        while (true) {
            synchronized (lock) {
                if (!r.done) {
                    progressLocked();
                }
                if (r.done) {
                    completed.remove(r);
                    break;
                }
            }
            if (idler == null) {
                idler = idler();
            }
            idler.idle();
        }
        return outcome(r);
    }

    /** @return the request's status if it completed (running MPJ's handlers once), else null */
    Status test(DeviceRequest r) {
        synchronized (lock) {
            if (!r.done) {
                progressLocked();
            }
            if (!r.done) {
                return null;
            }
            completed.remove(r);
        }
        return outcome(r);
    }

    private Status outcome(DeviceRequest r) {
        if (r.error != null) {
            throw new XDevException(r.error);
        }
        r.runHandlersOnce(r.status);
        streams.raiseWords(r);
        return r.status;
    }

    private void finish(DeviceRequest r, Status s, String error) {
        if (r.done) {
            return;
        }
        r.status = s;
        r.error = error;
        r.done = true;
        pending.remove(r);
        completed.add(r);
    }

    // ---- progress and failures ----

    /** Moves every channel on; a failure of the job or of a request fails the device. Under the lock. */
    private void progressLocked() {
        if (failure != null) {
            return;
        }
        String jobFailure = mp.failure();
        if (jobFailure != null) {
            fail("the job failed: " + jobFailure);
            return;
        }
        try {
            if (putProgress != null) {
                putProgress.progress();
            }
            for (PeerChannel c : channels) {
                if (c != null) {
                    if (c.hasStreamSends()) {
                        c.reapRung(streams.rungNumber(c.peer), onStreamSendRung);
                    }
                    c.progress(onStarted, onArrived, onSendCopied, onAcknowledged);
                }
            }
            if (!heldReads.isEmpty()) {
                readHeldReads();
            }
        } catch (MpException | IllegalStateException e) {
            failFrom(e);
        }
    }

    /**
     * Fails the device on an error of its queue pairs (an {@link MpException}, said with the job's failure when there
     * is one) or of a peer's frames or link (an {@link IllegalStateException}). Under the lock.
     */
    private void failFrom(RuntimeException e) {
        String jf = e instanceof MpException ? mp.failure() : null;
        fail(jf != null ? "the job failed: " + jf + " (" + e.getMessage() + ")" : e.getMessage());
    }

    /** Fails the device, as a failed request of its queue pairs does (the stream path's refusals). Under the lock. */
    void failUnderLock(String why) {
        fail(why);
    }

    private void fail(String why) {
        failure = "MPJ over gdasync, rank " + rank + ": " + why;
        for (DeviceRequest r : pending.snapshot()) {
            finish(r, r.status, failure + " (pending: " + r + ")");
        }
        matching.clearPosted();
        heldReads.clear();
    }

    private void requireHealthy(String call) {
        if (failure != null) {
            throw new XDevException(call + " refused: " + failure);
        }
        if (finished) {
            throw new XDevException(call + " refused: MPJ over gdasync on rank " + rank + " has finished (MPI.Finalize)");
        }
    }

    private void requireInitialized() {
        if (ids == null) {
            throw new XDevException("the gdasync device is not initialized: MPI.Init first");
        }
    }

    /** The park of a waiting thread: through the NIC, which wakes it when a peer delivers. */
    private BackoffIdler idler() {
        return new BackoffIdler(BackoffPolicy.PEER_WAIT, nanos -> mp.nic().awaitPeers(nanos, this::anyArrival));
    }

    private boolean anyArrival() {
        synchronized (lock) {
            if (failure != null || mp.failure() != null || !completed.isEmpty()) {
                return true;
            }
            if (putProgress != null) {
                putProgress.progress();
            }
            for (PeerChannel c : channels) {
                if (c != null && (c.fragmentWaiting() || c.creditsCame() || c.streamSendRung(streams.rungNumber(c.peer))
                        || mp.linkFailure(c.peer) != null)) {
                    return true;
                }
            }
            return false;
        }
    }

    @Override
    public String toString() {
        return "gdasync MPJ device" + (ids == null ? " (not initialized)" : " of rank " + rank + " of " + size);
    }
}
