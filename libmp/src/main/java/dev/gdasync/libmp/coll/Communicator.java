package dev.gdasync.libmp.coll;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.reduce.CollBuffers;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.coll.shm.ShmCall;
import dev.gdasync.libmp.coll.shm.ShmChannel;
import dev.gdasync.libmp.coll.shm.ShmTask;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;

// Why this file is long: it is the public face of every collective (MPI's and NCCL's forms, blocking and not), each a
// checked entry that hands over to the shared-memory channel or the message path, which live in their own classes.
/**
 * An ordered group of an Mp's ranks with a context id of its own (MPI's communicator). Ranks of a communicator are
 * numbered 0 … size − 1; {@link #worldRank} and {@link #rankOf} translate. The members must post this communicator's
 * collectives in the same order (as MPI requires). When every member can map every other's memory (one host) the
 * collectives take the shared-memory path ({@link #sharedMemory}): the members publish into areas the others map
 * and check that they all make the same call before any data moves. Otherwise every collective message carries the
 * context id and the collective's number on this communicator, so two communicators' traffic never mixes.
 *
 * <p>Collectives take registered buffers, with sizes in bytes or (the typed ones) elements; each call checks its
 * arguments before it changes anything. Driven by the thread that drives its {@link Collectives}.
 */
public final class Communicator {
    /** The colour of a rank that joins no communicator in {@link #split}. */
    public static final int UNDEFINED = -1;
    /** The peer of a one-sided {@link #isendrecv}: no message in that direction (MPI's {@code MPI_PROC_NULL}). */
    public static final int PROC_NULL = -2;

    /** Bits of a message-path step number that count the steps of one call (the rest is the call's number). */
    private static final int STEP_BITS = 12;
    /** How long a wait on the message path goes without finishing before it reads its peers' posted calls. */
    private static final long STALL_NANOS = 250_000_000L;

    private final Collectives owner;
    private final int context;
    private final int[] worldRanks;
    private final int rank;
    /** The offload engine's collective numbers (one per schedule). */
    private int nextSeq;
    /** The number of the next call the user makes on the message path. */
    private int nextCall;
    /** The message path's call in progress whose steps are collectives of their own (a reduction), or -1. */
    private int inCall = -1;
    private ShmCall callSig;
    private int callStep;
    /** When the call in progress times out (System.nanoTime): one timeout for all its steps. */
    private long callDeadline;
    /** The numbers of the set-up's exchanges: -1, -2. */
    private int setupSeq;
    private HostLayout layout;
    /** The shared-memory path, when every member can map every other's memory (one host); else null. */
    private ShmChannel channel;
    /** The reducing collectives of the message path, made on first use. */
    private PairwiseReductions pairwise;
    /**
     * How this communicator's waits idle: a short spin, then yields (about ten milliseconds of them while every rank
     * has a CPU, a few when oversubscribed) before parking. A long spin held the CPU that the peer being waited for,
     * or its JIT compiler, needed: on 2 CPUs the first thousands of collectives took milliseconds each that way.
     */
    private final BackoffIdler idler = new BackoffIdler(BackoffPolicy.PEER_WAIT);
    /** The message path's waits: nobody wakes them, so they spin, then yield (to the NIC's agent among others). */
    private final BackoffIdler messageIdler = new BackoffIdler(BackoffPolicy.SPIN_THEN_YIELD);
    /** Whether the non-blocking form being called is a blocking form's (whose rank waits at once). */
    private boolean blockingCall;
    /** Tests of unfinished shared-memory requests since the last look for a dead member. */
    private int unfinishedTests;

    Communicator(Collectives owner, int context, int[] worldRanks) {
        this.owner = owner;
        this.context = context;
        this.worldRanks = worldRanks;
        int me = owner.mp().rank();
        int r = -1;
        for (int i = 0; i < worldRanks.length; i++) {
            if (worldRanks[i] == me) {
                r = i;
            }
        }
        this.rank = r;
    }

    /** @return the collectives (and through them the Mp) this communicator belongs to */
    public Collectives collectives() {
        return owner;
    }

    /** @return this rank's number in the communicator */
    public int rank() {
        return rank;
    }

    /** @return the number of ranks */
    public int size() {
        return worldRanks.length;
    }

    /** @return the context id: the same on every member, different from every other communicator of each member */
    public int context() {
        return context;
    }

    /**
     * @param commRank a rank of this communicator
     * @return its rank in the Mp
     * @throws IllegalArgumentException if it is not in 0 … size − 1
     */
    public int worldRank(int commRank) {
        requireRank("commRank", commRank);
        return worldRanks[commRank];
    }

    /**
     * @param worldRank a rank of the Mp
     * @return whether it is a member
     */
    public boolean contains(int worldRank) {
        return indexOf(worldRank) >= 0;
    }

    /**
     * @param worldRank a rank of the Mp
     * @return its rank in this communicator
     * @throws IllegalArgumentException if it is not a member
     */
    public int rankOf(int worldRank) {
        int i = indexOf(worldRank);
        if (i < 0) {
            throw new IllegalArgumentException("world rank " + worldRank + " is not a member of " + this);
        }
        return i;
    }

    private int indexOf(int worldRank) {
        for (int i = 0; i < worldRanks.length; i++) {
            if (worldRanks[i] == worldRank) {
                return i;
            }
        }
        return -1;
    }

    // ---- the shared-memory path ----

    /**
     * Sets up the shared-memory path with the other members (collective over this communicator, blocking; the
     * collectives' constructor and {@link #split} call it): when every member can map every other's memory,
     * collectives run through a channel of shared areas instead of messages. On the offload engine the proxy is told
     * about the channel and fills the members' buffers while they compute.
     */
    void openChannel() {
        Engine engine = owner.engine();
        if (size() < 2) {
            return;
        }
        for (int w : worldRanks) {
            if (engine.hostOf(w) != engine.hostOf(worldRanks[0])) {
                return; // the offload engine's members on several hosts: its hierarchical schedules serve them
            }
        }
        channel = ShmChannel.open(owner.mp(), worldRanks, rank, "communicator " + context, CallNames.INSTANCE,
                this::messageAllgather);
        if (channel != null) {
            owner.channelOpened(channel);
            engine.channelOpened(channel, context);
        }
    }

    /** @return whether this communicator's collectives take the shared-memory path */
    public boolean sharedMemory() {
        return channel != null;
    }

    /** The message path's all-gather, whatever the channel (its set-up runs over it). */
    private void messageAllgather(MemorySegment send, MpRegistration sendReg, MemorySegment recv,
                                  MpRegistration recvReg) {
        // Numbered below 0, so that the user's collectives keep their numbers from 0 whatever path they take.
        CollOp op = new CollOp("shared-memory set-up", context, --setupSeq);
        flatAllgather(op, send, sendReg, recv, recvReg);
        owner.engine().requireHealthy();
        owner.engine().start(op);
        wait(new CollRequest(context, op));
    }

    /** Makes a blocking form's non-blocking call: nothing wakes the helper for it. */
    private CollRequest blocking(java.util.function.Supplier<CollRequest> call) {
        blockingCall = true;
        try {
            return call.get();
        } finally {
            blockingCall = false;
        }
    }

    /**
     * @return the request of a task posted on the channel; a non-blocking call (not one made for a blocking form,
     *         whose rank fills its own buffer at once) also wakes the channel's helper, if it has one
     */
    private CollRequest posted(ShmTask task) {
        if (!blockingCall) {
            channel.ringHelper();
        }
        return new CollRequest(context, task);
    }

    /**
     * @return the channel, to post on; a call is refused before anything is posted when the channel was abandoned or
     *         the engine's proxy is gone
     */
    private ShmChannel channel() {
        owner.requireOpen();
        String engineFailure = owner.engine().failure();
        if (engineFailure != null) {
            channel.abandon(engineFailure);
        }
        String broken = channel.broken();
        if (broken != null) {
            throw new CollectiveException("collectives on " + this + " are unusable: " + broken, null);
        }
        return channel;
    }

    // ---- split ----

    /**
     * Splits this communicator (MPI's {@code MPI_Comm_split}); collective over this communicator, blocking. The
     * ranks with the same colour form a new communicator, ordered by key and then by their rank here.
     *
     * @param colour a colour &gt;= 0, or {@link #UNDEFINED} to join none
     * @param key    the order among the ranks of one colour
     * @return the new communicator, or empty for {@link #UNDEFINED}
     * @throws IllegalArgumentException if the colour is negative and not {@link #UNDEFINED}
     */
    public Optional<Communicator> split(int colour, int key) {
        if (colour < 0 && colour != UNDEFINED) {
            throw new IllegalArgumentException("colour must be >= 0 or UNDEFINED (-1), got " + colour);
        }
        Mp mp = owner.mp();
        int n = size();
        MemorySegment mem = mp.allocate(12L * (n + 1));
        MpRegistration reg = mp.register(mem);
        try {
            MemorySegment mine = mem.asSlice(0, 12);
            MemorySegment all = mem.asSlice(12, 12L * n);
            mine.set(ValueLayout.JAVA_INT, 0, colour);
            mine.set(ValueLayout.JAVA_INT, 4, key);
            mine.set(ValueLayout.JAVA_INT, 8, owner.nextContext());
            allgather(mine, reg, all, reg);
            int base = 0;
            TreeSet<Integer> colours = new TreeSet<>();
            List<int[]> members = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int c = all.get(ValueLayout.JAVA_INT, 12L * r);
                base = Math.max(base, all.get(ValueLayout.JAVA_INT, 12L * r + 8));
                if (c != UNDEFINED) {
                    colours.add(c);
                }
                if (c == colour && colour != UNDEFINED) {
                    members.add(new int[] {all.get(ValueLayout.JAVA_INT, 12L * r + 4), r});
                }
            }
            // Every member of the parent moves past every context this split hands out, so ids never repeat.
            owner.contextsUsedBelow(base + colours.size());
            if (colour == UNDEFINED) {
                return Optional.empty();
            }
            members.sort(Comparator.<int[]>comparingInt(m -> m[0]).thenComparingInt(m -> m[1]));
            int[] world = members.stream().mapToInt(m -> worldRanks[m[1]]).toArray();
            Communicator made = new Communicator(owner, base + colours.headSet(colour).size(), world);
            made.openChannel();
            return Optional.of(made);
        } finally {
            mp.deregister(reg);
            mp.free(mem);
        }
    }

    // ---- collectives ----

    /**
     * Starts an all-to-all: block {@code j} of {@code send} goes to rank {@code j}, and block {@code i} of
     * {@code recv} comes from rank {@code i} (MPI's {@code MPI_Ialltoall} on bytes).
     *
     * @param send       size × blockBytes bytes (or more) to send
     * @param sendReg    a registration containing {@code send}
     * @param recv       size × blockBytes bytes (or more) to receive into; must not overlap {@code send}
     * @param recvReg    a registration containing {@code recv}
     * @param blockBytes the bytes exchanged between each pair of ranks, &gt;= 0
     * @return the request
     */
    public CollRequest ialltoall(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                                 long blockBytes) {
        checkBuffers(send, sendReg, recv, recvReg);
        if (blockBytes < 0) {
            throw new IllegalArgumentException("blockBytes must be >= 0, got " + blockBytes);
        }
        long need = CollBuffers.product("ialltoall", "blockBytes", blockBytes, size(), "ranks");
        requireBytes("send", send, need, "size × blockBytes");
        requireBytes("recv", recv, need, "size × blockBytes");
        if (channel != null) {
            return posted(channel().alltoall(send, sendReg.rkey(), recv, recvReg.rkey(), blockBytes));
        }
        long[] counts = new long[size()];
        long[] displs = new long[size()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = blockBytes;
            displs[i] = i * blockBytes;
        }
        return post("ialltoall", new ShmCall(ShmCall.Kind.ALLTOALL, -1, blockBytes, 0, 0), send, sendReg, counts, displs,
                recv, recvReg, counts, displs);
    }

    /**
     * Starts an all-to-all with a count and a displacement per rank, in bytes (MPI's {@code MPI_Ialltoallv}). What
     * rank {@code i} sends to rank {@code j} must equal what {@code j} expects from {@code i}; a difference is
     * found when the message arrives, fails the receiver's request and leaves that block unwritten.
     *
     * @param send        the send buffer
     * @param sendReg     a registration containing {@code send}
     * @param sendCounts  bytes for each rank, &gt;= 0
     * @param sendDispls  where each rank's bytes start in {@code send}
     * @param recv        the receive buffer; must not overlap {@code send}
     * @param recvReg     a registration containing {@code recv}
     * @param recvCounts  bytes from each rank, &gt;= 0
     * @param recvDispls  where each rank's bytes land in {@code recv}
     * @return the request
     */
    public CollRequest ialltoallv(MemorySegment send, MpRegistration sendReg, long[] sendCounts, long[] sendDispls,
                                  MemorySegment recv, MpRegistration recvReg, long[] recvCounts, long[] recvDispls) {
        checkBuffers(send, sendReg, recv, recvReg);
        checkLayout("send", send, sendCounts, "sendCounts", sendDispls, "sendDispls");
        checkLayout("recv", recv, recvCounts, "recvCounts", recvDispls, "recvDispls");
        if (sendCounts[rank] != recvCounts[rank]) {
            throw new IllegalArgumentException("sendCounts[" + rank + "] = " + sendCounts[rank] + " but recvCounts[" + rank
                    + "] = " + recvCounts[rank] + ": rank " + rank + " sends itself a block of one size");
        }
        if (channel != null) {
            return posted(channel().alltoallv(send, sendReg.rkey(), sendCounts.clone(), sendDispls.clone(), recv,
                    recvReg.rkey(), recvCounts.clone(), recvDispls.clone()));
        }
        return post("ialltoallv", new ShmCall(ShmCall.Kind.ALLTOALLV, -1, 0, 0, 0), send, sendReg, sendCounts.clone(), sendDispls.clone(), recv, recvReg,
                recvCounts.clone(), recvDispls.clone());
    }

    /**
     * Starts an all-gather: every rank's {@code send} lands in block {@code i} (its rank) of every rank's
     * {@code recv} (MPI's {@code MPI_Iallgather} on bytes; the block is {@code send.byteSize()}).
     *
     * @param send    this rank's block
     * @param sendReg a registration containing {@code send}
     * @param recv    size × send.byteSize() bytes (or more); must not overlap {@code send}
     * @param recvReg a registration containing {@code recv}
     * @return the request
     */
    public CollRequest iallgather(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg) {
        checkBuffers(send, sendReg, recv, recvReg);
        long block = send.byteSize();
        requireBytes("recv", recv, CollBuffers.product("iallgather", "send.byteSize()", block, size(), "ranks"),
                "size × send.byteSize()");
        if (channel != null) {
            return posted(channel().allgather(send, sendReg.rkey(), recv, recvReg.rkey()));
        }
        CollOp op = newOp("iallgather", new ShmCall(ShmCall.Kind.ALLGATHER, -1, block, 0, 0));
        HostLayout layout = hierarchy();
        if (layout != null) {
            MemorySegment.copy(send, 0, recv, rank * block, block);
            HierarchicalSchedules.allgather(op, layout, worldRanks, rank, recv, recvReg, block);
            return start(op);
        }
        flatAllgather(op, send, sendReg, recv, recvReg);
        return start(op);
    }

    /** Schedules an all-gather as a message to and from every other member; this rank's block is copied now. */
    private void flatAllgather(CollOp op, MemorySegment send, MpRegistration sendReg, MemorySegment recv,
                               MpRegistration recvReg) {
        long block = send.byteSize();
        for (int i = 0; i < size(); i++) {
            MemorySegment into = recv.asSlice(i * block, block);
            if (i == rank) {
                MemorySegment.copy(send, 0, into, 0, block);
            } else {
                op.send(worldRanks[i], 0, send, sendReg, -1);
                op.recv(worldRanks[i], 0, into, recvReg);
            }
        }
    }

    /**
     * Starts a barrier (MPI's {@code MPI_Ibarrier}): the request finishes once every member has started it.
     *
     * @return the request
     */
    public CollRequest ibarrier() {
        if (channel != null) {
            return posted(channel().barrier());
        }
        CollOp op = newOp("ibarrier", new ShmCall(ShmCall.Kind.BARRIER, -1, 0, 0, 0));
        MemorySegment none = MemorySegment.NULL;
        for (int k = 1; k < size(); k++) {
            op.send(worldRanks[(rank + k) % size()], 0, none, null, -1);
            op.recv(worldRanks[(rank + size() - k) % size()], 0, none, null);
        }
        return start(op);
    }

    /** Blocking {@link #ibarrier}: returns once every member has called it. */
    public void barrier() {
        wait(blocking(this::ibarrier));
    }

    /**
     * Starts a broadcast of {@code buf} from {@code root} to every rank's {@code buf} along a binomial tree (MPI's
     * {@code MPI_Ibcast} on bytes); every rank passes a buffer of the same size.
     *
     * @param buf  the root's data; the others' destination
     * @param reg  a registration containing {@code buf}
     * @param root the rank of this communicator that sends
     * @return the request
     */
    public CollRequest ibcast(MemorySegment buf, MpRegistration reg, int root) {
        Objects.requireNonNull(buf, "buf must not be null");
        Objects.requireNonNull(reg, "reg must not be null");
        requireRegistered("buf", buf, "reg", reg);
        requireRank("root", root);
        if (channel != null) {
            return posted(channel().bcast(buf, reg.rkey(), root));
        }
        CollOp op = newOp("ibcast", new ShmCall(ShmCall.Kind.BCAST, root, buf.byteSize(), 0, 0));
        int n = size();
        HostLayout layout = hierarchy();
        if (layout != null) {
            HierarchicalSchedules.bcast(op, layout, worldRanks, rank, root, buf, reg);
            return start(op);
        }
        if (owner.offloaded()) {
            // The proxy moves every message itself: a flat tree from the root costs it no forwarding step.
            if (rank == root) {
                for (int k = 1; k < n; k++) {
                    op.send(worldRanks[(root + k) % n], 0, buf, reg, -1);
                }
            } else {
                op.recv(worldRanks[root], 0, buf, reg);
            }
            return start(op);
        }
        int rel = Math.floorMod(rank - root, n);
        int parentRecv = -1;
        int mask = 1;
        // Binomial tree on ranks relative to the root: receive from the parent (lowest set bit), then send down.
        while (mask < n) {
            if ((rel & mask) != 0) {
                parentRecv = op.recv(worldRanks[Math.floorMod(rel - mask + root, n)], 0, buf, reg);
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while (mask > 0) {
            if (rel + mask < n) {
                op.send(worldRanks[Math.floorMod(rel + mask + root, n)], 0, buf, reg, parentRecv);
            }
            mask >>= 1;
        }
        return start(op);
    }

    /**
     * Starts one exchange (MPI's {@code MPI_Isendrecv} on bytes): {@code send} goes to rank {@code dest} and
     * {@code recv} is filled from rank {@code source}; either peer may be {@link #PROC_NULL} (then its buffer may be
     * null), and both may be. Like every collective here it takes the communicator's next collective number, so every
     * member must post the same number of collectives (a rank with nothing to exchange in a step posts one with both
     * peers {@link #PROC_NULL}); the building block of the reducing collectives of {@code coll.reduce}.
     *
     * @param send    the bytes to send, or null if {@code dest} is {@link #PROC_NULL}
     * @param sendReg a registration containing {@code send}
     * @param dest    the receiving rank of this communicator, or {@link #PROC_NULL}
     * @param recv    where the bytes from {@code source} land (exactly {@code recv.byteSize()} are expected); must
     *                not overlap {@code send}
     * @param recvReg a registration containing {@code recv}
     * @param source  the sending rank of this communicator, or {@link #PROC_NULL}
     * @return the request
     */
    public CollRequest isendrecv(MemorySegment send, MpRegistration sendReg, int dest, MemorySegment recv,
                                 MpRegistration recvReg, int source) {
        if (dest != PROC_NULL) {
            requireRank("dest", dest);
            Objects.requireNonNull(send, "send must not be null");
            Objects.requireNonNull(sendReg, "sendReg must not be null");
            requireRegistered("send", send, "sendReg", sendReg);
        }
        if (source != PROC_NULL) {
            requireRank("source", source);
            Objects.requireNonNull(recv, "recv must not be null");
            Objects.requireNonNull(recvReg, "recvReg must not be null");
            requireRegistered("recv", recv, "recvReg", recvReg);
        }
        if (dest != PROC_NULL && source != PROC_NULL) {
            checkBuffers(send, sendReg, recv, recvReg);
        }
        boolean selfSend = dest == rank;
        if (selfSend != (source == rank)) {
            throw new IllegalArgumentException("dest " + dest + " and source " + source + " of rank " + rank
                    + ": a rank exchanges with itself only in both directions");
        }
        if (selfSend) {
            requireBytes("recv", recv, send.byteSize(), "send.byteSize()");
        }
        CollOp op = newOp("isendrecv", null);
        if (selfSend) {
            MemorySegment.copy(send, 0, recv, 0, send.byteSize());
        } else {
            if (dest != PROC_NULL) {
                op.send(worldRanks[dest], 0, send, sendReg, -1);
            }
            if (source != PROC_NULL) {
                op.recv(worldRanks[source], 0, recv, recvReg);
            }
        }
        return start(op);
    }

    /**
     * Blocking {@link #isendrecv}.
     *
     * @param send    the bytes to send, or null
     * @param sendReg its registration, or null
     * @param dest    the receiving rank, or {@link #PROC_NULL}
     * @param recv    where the received bytes land, or null
     * @param recvReg its registration, or null
     * @param source  the sending rank, or {@link #PROC_NULL}
     */
    public void sendrecv(MemorySegment send, MpRegistration sendReg, int dest, MemorySegment recv,
                         MpRegistration recvReg, int source) {
        wait(isendrecv(send, sendReg, dest, recv, recvReg, source));
    }

    /**
     * Blocking {@link #ialltoall}.
     *
     * @param send       the send buffer
     * @param sendReg    its registration
     * @param recv       the receive buffer
     * @param recvReg    its registration
     * @param blockBytes bytes per pair of ranks
     */
    public void alltoall(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                         long blockBytes) {
        wait(blocking(() -> ialltoall(send, sendReg, recv, recvReg, blockBytes)));
    }

    /**
     * Blocking {@link #ialltoallv}.
     *
     * @param send       the send buffer
     * @param sendReg    its registration
     * @param sendCounts bytes for each rank
     * @param sendDispls where they start
     * @param recv       the receive buffer
     * @param recvReg    its registration
     * @param recvCounts bytes from each rank
     * @param recvDispls where they land
     */
    public void alltoallv(MemorySegment send, MpRegistration sendReg, long[] sendCounts, long[] sendDispls,
                          MemorySegment recv, MpRegistration recvReg, long[] recvCounts, long[] recvDispls) {
        wait(blocking(() -> ialltoallv(send, sendReg, sendCounts, sendDispls, recv, recvReg, recvCounts, recvDispls)));
    }

    /**
     * Blocking {@link #iallgather}.
     *
     * @param send    this rank's block
     * @param sendReg its registration
     * @param recv    the receive buffer
     * @param recvReg its registration
     */
    public void allgather(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg) {
        wait(blocking(() -> iallgather(send, sendReg, recv, recvReg)));
    }

    /**
     * Blocking {@link #ibcast}.
     *
     * @param buf  the data
     * @param reg  its registration
     * @param root the sending rank
     */
    public void bcast(MemorySegment buf, MpRegistration reg, int root) {
        wait(blocking(() -> ibcast(buf, reg, root)));
    }

    // ---- typed collectives (MPI's and NCCL's, on elements) ----

    /**
     * Every rank's {@code recv} gets the element-wise reduction of all ranks' {@code send} (MPI's
     * {@code MPI_Allreduce}). Floating-point results have the same bits on every rank: each element is combined in
     * one fixed order (on the shared-memory path the order of {@link #reduce}'s tree).
     *
     * @param send    count elements (or {@code recv} itself: in place)
     * @param sendReg a registration containing {@code send}
     * @param recv    count elements or more
     * @param recvReg a registration containing {@code recv}
     * @param count   elements, &gt;= 0
     * @param type    the element type
     * @param op      the operator
     * @throws IllegalArgumentException if an argument is out of range (nothing is posted)
     * @throws CollectiveException      if the collective failed or the members disagree on it
     */
    public void allreduce(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                          long count, DataType type, ReduceOp op) {
        long bytes = CollBuffers.requireCall("allreduce", send, sendReg, recv, recvReg, count, type, op, count, count);
        CollBuffers.requireSameOrDisjoint(send, recv, bytes);
        if (channel != null) {
            waitShm(channel().reduction(ShmCall.Kind.ALLREDUCE, send, sendReg.rkey(), recv, recvReg.rkey(), count,
                    type.bytes(), CallNames.code(type), CallNames.code(op), -1, ReduceCombiners.of(type, op)));
            return;
        }
        if (send.address() != recv.address()) {
            MemorySegment.copy(send, 0, recv, 0, bytes);
        }
        runCall(new ShmCall(ShmCall.Kind.ALLREDUCE, -1, bytes, CallNames.code(type), CallNames.code(op)),
                () -> pairwise().allreduce(recv.asSlice(0, bytes), recvReg, count, type, op));
    }

    /**
     * Rank {@code root}'s {@code recv} gets the element-wise reduction of all ranks' {@code send} (MPI's
     * {@code MPI_Reduce}); the other ranks' {@code recv} is not written (it may be null there). The combine order is
     * a binomial tree on the ranks as numbered (not rotated to the root): at step k rank r with lowest set bit 2^k
     * hands its partial result to r − 2^k, which combines it after its own (the lower ranks' operand first). The
     * order depends only on the rank count, so the result has the same bits whichever rank is the root, and in
     * every form (blocking, stream, KI).
     *
     * @param send    count elements (or, on the root, {@code recv} itself: in place)
     * @param sendReg a registration containing {@code send}
     * @param recv    on the root, count elements or more
     * @param recvReg a registration containing {@code recv}
     * @param count   elements, &gt;= 0
     * @param type    the element type
     * @param op      the operator
     * @param root    the rank that gets the result
     * @throws IllegalArgumentException if an argument is out of range (nothing is posted)
     * @throws CollectiveException      if the collective failed or the members disagree on it (a different root)
     */
    public void reduce(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                       long count, DataType type, ReduceOp op, int root) {
        requireRank("root", root);
        boolean isRoot = rank == root;
        if (isRoot) {
            long bytes = CollBuffers.requireCall("reduce", send, sendReg, recv, recvReg, count, type, op, count, count);
            CollBuffers.requireSameOrDisjoint(send, recv, bytes);
        } else {
            CollBuffers.requireCall("reduce", send, sendReg, send, sendReg, count, type, op, count, count);
        }
        if (channel != null) {
            waitShm(channel().reduction(ShmCall.Kind.REDUCE, send, sendReg.rkey(), isRoot ? recv : null,
                    isRoot ? recvReg.rkey() : 0, count, type.bytes(), CallNames.code(type), CallNames.code(op), root,
                    ReduceCombiners.of(type, op)));
            return;
        }
        runCall(new ShmCall(ShmCall.Kind.REDUCE, root, count * type.bytes(), CallNames.code(type), CallNames.code(op)),
                () -> pairwise().reduce(send, sendReg, recv, recvReg, count, type, op, root));
    }

    /**
     * Rank r's {@code recv} gets block r (recvCount elements) of the element-wise reduction of all ranks'
     * {@code send} (size · recvCount elements; MPI's {@code MPI_Reduce_scatter_block}).
     *
     * @param send      size · recvCount elements
     * @param sendReg   a registration containing {@code send}
     * @param recv      recvCount elements or more; in place: the slice of {@code send} at rank · recvCount
     * @param recvReg   a registration containing {@code recv}
     * @param recvCount elements per rank, &gt;= 0
     * @param type      the element type
     * @param op        the operator
     * @throws IllegalArgumentException if an argument is out of range (nothing is posted)
     * @throws CollectiveException      if the collective failed or the members disagree on it
     */
    public void reduceScatter(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                              long recvCount, DataType type, ReduceOp op) {
        long total = CollBuffers.product("reduceScatter", "recvCount", recvCount, size(), "ranks");
        long block = CollBuffers.requireCall("reduceScatter", send, sendReg, recv, recvReg, recvCount, type, op, total,
                recvCount);
        CollBuffers.requireInPlaceAt(send, recv, block, (long) rank * block, "send + rank · recvCount");
        if (channel != null) {
            waitShm(channel().reduction(ShmCall.Kind.REDUCE_SCATTER, send, sendReg.rkey(), recv, recvReg.rkey(),
                    recvCount, type.bytes(), CallNames.code(type), CallNames.code(op), -1, ReduceCombiners.of(type, op)));
            return;
        }
        runCall(new ShmCall(ShmCall.Kind.REDUCE_SCATTER, -1, block, CallNames.code(type), CallNames.code(op)),
                () -> pairwise().reduceScatter(send, recv, recvCount, type, op));
    }

    /**
     * Rank r's {@code send} (sendCount elements) lands in block r of every rank's {@code recv} (MPI's
     * {@code MPI_Allgather} on elements).
     *
     * @param send      sendCount elements; in place: the slice of {@code recv} at rank · sendCount
     * @param sendReg   a registration containing {@code send}
     * @param recv      size · sendCount elements or more
     * @param recvReg   a registration containing {@code recv}
     * @param sendCount elements per rank, &gt;= 0
     * @param type      the element type
     * @throws IllegalArgumentException if an argument is out of range (nothing is posted)
     */
    public void allgather(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                          long sendCount, DataType type) {
        long total = CollBuffers.product("allgather", "sendCount", sendCount, size(), "ranks");
        long block = CollBuffers.requireCall("allgather", send, sendReg, recv, recvReg, sendCount, type, ReduceOp.SUM,
                sendCount, total);
        CollBuffers.requireInPlaceAt(recv, send, block, (long) rank * block, "recv + rank · sendCount");
        if (channel != null) {
            waitShm(channel().allgather(send.asSlice(0, block), sendReg.rkey(), recv, recvReg.rkey()));
            return;
        }
        MemorySegment out = recv.asSlice(0, total * type.bytes());
        MemorySegment mine = out.asSlice((long) rank * block, block);
        if (mine.address() != send.address()) {
            MemorySegment.copy(send, 0, mine, 0, block);
        }
        runCall(new ShmCall(ShmCall.Kind.ALLGATHER, -1, block, 0, 0),
                () -> pairwise().allgather(out, recvReg, sendCount, type));
    }

    /**
     * Rank {@code root}'s {@code buf} (count elements) lands in every rank's {@code buf} (MPI's {@code MPI_Bcast} on
     * elements).
     *
     * @param buf   count elements or more
     * @param reg   a registration containing {@code buf}
     * @param count elements, &gt;= 0
     * @param type  the element type
     * @param root  the sending rank
     * @throws IllegalArgumentException if an argument is out of range (nothing is posted)
     */
    public void broadcast(MemorySegment buf, MpRegistration reg, long count, DataType type, int root) {
        long bytes = CollBuffers.requireCall("broadcast", buf, reg, buf, reg, count, type, ReduceOp.SUM, count, count);
        bcast(buf.asSlice(0, bytes), reg, root);
    }

    /**
     * Block j (count elements) of {@code send} goes to rank j; block i of {@code recv} comes from rank i (MPI's
     * {@code MPI_Alltoall} on elements).
     *
     * @param send    size · count elements
     * @param sendReg a registration containing {@code send}
     * @param recv    size · count elements; must not overlap {@code send}
     * @param recvReg a registration containing {@code recv}
     * @param count   elements per pair of ranks, &gt;= 0
     * @param type    the element type
     * @throws IllegalArgumentException if an argument is out of range (nothing is posted)
     */
    public void alltoall(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg,
                         long count, DataType type) {
        long total = CollBuffers.product("alltoall", "count", count, size(), "ranks");
        CollBuffers.requireCall("alltoall", send, sendReg, recv, recvReg, count, type, ReduceOp.SUM, total, total);
        alltoall(send, sendReg, recv, recvReg, count * type.bytes());
    }

    private PairwiseReductions pairwise() {
        owner.requireOpen();
        if (pairwise == null) {
            pairwise = new PairwiseReductions(this);
            owner.closeWith(pairwise);
        }
        return pairwise;
    }

    // ---- groups ----

    /**
     * Starts a group: a pattern of the caller's own sends and receives, each send optionally waiting for an earlier
     * receive of the group (NCCL's {@code ncclGroupStart}, BluesMPI's group primitives). {@link Group#groupCall}
     * posts it as one collective of this communicator: every member calls it, in the same order as this
     * communicator's other collectives, a member with nothing to move with an empty group.
     *
     * @return the group, to fill and then end and call
     */
    public Group groupStart() {
        owner.requireOpen();
        return new Group(this);
    }

    /**
     * A group of one send ({@link #groupStart} … {@link Group#send} … {@link Group#groupCall}).
     *
     * @param buf  the data
     * @param reg  a registration containing it
     * @param peer the receiving rank of this communicator
     * @return the request
     */
    public CollRequest sendOffload(MemorySegment buf, MpRegistration reg, int peer) {
        Group g = groupStart();
        g.send(buf, reg, peer);
        g.groupEnd();
        return g.groupCall();
    }

    /**
     * A group of one receive ({@link #groupStart} … {@link Group#recv} … {@link Group#groupCall}).
     *
     * @param buf  where the data lands
     * @param reg  a registration containing it
     * @param peer the sending rank of this communicator
     * @return the request
     */
    public CollRequest recvOffload(MemorySegment buf, MpRegistration reg, int peer) {
        Group g = groupStart();
        g.recv(buf, reg, peer);
        g.groupEnd();
        return g.groupCall();
    }

    /** Posts a filled group (called by {@link Group#groupCall}). */
    CollRequest callGroup(List<Group.Step> steps) {
        CollOp op = newOp("group", null);
        int[] sendsTo = new int[size()];
        int[] recvsFrom = new int[size()];
        int[] recvIndex = new int[steps.size()];
        for (int i = 0; i < steps.size(); i++) {
            Group.Step st = steps.get(i);
            int peer = worldRanks[st.peer()];
            if (st.send()) {
                op.send(peer, sendsTo[st.peer()]++, st.buf(), st.reg(), st.after() < 0 ? -1 : recvIndex[st.after()]);
            } else {
                recvIndex[i] = op.recv(peer, recvsFrom[st.peer()]++, st.buf(), st.reg());
            }
        }
        return start(op);
    }

    void checkGroupStep(String name, MemorySegment buf, MpRegistration reg, int peer) {
        Objects.requireNonNull(buf, "buf must not be null");
        Objects.requireNonNull(reg, "reg must not be null");
        requireRegistered("buf", buf, "reg", reg);
        requireRank(name, peer);
        if (peer == rank) {
            throw new IllegalArgumentException(name + " " + peer + " is this rank: a group moves data between ranks only");
        }
    }

    // ---- completion ----

    /**
     * Makes every active collective of the Mp progress (host engine) or reads their done words (offload engine: the
     * proxy progresses them), and says whether this one finished; if it did, the request is released.
     *
     * @param request a request of this communicator
     * @return whether it finished
     * @throws CollectiveException   if it finished with an error
     * @throws IllegalStateException if it was already released
     */
    public boolean test(CollRequest request) {
        ShmTask task = request == null ? null : request.task();
        if (task != null) {
            return testShm(requireOwnTask(request));
        }
        CollOp op = requireOwn(request);
        if (!op.isFinished()) {
            owner.engine().progress();
        }
        if (!op.isFinished()) {
            return false;
        }
        op.release();
        if (op.failure() != null) {
            throw new CollectiveException(op.failure(), op.cause());
        }
        String receiverDisagrees = receiverDisagreement(op);
        if (receiverDisagrees != null) {
            throw new CollectiveException(receiverDisagrees, null);
        }
        return true;
    }

    /**
     * Compares a finished message-path op's call with the calls of the peers it sent to whose boards read directly
     * (a few loads each): a receiver that called something else drained the messages and failed, and its sender
     * (a root whose sends all completed) must fail too. The receivers posted their calls before their receives, so
     * a completed send means the entry is there.
     *
     * @return the disagreement's message, or null if every such receiver called the same
     */
    private String receiverDisagreement(CollOp op) {
        CallBoard board = owner.engine().board();
        if (board == null || op.comm() == null || op.number < 0) {
            return null;
        }
        for (int peer : op.sentTo()) {
            if (board.readsDirectly(peer)) {
                CallBoard.Look seen = board.look(peer, context, op.number);
                if (seen.present() && !Objects.equals(seen.call(), op.call)) {
                    return op.disagreement(peer, op.number, seen.call());
                }
            }
        }
        return null;
    }

    /**
     * Progresses until the request finishes, at most the Mp's wait timeout, and releases it. A member that is gone
     * (its process died, the job failed) ends the wait within a second with its name.
     *
     * @param request a request of this communicator
     * @throws CollectiveException   if it finished with an error or did not finish in time (it then stays active)
     * @throws IllegalStateException if it was already released
     */
    public void wait(CollRequest request) {
        ShmTask task = request == null ? null : request.task();
        if (task != null) {
            waitShm(requireOwnTask(request));
            return;
        }
        CollOp op = requireOwn(request);
        long start = System.nanoTime();
        // A step of a call in progress (a reduction's exchange) waits until the call's deadline, not a timeout of its own.
        long deadline = op.number >= 0 && op.number == inCall ? callDeadline
                : start + owner.mp().config().waitTimeout().toNanos();
        long look = start + STALL_NANOS;
        messageIdler.reset();
        while (!test(request)) {
            long now = System.nanoTime();
            if (now - deadline > 0) {
                throw new CollectiveException(timedOut(op), null);
            }
            if (now - look > 0 && op.comm() != null) {
                look = now + STALL_NANOS;
                String why = disagreement(op);
                if (why != null) {
                    owner.engine().abandon(op, why);
                }
                continue;
            }
            // The message path's sends may wait for the NIC's agent thread: the policy yields to it after its spins.
            messageIdler.idle();
        }
    }

    /**
     * Reads the posted calls of the peers an op waits for (the message path, after a stall): a peer that called
     * another collective as this call's number never completes it.
     *
     * @return the disagreement's message, or null if every peer called the same or has not called it yet
     */
    private String disagreement(CollOp op) {
        CallBoard board = owner.engine().board();
        if (board == null) {
            return null;
        }
        for (int peer : op.readablePeers(board::readsDirectly)) {
            CallBoard.Look seen = board.look(peer, context, op.number);
            if (seen.present() && !Objects.equals(seen.call(), op.call)) {
                return op.disagreement(peer, op.number, seen.call());
            }
        }
        return null;
    }

    /** @return the message of a message-path op that timed out, naming a peer that has not called it if one has not */
    private String timedOut(CollOp op) {
        String why = "a peer has not posted it or does not progress";
        CallBoard board = owner.engine().board();
        if (board != null && op.comm() != null) {
            for (int peer : op.readablePeers(board::readsDirectly)) {
                CallBoard.Look seen = board.look(peer, context, op.number);
                if (seen.known() && seen.latest() < op.number) {
                    why = op.who(peer) + " has not called it: " + (seen.latest() < 0 ? "it has called no collective on "
                            + "communicator " + context + " yet" : "its latest collective on communicator " + context
                            + " is #" + seen.latest());
                    break;
                }
            }
        }
        return op + (op.comm() == null ? " on rank " + owner.mp().rank() : "") + " did not finish within "
                + owner.mp().config().waitTimeout() + ": " + why;
    }

    private boolean testShm(ShmTask task) {
        if (!task.isFinished()) {
            channel.progress();
            if (!task.isFinished()) {
                // A test loop must also learn of a dead member: look now and then (cheap, but not free).
                if ((++unfinishedTests & 0x3ff) == 0) {
                    giveUpIfHopeless(task);
                }
                return false;
            }
        }
        return finish(task);
    }

    private boolean finish(ShmTask task) {
        task.release();
        if (task.failure() != null) {
            throw new CollectiveException(task.failure(), null);
        }
        return true;
    }

    /**
     * Waits for a task of the shared-memory path: moves the channel, idling between looks (spin; yield when ranks
     * outnumber CPUs; park only after a long wait), and looks for a gone member or the timeout every 1024 looks.
     */
    private void waitShm(ShmTask task) {
        if (!task.isFinished()) {
            channel.progress();
        }
        if (!task.isFinished()) {
            long timeout = owner.mp().config().waitTimeout().toNanos();
            long start = System.nanoTime();
            idler.reset();
            for (int looks = 1; ; looks++) {
                idler.idle();
                channel.progress();
                if (task.isFinished()) {
                    break;
                }
                if ((looks & 0x3ff) == 0) {
                    giveUpIfHopeless(task);
                    if (System.nanoTime() - start > timeout) {
                        throw new CollectiveException(task + " did not finish within "
                                + owner.mp().config().waitTimeout() + ": " + task.waitingFor(), null);
                    }
                }
            }
        }
        finish(task);
    }

    /** Fails the channel (and with it the task) when a member it waits for can never answer. */
    private void giveUpIfHopeless(ShmTask task) {
        owner.engine().progress();
        String trouble = owner.engine().failure();
        if (trouble == null) {
            trouble = channel.trouble(task);
        }
        if (trouble != null) {
            String why = task + " cannot finish: " + trouble;
            channel.abandon(why);
            task.release();
            throw new CollectiveException(why, null);
        }
    }

    private ShmTask requireOwnTask(CollRequest request) {
        if (request.context() != context) {
            throw new IllegalArgumentException(request + " belongs to communicator " + request.context() + ", not "
                    + context);
        }
        ShmTask task = request.task();
        if (task.released()) {
            throw new IllegalStateException(request + " was already completed and released");
        }
        return task;
    }

    // ---- internals ----

    /** @return the layout when the offload engine runs this communicator across hosts (hierarchical), else null */
    private HostLayout hierarchy() {
        if (!owner.offloaded()) {
            return null;
        }
        if (layout == null) {
            layout = HostLayout.of(owner.engine(), worldRanks);
        }
        return layout.spansHosts() ? layout : null;
    }

    /**
     * @param call the user's call, which the message path's headers carry and its peers compare, or null for a call
     *             the ranks make differently by design (an exchange, a group)
     * @return the op of the user's next call, or of the next step of the call in progress (its number and signature)
     */
    private CollOp newOp(String name, ShmCall call) {
        owner.engine().requireHealthy();
        if (owner.offloaded()) {
            return new CollOp(name, context, nextSeq);
        }
        if (inCall >= 0) {
            if (callStep >= (1 << STEP_BITS) - 2) {
                throw new IllegalStateException(this + ": a call of more than " + ((1 << STEP_BITS) - 2) + " steps");
            }
            return new CollOp(name, context, (inCall << STEP_BITS) | callStep, inCall, callSig, this);
        }
        return new CollOp(name, context, nextCall << STEP_BITS, nextCall, call, this);
    }

    private CollRequest start(CollOp op) {
        Engine engine = owner.engine();
        if (owner.offloaded()) {
            engine.start(op);
            nextSeq++;
        } else if (inCall >= 0) {
            engine.start(op);
            callStep++;
        } else {
            post(engine, op.number, op.call);
            engine.start(op);
            nextCall++;
        }
        return new CollRequest(context, op);
    }

    private void post(Engine engine, int number, ShmCall call) {
        CallBoard board = engine.board();
        if (board != null) {
            board.post(context, number, call);
        }
    }

    /**
     * Runs a call of the message path made of steps that are collectives of their own (the reductions' exchanges):
     * every step carries the call's number and signature, and all of them share one timeout. The offload engine runs
     * the steps as collectives of their own.
     */
    private void runCall(ShmCall call, Runnable steps) {
        if (owner.offloaded()) {
            steps.run();
            return;
        }
        owner.engine().requireHealthy();
        inCall = nextCall++;
        callSig = call;
        callStep = 0;
        callDeadline = System.nanoTime() + owner.mp().config().waitTimeout().toNanos();
        post(owner.engine(), inCall, call);
        try {
            steps.run();
        } finally {
            inCall = -1;
            callSig = null;
        }
    }

    private CollRequest post(String name, ShmCall call, MemorySegment send, MpRegistration sendReg, long[] sendCounts,
                             long[] sendDispls, MemorySegment recv, MpRegistration recvReg, long[] recvCounts,
                             long[] recvDispls) {
        CollOp op = newOp(name, call);
        // Scatter-destination order: rank r addresses r + 1, r + 2, ... first, so no rank is every sender's first.
        for (int k = 0; k < size(); k++) {
            int i = (rank + k) % size();
            MemorySegment out = send.asSlice(sendDispls[i], sendCounts[i]);
            MemorySegment into = recv.asSlice(recvDispls[i], recvCounts[i]);
            if (i == rank) {
                MemorySegment.copy(out, 0, into, 0, sendCounts[i]);
            } else {
                op.send(worldRanks[i], 0, out, sendReg, -1);
                op.recv(worldRanks[i], 0, into, recvReg);
            }
        }
        return start(op);
    }

    private CollOp requireOwn(CollRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        CollOp op = request.op();
        if (op.context != context) {
            throw new IllegalArgumentException(request + " belongs to communicator " + op.context + ", not " + context);
        }
        if (op.released()) {
            throw new IllegalStateException(request + " was already completed and released");
        }
        return op;
    }

    private void requireRank(String name, int r) {
        if (r < 0 || r >= size()) {
            throw new IllegalArgumentException(name + " " + r + " is outside " + this + ": ranks are 0.." + (size() - 1));
        }
    }

    private void checkBuffers(MemorySegment send, MpRegistration sendReg, MemorySegment recv, MpRegistration recvReg) {
        Objects.requireNonNull(send, "send must not be null");
        Objects.requireNonNull(sendReg, "sendReg must not be null");
        Objects.requireNonNull(recv, "recv must not be null");
        Objects.requireNonNull(recvReg, "recvReg must not be null");
        requireRegistered("send", send, "sendReg", sendReg);
        requireRegistered("recv", recv, "recvReg", recvReg);
        long s = send.address();
        long r = recv.address();
        if (s < r + recv.byteSize() && r < s + send.byteSize() && send.byteSize() > 0 && recv.byteSize() > 0) {
            throw new IllegalArgumentException("send and recv overlap: in-place collectives are not supported");
        }
    }

    private static void requireRegistered(String name, MemorySegment buf, String regName, MpRegistration reg) {
        RegisteredBuffers.requireInside(name, buf, regName, reg);
    }

    private static void requireBytes(String name, MemorySegment buf, long need, String what) {
        if (buf.byteSize() < need) {
            throw new IllegalArgumentException(name + " holds " + buf.byteSize() + " bytes but " + what + " = " + need);
        }
    }

    private void checkLayout(String name, MemorySegment buf, long[] counts, String countsName, long[] displs,
                             String displsName) {
        Objects.requireNonNull(counts, countsName + " must not be null");
        Objects.requireNonNull(displs, displsName + " must not be null");
        if (counts.length != size() || displs.length != size()) {
            throw new IllegalArgumentException(countsName + " and " + displsName + " need " + size() + " entries, got "
                    + counts.length + " and " + displs.length);
        }
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] < 0 || displs[i] < 0) {
                throw new IllegalArgumentException(countsName + "[" + i + "] = " + counts[i] + " and " + displsName + "["
                        + i + "] = " + displs[i] + " must be >= 0");
            }
            if (displs[i] > buf.byteSize() - counts[i]) {
                throw new IllegalArgumentException(displsName + "[" + i + "] + " + countsName + "[" + i + "] = "
                        + (displs[i] + counts[i]) + " is past the end of " + name + " (" + buf.byteSize() + " bytes)");
            }
        }
    }

    @Override
    public String toString() {
        return "communicator " + context + " of " + size() + " ranks (world " + Arrays.toString(worldRanks) + ")";
    }
}
