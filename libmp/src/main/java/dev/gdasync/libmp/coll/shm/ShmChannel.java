package dev.gdasync.libmp.coll.shm;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.bootstrap.EnvNames;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;

/**
 * The shared-memory path of one communicator: every member's {@link ShmArea}, mapped here, and this rank's
 * sequence of collectives on it. Collectives run in the order they were posted (as MPI requires of every member):
 * the head task publishes, waits for every member to publish the same call, moves the data and finishes before
 * the next one publishes. {@link #progress} moves the head as far as it can without waiting; the communicator's
 * test and wait call it. Driven by the thread that drives the communicator; nothing here is thread-safe.
 *
 * <p>A channel exists only when every member can map every other member's memory (one host, the software NIC
 * over shared memory) and none of them turned the path off ({@value #ENABLED_PROPERTY}); {@link #open} finds that
 * out together with the members and returns null otherwise, so that all of them use the message path.
 */
public final class ShmChannel implements AutoCloseable {
    /** System property (or {@value #ENABLED_ENV}): {@code off} keeps every communicator on the message path. */
    public static final String ENABLED_PROPERTY = "gdasync.coll.shm";
    /** Environment variable read when the property is not set. */
    public static final String ENABLED_ENV = EnvNames.COLL_SHM;
    /** System property: the bytes of one slot (payloads up to this size are copied through the area). */
    public static final String SLOT_PROPERTY = "gdasync.coll.shm.slotBytes";
    /** The default slot: 64 KiB, four per member and communicator. */
    public static final long DEFAULT_SLOT_BYTES = 64 * 1024;
    /** Reductions of at most this many bytes go through the slots (every member folds every vector). */
    static final long SMALL_REDUCE_BYTES = 8 * 1024;
    /**
     * Bytes of one chunk of a fold (the scratch holds one per internal node of the tree): large enough that the
     * per-chunk work (slices, the operator's checks) is a few percent of the combining, small enough for the L2 cache.
     */
    static final long FOLD_CHUNK_BYTES = 32 * 1024;

    /** Turns the codes of a peer's call back into words for messages. */
    @FunctionalInterface
    public interface Names {
        /**
         * @param call a call read from a header, or one of this rank's
         * @return it as the user would write it, e.g. {@code allreduce of 8 bytes (INT32 SUM)}
         */
        String describe(ShmCall call);
    }

    /** An all-gather over the communicator's message path (used once, to set the channel up). */
    @FunctionalInterface
    public interface Exchange {
        /**
         * @param mine    this rank's record
         * @param mineReg its registration
         * @param all     size × mine.byteSize() bytes for every member's record, in rank order
         * @param allReg  its registration
         */
        void allgather(MemorySegment mine, MpRegistration mineReg, MemorySegment all, MpRegistration allReg);
    }

    private static final long RECORD = 32;

    final Mp mp;
    final int[] worldRanks;
    final int me;
    final ShmArea[] areas;
    final ShmArea own;
    final Names names;
    private final String name;
    private final MemorySegment ownMemory;
    private final MpRegistration ownReg;
    private final Arena scratchArena = Arena.ofShared();
    private final MemorySegment scratch;
    private final ArrayDeque<ShmTask> pending = new ArrayDeque<>();
    private final FillView view;
    /** What was last read of each member's done word (they only rise). */
    private final long[] doneSeen;
    private long seq;
    private String broken;
    private boolean closed;
    /** Whether a helper (the offload engine's collective proxy) may fill the members' buffers. */
    private boolean assisted;
    private boolean posting;
    /** Wakes the helper: rung after a non-blocking post when {@link #assisted}. */
    private Runnable bell;

    private ShmChannel(Mp mp, int[] worldRanks, int me, String name, Names names, MemorySegment ownMemory,
                       MpRegistration ownReg, ShmArea[] areas, long slotBytes) {
        this.mp = mp;
        this.worldRanks = worldRanks;
        this.me = me;
        this.name = name;
        this.names = names;
        this.ownMemory = ownMemory;
        this.ownReg = ownReg;
        this.areas = areas;
        this.own = areas[me];
        this.doneSeen = new long[areas.length];
        this.view = new FillView(areas, (m, address, key, bytes) -> mp.peerMemory(worldRanks[m], address, key, bytes));
        // One fold chunk per member is more than the tree's internal nodes need.
        this.scratch = scratchArena.allocate(FOLD_CHUNK_BYTES * Math.max(1, worldRanks.length), 64);
    }

    /**
     * Sets up the channel of a communicator, together with its other members (collective over the communicator,
     * blocking): each member allocates its area and publishes where it is; each maps the others'; all agree whether
     * every member could. Every member must call it at the same point of the communicator's sequence.
     *
     * @param mp         this rank's Mp
     * @param worldRanks the members' ranks in the Mp, in communicator order
     * @param me         this rank's index among them
     * @param name       the communicator, for messages
     * @param names      turns calls into words
     * @param exchange   an all-gather over the communicator's message path
     * @return the channel, or null when some member cannot use one (then no member does)
     */
    public static ShmChannel open(Mp mp, int[] worldRanks, int me, String name, Names names, Exchange exchange) {
        int n = worldRanks.length;
        long slotBytes = configuredSlotBytes();
        boolean enabled = enabled() && n > 1;
        MemorySegment area = enabled ? mp.allocate(ShmArea.bytesFor(slotBytes)) : null;
        MpRegistration areaReg = area == null ? null : mp.register(area);
        MemorySegment rec = mp.allocate(RECORD * (n + 1));
        MpRegistration recReg = mp.register(rec);
        ShmArea[] areas = new ShmArea[n];
        boolean usable = false;
        try {
            if (area != null) {
                new ShmArea(area, slotBytes).clear();
            }
            MemorySegment mine = rec.asSlice(0, RECORD);
            MemorySegment all = rec.asSlice(RECORD, RECORD * n);
            mine.set(ValueLayout.JAVA_LONG, 0, area == null ? 0 : area.address());
            mine.set(ValueLayout.JAVA_LONG, 8, areaReg == null ? 0 : areaReg.rkey());
            mine.set(ValueLayout.JAVA_LONG, 16, area == null ? 0 : area.byteSize());
            mine.set(ValueLayout.JAVA_LONG, 24, slotBytes);
            exchange.allgather(mine, recReg, all, recReg);
            boolean mapped = area != null;
            for (int m = 0; m < n && mapped; m++) {
                long at = RECORD * m;
                long bytes = all.get(ValueLayout.JAVA_LONG, at + 16);
                if (m == me) {
                    areas[m] = new ShmArea(area, slotBytes);
                } else if (bytes == 0 || all.get(ValueLayout.JAVA_LONG, at + 24) != slotBytes) {
                    mapped = false; // that member turned the path off, or uses other slots
                } else {
                    MemorySegment there = mp.peerMemory(worldRanks[m], all.get(ValueLayout.JAVA_LONG, at),
                            all.get(ValueLayout.JAVA_LONG, at + 8), bytes);
                    mapped = there != null;
                    areas[m] = mapped ? new ShmArea(there, slotBytes) : null;
                }
            }
            // Everyone must take the same path: agree on whether every member mapped every other.
            mine.set(ValueLayout.JAVA_LONG, 0, mapped ? 1 : 0);
            exchange.allgather(mine, recReg, all, recReg);
            usable = true;
            for (int m = 0; m < n; m++) {
                usable &= all.get(ValueLayout.JAVA_LONG, RECORD * m) == 1;
            }
            return usable ? new ShmChannel(mp, worldRanks, me, name, names, area, areaReg, areas, slotBytes) : null;
        } finally {
            mp.deregister(recReg);
            mp.free(rec);
            if (!usable && area != null) {
                mp.deregister(areaReg);
                mp.free(area);
            }
        }
    }

    /** @return whether the path is on in this process ({@value #ENABLED_PROPERTY} / {@value #ENABLED_ENV}) */
    public static boolean enabled() {
        String v = System.getProperty(ENABLED_PROPERTY, System.getenv(ENABLED_ENV));
        return v == null || v.isBlank() || !v.trim().equalsIgnoreCase("off");
    }

    private static long configuredSlotBytes() {
        long v = Long.getLong(SLOT_PROPERTY, DEFAULT_SLOT_BYTES);
        if (v < 4096 || v % 64 != 0) {
            throw new IllegalArgumentException(SLOT_PROPERTY + " must be a multiple of 64 and at least 4096, got " + v);
        }
        return v;
    }

    /** @return the number of members */
    public int size() {
        return worldRanks.length;
    }

    /** @return this rank's index */
    public int rank() {
        return me;
    }

    /** @return the bytes a slot holds */
    public long slotBytes() {
        return own.slotBytes();
    }

    /**
     * Lets a helper fill this rank's receive buffers (the offload engine's collective proxy, which the engine has
     * told where this channel's areas are): from now on the copying collectives publish what the helper needs and
     * claim their fill before doing it. Every member's engine calls it, at the channel's set-up.
     *
     * @param bell wakes the helper (see {@link #ringHelper})
     */
    public void assist(Runnable bell) {
        this.bell = java.util.Objects.requireNonNull(bell, "bell must not be null");
        assisted = true;
    }

    /**
     * Tells the helper that a non-blocking collective was posted and this rank may compute instead of filling it (the
     * helper may be asleep); nothing when no helper serves the channel. Blocking calls do not ring: their rank fills
     * its own buffer at once.
     */
    public void ringHelper() {
        if (assisted) {
            bell.run();
        }
    }

    /** @return whether a helper may fill this rank's buffers */
    boolean assisted() {
        return assisted;
    }

    /** @return the areas and mappings of this rank, for {@link Fill} */
    FillView view() {
        return view;
    }

    /**
     * @return this rank's area: address, key and bytes (what a helper maps), and the slot size
     */
    public long[] ownArea() {
        return new long[] {ownMemory.address(), ownReg.rkey(), ownMemory.byteSize(), slotBytes()};
    }

    /** @return the communicator's name, for messages */
    String name() {
        return name;
    }

    /** @return the number the next posted collective gets */
    long nextSeq() {
        return seq + 1;
    }

    /** Queues a task behind the ones posted before it and moves the queue as far as it goes without waiting. */
    void submit(ShmTask task) {
        requireUsable();
        if (task.seq != seq + 1) {
            throw new IllegalStateException(task + " is not the next collective of " + name + " (#" + (seq + 1) + ")");
        }
        seq = task.seq;
        pending.addLast(task);
        posting = true;
        try {
            progress();
        } finally {
            posting = false;
        }
    }

    /**
     * @return whether the channel is moving its tasks inside a post: on a channel with a helper a rank then claims no
     *         fill (the helper fills while the rank computes; the rank claims what is left when it tests or waits)
     */
    boolean posting() {
        return posting;
    }

    // ---- the collectives: each makes the next task, queues it and moves the queue ----

    /**
     * @return the posted barrier
     */
    public ShmTask barrier() {
        return post(new BarrierTask(this, new ShmCall(ShmCall.Kind.BARRIER, -1, 0, 0, 0)));
    }

    /**
     * @param buf   the root's data, the others' destination (all of it)
     * @param key   the key of a registration containing it
     * @param root  the root's index
     * @return the posted broadcast
     */
    public ShmTask bcast(MemorySegment buf, long key, int root) {
        return post(new BcastTask(this, new ShmCall(ShmCall.Kind.BCAST, root, buf.byteSize(), 0, 0), buf, key));
    }

    /**
     * @param send    this rank's block (all of it); may be this rank's block of recv (in place)
     * @param sendKey the key of a registration containing it
     * @param recv    size × send.byteSize() bytes or more
     * @param recvKey the key of a registration containing it
     * @return the posted all-gather
     */
    public ShmTask allgather(MemorySegment send, long sendKey, MemorySegment recv, long recvKey) {
        ShmCall call = new ShmCall(ShmCall.Kind.ALLGATHER, -1, send.byteSize(), 0, 0);
        return post(new AllgatherTask(this, call, send, sendKey, recv, recvKey));
    }

    /**
     * @param send    size × block bytes or more
     * @param sendKey the key of a registration containing it
     * @param recv    size × block bytes or more, not overlapping send
     * @param recvKey the key of a registration containing it
     * @param block   bytes per pair of members
     * @return the posted all-to-all
     */
    public ShmTask alltoall(MemorySegment send, long sendKey, MemorySegment recv, long recvKey, long block) {
        ShmCall call = new ShmCall(ShmCall.Kind.ALLTOALL, -1, block, 0, 0);
        return post(new AlltoallTask(this, call, send, sendKey, recv, recvKey));
    }

    /**
     * @param send       the send buffer
     * @param sendKey    the key of a registration containing it
     * @param sendCounts bytes for each member
     * @param sendDispls where they start in send
     * @param recv       the receive buffer, not overlapping send
     * @param recvKey    the key of a registration containing it
     * @param recvCounts bytes from each member
     * @param recvDispls where they land in recv
     * @return the posted all-to-all
     */
    public ShmTask alltoallv(MemorySegment send, long sendKey, long[] sendCounts, long[] sendDispls,
                             MemorySegment recv, long recvKey, long[] recvCounts, long[] recvDispls) {
        ShmCall call = new ShmCall(ShmCall.Kind.ALLTOALLV, -1, 0, 0, 0);
        return post(new AlltoallvTask(this, call, send, sendKey, sendCounts, sendDispls, recv, recvKey, recvCounts,
                recvDispls));
    }

    /**
     * An allreduce, reduce or reduce-scatter.
     *
     * @param kind      {@link ShmCall.Kind#ALLREDUCE}, {@link ShmCall.Kind#REDUCE} or
     *                  {@link ShmCall.Kind#REDUCE_SCATTER}
     * @param send      this rank's vector (reduce-scatter: size × count elements)
     * @param sendKey   the key of a registration containing it
     * @param recv      the result (count elements; null on a reduce's non-root)
     * @param recvKey   the key of a registration containing it
     * @param count     the call's count (reduce-scatter: elements per member)
     * @param elemBytes bytes of one element
     * @param type      the element type's code (&gt; 0)
     * @param op        the operator's code (&gt; 0)
     * @param root      the root (reduce), else -1
     * @param combiner  the operator on two vectors
     * @return the posted reduction
     */
    public ShmTask reduction(ShmCall.Kind kind, MemorySegment send, long sendKey, MemorySegment recv,
                             long recvKey, long count, int elemBytes, int type, int op, int root, Combiner combiner) {
        ShmCall call = new ShmCall(kind, root, count * elemBytes, type, op);
        long elems = kind == ShmCall.Kind.REDUCE_SCATTER ? count * size() : count;
        return post(new ReduceTask(this, call, send, sendKey, recv, recvKey, elems, elemBytes, combiner));
    }

    private ShmTask post(ShmTask task) {
        submit(task);
        return task;
    }

    /** Moves the queued tasks as far as they go without waiting. */
    public void progress() {
        ShmTask head;
        while ((head = pending.peekFirst()) != null && head.advance()) {
            pending.pollFirst();
        }
        // The tasks behind the head publish as soon as the areas let them: the other members (and a helper) can then
        // work on them before this rank comes back to them.
        boolean first = true;
        for (ShmTask t : pending) {
            if (!first && !t.publishEarly()) {
                break;
            }
            first = false;
        }
    }

    /** @return how many posted collectives have not finished */
    public int active() {
        return pending.size();
    }

    /**
     * Looks for a reason why a task can never finish: the job failed, or the link to a member it waits for did.
     *
     * @param task a queued task
     * @return the reason, naming the member, or null
     */
    public String trouble(ShmTask task) {
        String failed = mp.failure();
        if (failed != null) {
            return "the job failed: " + failed;
        }
        int m = task.awaited();
        for (int i = 0; i < worldRanks.length; i++) {
            if (i != me && (m < 0 || m == i)) {
                String why = mp.linkFailure(worldRanks[i]);
                if (why != null) {
                    return "rank " + i + " of " + name + " (world rank " + worldRanks[i] + ") is unreachable: " + why;
                }
            }
        }
        return null;
    }

    /**
     * Gives up on the channel: every queued task fails with the reason, and later calls are refused (a member left
     * the sequence, so the members are no longer in step).
     *
     * @param why the reason
     */
    public void abandon(String why) {
        if (broken == null) {
            broken = why;
        }
        for (ShmTask t : pending) {
            t.abandon(why);
        }
        pending.clear();
    }

    /** @return why the channel was abandoned, or null while it is usable */
    public String broken() {
        return broken;
    }

    private void requireUsable() {
        if (closed) {
            throw new IllegalStateException("the shared-memory channel of " + name + " is closed");
        }
        if (broken != null) {
            throw new IllegalStateException("collectives on " + name + " are unusable: " + broken);
        }
    }

    /**
     * Finds a member whose done word is still below {@code seq}, reading a member's word only when what was last read
     * of it is below (in a loop of collectives the words read for one publication usually suffice for the next, so a
     * publication rarely costs a cross-core read per member).
     *
     * @param seq the collective every member must have finished
     * @return such a member, or -1 when none
     */
    int lateReader(long seq) {
        for (int m = 0; m < doneSeen.length; m++) {
            if (doneSeen[m] < seq) {
                doneSeen[m] = areas[m].done();
                if (doneSeen[m] < seq) {
                    return m;
                }
            }
        }
        return -1;
    }

    /** @return the fold scratch (one {@link #FOLD_CHUNK_BYTES} chunk per member) */
    MemorySegment scratch() {
        return scratch;
    }

    /**
     * A member's registered buffer mapped here (the mapped path), or null.
     *
     * @param m    the member
     * @param keys address, key and bytes as the member published them
     * @return the memory
     */
    MemorySegment map(int m, long[] keys) {
        return view.map(m, keys);
    }

    /**
     * Frees this rank's area once every member has finished reading it (at most one second: a member that does not
     * get there, dead or stuck, keeps the area mapped and it is left allocated rather than reused under its reads).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        abandon("its Collectives closed");
        long deadline = System.nanoTime() + 1_000_000_000L;
        boolean quiet = mp.failure() == null;
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.SPIN_THEN_YIELD);
        for (int m = 0; m < areas.length && quiet; m++) {
            while (m != me && quiet && areas[m].done() < seq) {
                quiet = System.nanoTime() - deadline < 0 && mp.failure() == null;
                idler.idle();
            }
        }
        if (quiet) {
            mp.deregister(ownReg);
            mp.free(ownMemory);
        }
        scratchArena.close();
    }

    @Override
    public String toString() {
        return "the shared-memory channel of " + name;
    }
}
