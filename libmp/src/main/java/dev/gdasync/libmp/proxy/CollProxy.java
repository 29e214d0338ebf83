package dev.gdasync.libmp.proxy;

// Why this file is long: the proxy's one thread runs matching, staging, chunked transfers, cross-host frames and
// failure handling over one set of tables; the queue, the links and the helpers are already their own classes.

import dev.gdasync.libmp.coll.offload.ProxyQueue;
import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.NicConfig;
import dev.gdasync.gdsync.nic.NicProviders;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.bootstrap.EnvNames;
import dev.gdasync.libmp.bootstrap.JobEnvironment;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The collective proxy of one host (the role of a DPU's cores): a process of its own, started by
 * {@code scripts/mprun --proxies}, that executes the collectives the ranks post into its {@link ProxyQueue}. It
 * matches every rank's sends with the receiving rank's receives, and moves the bytes with its own software NIC:
 * one RDMA write out of the slot's staging area for a small send the rank copied there when it posted (staging),
 * or, from the threshold up, RDMA reads from the sender's registered buffer into the proxy's transit chunks and
 * RDMA writes from them into the receiver's registered buffer, with the ranks' keys, several chunks in flight
 * (direct, chunked and pipelined). When every transfer of a rank's task is done it writes the task's done word.
 * The ranks do nothing meanwhile.
 *
 * <p>A job may span several hosts, one proxy each ({@code mprun --netns K --proxies}). The proxies then form a job
 * of their own through the bootstrap (rank = host) and talk over {@link ProxyLinks}. A rank links to every other
 * host's proxy too (one queue pair each, connected through its own proxy, which forwards the endpoints). A receive
 * whose sender is on another host is sent as a RECV frame to the sender's proxy, which matches it like a local one
 * and moves the bytes itself, writing into the remote receiver's buffer over the NIC's network transport (UCX); its
 * RECV_DONE frame then finishes the receive here.
 *
 * <p>A dead rank (its pid gone) fails every unfinished task that exchanges with it, on every host; a transfer the
 * NIC completes with an error fails the two tasks it belongs to; a broken link to another proxy fails everything
 * that exchanges with that host's ranks. One thread runs everything.
 */
public final class CollProxy implements AutoCloseable {
    /** The environment variable naming the locator file (a path the launcher picks). */
    public static final String LOCATOR_ENV = EnvNames.COLL_PROXY;
    /** The environment variable giving the host of every rank, comma-separated (absent: one host). */
    public static final String PLACEMENT_ENV = EnvNames.COLL_PLACEMENT;
    /** The environment variable giving this proxy's host (absent: 0). */
    public static final String HOST_ENV = EnvNames.COLL_HOST;
    /** The environment variable giving the proxies' rendezvous ({@code host:port}) when there are several hosts. */
    public static final String RENDEZVOUS_ENV = EnvNames.COLL_RENDEZVOUS;
    /** Default size from which a send is read straight from the sender's buffer. */
    public static final long DEFAULT_THRESHOLD = 8 * 1024;
    /** Bytes one transit chunk moves. */
    static final int CHUNK = 256 * 1024;
    /** Transit chunks: how many direct chunks may be in flight. */
    static final int CHUNKS = 16;
    /** Work requests in flight at most (staged writes and chunks). */
    private static final int MAX_IN_FLIGHT = 256;
    private static final long LIVENESS_NANOS = 50_000_000L;
    private static final long BEAT_NANOS = 1_000_000_000L;
    /** Generous: on a loaded machine a live proxy may miss several beats. */
    private static final long SILENCE_NANOS = 10_000_000_000L;

    private final Nic nic;
    private final HostRegion queueRegion;
    private final MemoryRegion queueMr;
    private final ProxyQueue queue;
    private final Region transitRegion;
    private final MemoryRegion transitMr;
    private final ArrayDeque<Integer> freeChunks = new ArrayDeque<>();
    private final QueuePair[] qps;
    private final long[] taken;
    private final boolean[] dead;
    /** Why each dead rank is gone, for the tasks taken after its death. */
    private final String[] deaths;
    private final Map<Key, Entry> unmatched = new HashMap<>();
    private final ArrayDeque<Transfer> ready = new ArrayDeque<>();
    private final ArrayDeque<Chunk> chunkQueue = new ArrayDeque<>();
    private final Map<Long, Op> inFlight = new HashMap<>();
    private final List<Task> tasks = new ArrayList<>();
    private final Completion completion = new Completion();
    private final Path locator;
    private final int host;
    private final int[] placement;
    private final ProxyLinks links;
    private final Bootstrap boot;
    private final int[] linksLeft;
    private final Map<Long, Entry> remoteRecvs = new HashMap<>();
    private final ProxyLinks.Handler frames = new ProxyLinks.Handler() {
        @Override
        public void frame(int from, ByteBuffer frame) {
            onFrame(from, frame);
        }

        @Override
        public void broken(int g, String why) {
            hostGone(g, why);
        }
    };
    private long nextToken = 1;
    private long lastBeat;
    /** Transfers finished, and how many of them wrote into a rank of another host (written by the loop only). */
    private volatile long moved;
    private volatile long movedAcross;
    private final ProxyAssist assist;
    private long nextWr = 1;
    private long lastLiveness;
    private volatile boolean stop;
    private boolean closed;
    private Thread thread;

    /** A posted collective of one rank, as the proxy holds it. */
    private static final class Task {
        /** The receiving rank's host when this is the stand-in for a receive posted on another host, else -1. */
        int remoteHost = -1;
        /** The stand-in's token at that host's proxy. */
        long token;
        final int rank;
        final long number;
        final long slot;
        final String name;
        final int context;
        final int seq;
        final Entry[] entries;
        int left;
        String failure;

        Task(int rank, long number, long slot, String name, int context, int seq, int count) {
            this.rank = rank;
            this.number = number;
            this.slot = slot;
            this.name = name;
            this.context = context;
            this.seq = seq;
            this.entries = new Entry[count];
            this.left = count;
        }

        @Override
        public String toString() {
            return name + " #" + seq + " on communicator " + context;
        }
    }

    /** One send or receive of a task. */
    private static final class Entry {
        final Task task;
        final int index;
        final int kind;
        final int peer;
        final int part;
        final int after;
        final long address;
        final long length;
        final long key;
        boolean done;
        Transfer transfer;

        Entry(Task task, int index, int kind, int peer, int part, int after, long address, long length, long key) {
            this.task = task;
            this.index = index;
            this.kind = kind;
            this.peer = peer;
            this.part = part;
            this.after = after;
            this.address = address;
            this.length = length;
            this.key = key;
        }

        boolean isSend() {
            return kind != ProxyQueue.RECV;
        }
    }

    /** Matches a send of rank src to dst with the receive dst posted for it. */
    private record Key(int context, int seq, int src, int dst, int part) {
    }

    /** One message: a matched send and receive. */
    private static final class Transfer {
        final Entry send;
        final Entry recv;
        boolean started;
        int chunksLeft;
        String failure;

        Transfer(Entry send, Entry recv) {
            this.send = send;
            this.recv = recv;
        }
    }

    /** A piece of a direct transfer, moved through one transit chunk. */
    private record Chunk(Transfer transfer, long offset, int length) {
    }

    /** A work request in flight. */
    private record Op(Transfer transfer, Chunk chunk, int transit, boolean read) {
    }

    /**
     * Creates the queue and its NIC, and publishes the queue's path in the locator file.
     *
     * @param nicConfig the NIC settings (the job's id among them)
     * @param ranks     the ranks of the host
     * @param locator   where to write the queue file's path
     * @param threshold the size from which sends are not staged
     */
    public CollProxy(NicConfig nicConfig, int ranks, Path locator, long threshold) {
        this(nicConfig, new int[Math.max(0, ranks)], null, locator, threshold);
    }

    /**
     * Creates the proxy of one host of a job that may span several: with more than one host it connects to the
     * other hosts' proxies through {@code boot} (which it closes with itself).
     *
     * @param nicConfig the NIC settings (the job's id among them)
     * @param placement the host of every rank of the job (0 .. hosts - 1)
     * @param boot      the proxies' bootstrap, one member per host, rank = this proxy's host; null for one host
     * @param locator   where to write the queue file's path
     * @param threshold the size from which sends are not staged
     */
    public CollProxy(NicConfig nicConfig, int[] placement, Bootstrap boot, Path locator, long threshold) {
        Objects.requireNonNull(nicConfig, "nicConfig must not be null");
        Objects.requireNonNull(placement, "placement must not be null");
        Objects.requireNonNull(locator, "locator must not be null");
        int ranks = placement.length;
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be >= 1, got " + ranks);
        }
        int hosts = boot == null ? 1 : boot.size();
        this.host = boot == null ? 0 : boot.rank();
        for (int r = 0; r < ranks; r++) {
            if (placement[r] < 0 || placement[r] >= hosts) {
                throw new IllegalArgumentException("rank " + r + " is placed on host " + placement[r] + ", outside the "
                        + hosts + " host" + (hosts == 1 ? "" : "s") + " of the proxies");
            }
        }
        this.placement = placement.clone();
        this.boot = boot;
        this.linksLeft = new int[ranks];
        this.locator = locator;
        this.nic = NicProviders.open(nicConfig);
        try {
            this.links = hosts > 1 ? new ProxyLinks(nic, boot) : null;
            if (!(nic.allocateHost(ProxyQueue.bytes(ranks, hosts)) instanceof HostRegion q)) {
                throw new IllegalStateException("the collective proxy needs a NIC whose host memory is a shared file");
            }
            this.queueRegion = q;
            this.queueMr = nic.register(q, Access.ALL);
            this.queue = new ProxyQueue(q.segment(), ranks, hosts);
            this.transitRegion = nic.allocateHost((long) CHUNK * CHUNKS);
            this.transitMr = nic.register(transitRegion, Access.ALL);
            for (int c = 0; c < CHUNKS; c++) {
                freeChunks.add(c);
            }
            this.qps = new QueuePair[ranks];
            this.assist = new ProxyAssist(queue, qps);
            this.taken = new long[ranks];
            this.dead = new boolean[ranks];
            this.deaths = new String[ranks];
            queue.writePlacement(placement);
            queue.initHeader(ProcessHandle.current().pid(), ShmDirectory.currentStartMillis(), threshold, host);
            Path tmp = locator.resolveSibling(locator.getFileName() + ".tmp");
            Files.createDirectories(locator.toAbsolutePath().getParent());
            Files.writeString(tmp, q.path().toString());
            Files.move(tmp, locator, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            nic.close();
            throw new UncheckedIOException("the collective proxy could not write its locator " + locator, e);
        } catch (RuntimeException e) {
            nic.close();
            throw e;
        }
    }

    /**
     * Runs the proxy on a thread of its own (tests, and an application that wants its proxy in-process).
     *
     * @return this proxy
     */
    public CollProxy start() {
        thread = Thread.ofPlatform().daemon().name("coll-proxy").start(this::run);
        return this;
    }

    /** Runs the loop on the calling thread until {@link #close} (the proxy process's main thread). */
    public void run() {
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.LOW_LATENCY);
        while (!stop) {
            int work = step();
            if (work > 0) {
                idler.reset();
            } else {
                idler.idle();
            }
        }
    }

    /** One turn: connect new ranks, take new tasks, start transfers, reap completions. @return work done */
    int step() {
        int work = 0;
        long now = System.nanoTime();
        boolean look = now - lastLiveness > LIVENESS_NANOS;
        if (look) {
            lastLiveness = now;
        }
        for (int r = 0; r < qps.length; r++) {
            if (placement[r] == host) {
                work += serveRank(r, look);
            }
        }
        if (links != null) {
            if (look && now - lastBeat > BEAT_NANOS) {
                // A heartbeat to every other proxy, every second; one silent for SILENCE_NANOS is taken for dead.
                lastBeat = now;
                for (int g = 0; g < links.hosts(); g++) {
                    if (g != host) {
                        links.send(g, ProxyFrames.beat());
                    }
                }
            }
            work += links.poll(frames);
            if (look) {
                links.checkSilence(now, SILENCE_NANOS, frames);
            }
        }
        work += startTransfers();
        work += reap();
        return work;
    }

    private int serveRank(int r, boolean look) {
        int state = queue.state(r);
        if (state == ProxyQueue.RANK_PUBLISHED && qps[r] == null) {
            connect(r);
            return 1;
        }
        if (qps[r] == null || dead[r]) {
            return 0;
        }
        if (look && !ShmDirectory.isAlive(queue.rankPid(r), queue.rankStart(r))) {
            rankDied(r, "rank " + r + " (pid " + queue.rankPid(r) + ") died");
            return 1;
        }
        if (queue.closed(r)) {
            rankDied(r, "rank " + r + " closed its collectives");
            return 1;
        }
        int work = assist.discover(r);
        long head = queue.head(r);
        while (taken[r] < head) {
            take(r, taken[r]++);
            work++;
        }
        return work;
    }

    private void connect(int r) {
        QueuePair qp = nic.createQueuePair(QueuePairConfig.DEFAULT);
        try {
            qp.connect(Endpoint.of(queue.rankEndpoint(r)));
        } catch (RuntimeException e) {
            qp.close();
            queue.refuse(r, "the collective proxy could not connect to rank " + r + ": " + e.getMessage());
            return;
        }
        qps[r] = qp;
        dead[r] = false;
        taken[r] = queue.head(r);
        if (links == null) {
            queue.publishProxy(r, qp.endpoint().toBytes());
            return;
        }
        // The rank is connected to this proxy once every other host's proxy has linked to it (LINKED frames).
        linksLeft[r] = links.hosts() - 1;
        for (int g = 0; g < links.hosts(); g++) {
            if (g != host) {
                links.send(g, ProxyFrames.link(r, queue.linkEndpoint(r, g)));
            }
        }
    }

    private void onFrame(int from, ByteBuffer f) {
        switch (ProxyFrames.type(f)) {
            case ProxyFrames.LINK -> linkRemoteRank(from, f.getInt(), ProxyFrames.getBytes(f));
            case ProxyFrames.LINKED -> {
                int r = f.getInt();
                int g = f.getInt();
                boolean ok = f.getInt() == 1;
                byte[] v = ProxyFrames.getBytes(f);
                if (qps[r] == null || queue.state(r) != ProxyQueue.RANK_PUBLISHED) {
                    return; // the rank left meanwhile
                }
                if (!ok) {
                    queue.refuse(r, new String(v, java.nio.charset.StandardCharsets.UTF_8));
                } else {
                    queue.publishRemoteProxy(r, g, v);
                    if (--linksLeft[r] == 0) {
                        queue.publishProxy(r, qps[r].endpoint().toBytes());
                    }
                }
            }
            case ProxyFrames.RECV -> remoteRecv(from, f);
            case ProxyFrames.RECV_DONE -> {
                Entry e = remoteRecvs.remove(f.getLong());
                boolean failed = f.getInt() == 1;
                String why = ProxyFrames.getText(f);
                if (e != null && !e.done) {
                    if (failed) {
                        fail(e.task, why);
                    }
                    entryDone(e);
                    releaseForwards(e);
                    finishIfDone(e.task);
                }
            }
            case ProxyFrames.RANK_GONE -> {
                int r = f.getInt();
                rankDied(r, ProxyFrames.getText(f));
            }
            default -> { } // BEAT, or a newer proxy's frame: nothing to do
        }
    }

    /** Another host's proxy asks for a queue pair to one of its ranks (to write into that rank's buffers). */
    private void linkRemoteRank(int from, int r, byte[] endpoint) {
        if (r < 0 || r >= qps.length || placement[r] != from) {
            links.send(from, ProxyFrames.linkRefused(r, host, "the proxy of host " + host + " places rank " + r
                    + " elsewhere than host " + from));
            return;
        }
        QueuePair qp = nic.createQueuePair(QueuePairConfig.DEFAULT);
        try {
            qp.connect(Endpoint.of(endpoint));
        } catch (RuntimeException e) {
            qp.close();
            links.send(from, ProxyFrames.linkRefused(r, host, "the collective proxy of host " + host
                    + " could not connect to rank " + r + ": " + e.getMessage()));
            return;
        }
        if (qps[r] != null && inFlightTouch(r) == 0) {
            qps[r].close(); // the rank attached again: its former queue pair is idle
        }
        qps[r] = qp;
        dead[r] = false;
        links.send(from, ProxyFrames.linked(r, host, qp.endpoint().toBytes()));
    }

    /** A receive posted on another host whose sender is mine: a stand-in task of one entry, matched as usual. */
    private void remoteRecv(int from, ByteBuffer f) {
        int context = f.getInt();
        int seq = f.getInt();
        int src = f.getInt();
        int dst = f.getInt();
        int part = f.getInt();
        long address = f.getLong();
        long length = f.getLong();
        long key = f.getLong();
        long token = f.getLong();
        String name = ProxyFrames.getText(f);
        Task t = new Task(dst, -1, -1, name, context, seq, 1);
        t.remoteHost = from;
        t.token = token;
        Entry e = new Entry(t, 0, ProxyQueue.RECV, src, part, -1, address, length, key);
        t.entries[0] = e;
        tasks.add(t);
        if (src < 0 || src >= qps.length || placement[src] != host || dead[src]) {
            fail(t, t + " on rank " + dst + ": rank " + src + " is gone");
            entryDone(e);
            finishIfDone(t);
            return;
        }
        accept(t, e, dst);
    }

    private void take(int r, long number) {
        long slot = queue.slot(r, (int) (number % ProxyQueue.SLOTS));
        int count = queue.count(slot);
        Task t = new Task(r, number, slot, queue.name(slot), queue.context(slot), queue.seq(slot), count);
        tasks.add(t);
        for (int i = 0; i < count; i++) {
            Entry e = new Entry(t, i, queue.entryInt(slot, i, 0), queue.entryInt(slot, i, 1), queue.entryInt(slot, i, 2),
                    queue.entryInt(slot, i, 3), queue.entryLong(slot, i, 0), queue.entryLong(slot, i, 1),
                    queue.entryLong(slot, i, 2));
            t.entries[i] = e;
        }
        for (Entry e : t.entries) {
            if (e.peer < 0 || e.peer >= qps.length || e.peer == r) {
                fail(t, t + ": rank " + r + " names rank " + e.peer + ", which the collective proxy does not serve");
                entryDone(e);
                continue;
            }
            if (dead[e.peer]) {
                fail(t, t + " on rank " + r + ": rank " + e.peer + " is gone: " + deaths[e.peer]);
                entryDone(e);
                continue;
            }
            if (!e.isSend() && placement[e.peer] != host) {
                // The sender's proxy moves the bytes: tell it where they go; its RECV_DONE finishes the entry.
                long token = nextToken++;
                remoteRecvs.put(token, e);
                links.send(placement[e.peer], ProxyFrames.recv(t.context, t.seq, e.peer, r, e.part, e.address, e.length,
                        e.key, token, t.name));
                continue;
            }
            accept(t, e, r);
        }
        finishIfDone(t);
    }

    /** Matches an entry of rank r with its counterpart, or keeps it until the counterpart comes. */
    private void accept(Task t, Entry e, int r) {
        Key k = e.isSend() ? new Key(t.context, t.seq, r, e.peer, e.part) : new Key(t.context, t.seq, e.peer, r, e.part);
        Entry other = unmatched.remove(k);
        if (other == null) {
            unmatched.put(k, e);
        } else if (other.isSend() == e.isSend()) {
            unmatched.put(k, other);
            fail(t, t + ": rank " + r + " posted part " + e.part + " with rank " + e.peer + " twice");
            entryDone(e);
        } else {
            match(e.isSend() ? e : other, e.isSend() ? other : e);
        }
    }

    private void match(Entry send, Entry recv) {
        Transfer x = new Transfer(send, recv);
        send.transfer = x;
        recv.transfer = x;
        if (send.length != recv.length) {
            String why = send.task + ": rank " + send.task.rank + " sent " + send.length + " bytes but rank "
                    + recv.task.rank + " expects " + recv.length + " from it; the block was not written";
            fail(send.task, why);
            fail(recv.task, why);
            x.started = true;
            transferDone(x);
            return;
        }
        if (send.after < 0 || send.task.entries[send.after].done) {
            ready.add(x);
        }
    }

    private int startTransfers() {
        int work = 0;
        while (!ready.isEmpty() && inFlight.size() < MAX_IN_FLIGHT) {
            Transfer x = ready.poll();
            x.started = true;
            work++;
            long n = x.send.length;
            if (n == 0 || x.failure != null) {
                transferDone(x);
            } else if (x.send.kind == ProxyQueue.SEND_STAGED) {
                post(x.recv.task.rank, Opcode.RDMA_WRITE, queueMr, x.send.address, (int) n, x.recv.address, x.recv.key,
                        new Op(x, null, -1, false));
            } else {
                x.chunksLeft = (int) ((n + CHUNK - 1) / CHUNK);
                for (long off = 0; off < n; off += CHUNK) {
                    chunkQueue.add(new Chunk(x, off, (int) Math.min(CHUNK, n - off)));
                }
            }
        }
        while (!chunkQueue.isEmpty() && !freeChunks.isEmpty() && inFlight.size() < MAX_IN_FLIGHT) {
            Chunk c = chunkQueue.poll();
            Transfer x = c.transfer();
            if (x.failure != null) {
                chunkDone(x);
                continue;
            }
            int transit = freeChunks.poll();
            post(x.send.task.rank, Opcode.RDMA_READ, transitMr, (long) transit * CHUNK, c.length(),
                    x.send.address + c.offset(), x.send.key, new Op(x, c, transit, true));
            work++;
        }
        return work;
    }

    private void post(int rank, Opcode opcode, MemoryRegion local, long offset, int length, long remote, long key, Op op) {
        long wr = nextWr++;
        inFlight.put(wr, op);
        try {
            qps[rank].postSend(new SendWorkRequest().opcode(opcode).flags(SendFlags.SIGNALED).wrId(wr)
                    .sge(local, offset, length).remote(remote, key));
        } catch (RuntimeException e) {
            inFlight.remove(wr);
            opFailed(op, "the proxy could not post to rank " + rank + ": " + e.getMessage());
        }
    }

    private int reap() {
        int work = 0;
        for (int r = 0; r < qps.length; r++) {
            QueuePair qp = qps[r];
            while (qp != null && qp.sendCq().poll(completion) == 1) {
                work++;
                Op op = inFlight.remove(completion.wrId());
                if (op == null) {
                    continue;
                }
                if (!completion.isSuccess()) {
                    opFailed(op, (op.read() ? "reading from rank " : "writing to rank ") + r + " failed: "
                            + completion.detail());
                } else if (op.read()) {
                    Transfer x = op.transfer();
                    Chunk c = op.chunk();
                    post(x.recv.task.rank, Opcode.RDMA_WRITE, transitMr, (long) op.transit() * CHUNK, c.length(),
                            x.recv.address + c.offset(), x.recv.key, new Op(x, c, op.transit(), false));
                } else if (op.chunk() != null) {
                    freeChunks.add(op.transit());
                    chunkDone(op.transfer());
                } else {
                    transferDone(op.transfer());
                }
            }
        }
        return work;
    }

    private void opFailed(Op op, String why) {
        Transfer x = op.transfer();
        String msg = x.send.task + ": the transfer from rank " + x.send.task.rank + " to rank " + x.recv.task.rank
                + " failed: " + why;
        x.failure = msg;
        fail(x.send.task, msg);
        fail(x.recv.task, msg);
        if (op.chunk() != null) {
            freeChunks.add(op.transit());
            chunkDone(x);
        } else {
            transferDone(x);
        }
    }

    private void chunkDone(Transfer x) {
        if (--x.chunksLeft == 0) {
            transferDone(x);
        }
    }

    private void transferDone(Transfer x) {
        if (x.failure == null && x.send.task.failure == null) {
            moved++;
            if (x.recv.task.remoteHost >= 0) {
                movedAcross++;
            }
        }
        entryDone(x.send);
        entryDone(x.recv);
        releaseForwards(x.recv);
        finishIfDone(x.send.task);
        finishIfDone(x.recv.task);
    }

    /** A receive that finished releases the sends of its task that wait for it (a tree's forward). */
    private void releaseForwards(Entry recv) {
        for (Entry e : recv.task.entries) {
            if (e.isSend() && e.after == recv.index && e.transfer != null && !e.transfer.started
                    && !ready.contains(e.transfer)) {
                ready.add(e.transfer);
            }
        }
    }

    private void entryDone(Entry e) {
        if (!e.done) {
            e.done = true;
            e.task.left--;
        }
    }

    private static void fail(Task t, String why) {
        if (t.failure == null) {
            t.failure = why;
        }
    }

    private void finishIfDone(Task t) {
        if (t.left == 0 && tasks.remove(t)) {
            if (t.remoteHost >= 0) {
                links.send(t.remoteHost, ProxyFrames.recvDone(t.token, t.failure));
            } else if (!dead[t.rank]) {
                queue.finish(t.slot, t.number, t.failure);
            }
        }
    }

    /** The link to another host's proxy failed: its ranks are unreachable. */
    private void hostGone(int g, String why) {
        for (int r = 0; r < placement.length; r++) {
            if (placement[r] == g && !dead[r]) {
                rankDied(r, "the collective proxy of host " + g + " is unreachable (" + why + ")");
            }
        }
    }

    /** A rank is gone: every unfinished task that exchanges with it fails now; its own tasks are dropped. */
    private void rankDied(int r, String why) {
        if (r < 0 || r >= dead.length) {
            return;
        }
        if (links != null && placement[r] == host) {
            for (int g = 0; g < links.hosts(); g++) {
                if (g != host) {
                    links.send(g, ProxyFrames.rankGone(r, why));
                }
            }
        }
        dead[r] = true;
        deaths[r] = why;
        assist.rankGone(r);
        unmatched.values().removeIf(e -> e.task.rank == r);
        for (Task t : List.copyOf(tasks)) {
            if (t.rank == r) {
                tasks.remove(t);
                continue;
            }
            for (Entry e : t.entries) {
                if (e.peer == r && !e.done && (e.transfer == null || !e.transfer.started)) {
                    fail(t, t + " on rank " + t.rank + " cannot finish: " + why);
                    unmatched.values().remove(e);
                    if (e.transfer != null) {
                        e.transfer.started = true;
                        ready.remove(e.transfer);
                    }
                    entryDone(e);
                }
            }
            finishIfDone(t);
        }
        remoteRecvs.values().removeIf(e -> e.done);
        QueuePair qp = qps[r];
        if (qp != null && inFlightTouch(r) == 0) {
            qp.close();
            qps[r] = null;
            if (placement[r] == host) {
                queue.setState(r, 0);
            }
        }
    }

    private int inFlightTouch(int r) {
        int n = 0;
        for (Op op : inFlight.values()) {
            if (op.transfer().send.task.rank == r || op.transfer().recv.task.rank == r) {
                n++;
            }
        }
        return n;
    }

    /** @return a line saying how many transfers this proxy finished and how many of them went to another host */
    public String summary() {
        return "host " + host + ": " + moved + " transfers, " + movedAcross + " of them into ranks of other hosts, "
                + assist.fills() + " shared-memory buffers filled for ranks";
    }

    /** @return how many receive buffers the proxy's helpers filled on the shared-memory path so far */
    public long sharedMemoryFills() {
        return assist.fills();
    }

    /** @return the queue file's path */
    public Path queuePath() {
        return queueRegion.path();
    }

    /** Stops the loop, says so in the queue, and frees the NIC; ranks still waiting see the proxy gone. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        stop = true;
        assist.close();
        if (thread != null) {
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        queue.markStopped();
        try {
            Files.deleteIfExists(locator);
        } catch (IOException e) {
            // the launcher removes it too
        }
        if (links != null) {
            links.close();
            boot.close();
        }
        nic.deregister(transitMr);
        nic.deregister(queueMr);
        nic.close();
    }

    /**
     * The proxy process: {@code GDASYNC_COLL_PROXY} (the locator path), {@code GDASYNC_SIZE} (the ranks) and
     * {@code GDASYNC_JOB_ID} from the launcher; with several hosts also {@code GDASYNC_COLL_PLACEMENT} (the host of
     * every rank), {@code GDASYNC_COLL_HOST} (this proxy's), {@code GDASYNC_COLL_RENDEZVOUS} and
     * {@code GDASYNC_SECRET} (the proxies' bootstrap). Runs until the launcher stops it.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        String locator = System.getenv(LOCATOR_ENV);
        String size = System.getenv(EnvNames.SIZE);
        String job = System.getenv(EnvNames.JOB_ID);
        if (locator == null || size == null || job == null) {
            System.err.println("coll-proxy: needs " + LOCATOR_ENV + ", GDASYNC_SIZE and GDASYNC_JOB_ID (started by mprun --proxies)");
            System.exit(2);
        }
        long threshold = Long.getLong("gdasync.coll.directThreshold", DEFAULT_THRESHOLD);
        int ranks = Integer.parseInt(size);
        String placed = System.getenv(PLACEMENT_ENV);
        int[] placement = placed == null ? new int[ranks] : Arrays.stream(placed.split(",")).mapToInt(Integer::parseInt).toArray();
        int hosts = Arrays.stream(placement).max().orElse(0) + 1;
        Bootstrap boot = null;
        if (hosts > 1) {
            int me = Integer.parseInt(Objects.requireNonNullElse(System.getenv(HOST_ENV), "0"));
            byte[] secret = HexFormat.of().parseHex(Objects.requireNonNull(System.getenv(EnvNames.SECRET),
                    "coll-proxy: several hosts need GDASYNC_SECRET"));
            boot = EnvBootstrap.connect(JobEnvironment.of(me, hosts, System.getenv(RENDEZVOUS_ENV), secret,
                    job + "-proxies", JobEnvironment.DEFAULT_TIMEOUT));
        }
        CollProxy proxy = new CollProxy(NicProviders.defaults().withJobId(job), placement, boot, Path.of(locator),
                threshold);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            proxy.stop = true;
            proxy.queue.markStopped();
            System.out.println(proxy.summary());
        }));
        proxy.run();
    }
}
