package dev.gdasync.libmp.coll.offload;

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

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
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
 * <p>A dead rank (its pid gone) fails every unfinished task that exchanges with it; a transfer the NIC
 * completes with an error fails the two tasks it belongs to. One thread runs everything.
 */
public final class CollProxy implements AutoCloseable {
    /** The environment variable naming the locator file (a path the launcher picks). */
    public static final String LOCATOR_ENV = "GDASYNC_COLL_PROXY";
    /** Default size from which a send is read straight from the sender's buffer. */
    public static final long DEFAULT_THRESHOLD = 8 * 1024;
    /** Bytes one transit chunk moves. */
    static final int CHUNK = 256 * 1024;
    /** Transit chunks: how many direct chunks may be in flight. */
    static final int CHUNKS = 16;
    /** Work requests in flight at most (staged writes and chunks). */
    private static final int MAX_IN_FLIGHT = 256;
    private static final long LIVENESS_NANOS = 50_000_000L;

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
    private final Map<Key, Entry> unmatched = new HashMap<>();
    private final ArrayDeque<Transfer> ready = new ArrayDeque<>();
    private final ArrayDeque<Chunk> chunkQueue = new ArrayDeque<>();
    private final Map<Long, Op> inFlight = new HashMap<>();
    private final List<Task> tasks = new ArrayList<>();
    private final Completion completion = new Completion();
    private final Path locator;
    private long nextWr = 1;
    private long lastLiveness;
    private volatile boolean stop;
    private boolean closed;
    private Thread thread;

    /** A posted collective of one rank, as the proxy holds it. */
    private static final class Task {
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
        Objects.requireNonNull(nicConfig, "nicConfig must not be null");
        Objects.requireNonNull(locator, "locator must not be null");
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be >= 1, got " + ranks);
        }
        this.locator = locator;
        this.nic = NicProviders.open(nicConfig);
        try {
            if (!(nic.allocateHost(ProxyQueue.bytes(ranks)) instanceof HostRegion q)) {
                throw new IllegalStateException("the collective proxy needs a NIC whose host memory is a shared file");
            }
            this.queueRegion = q;
            this.queueMr = nic.register(q, Access.ALL);
            this.queue = new ProxyQueue(q.segment(), ranks);
            this.transitRegion = nic.allocateHost((long) CHUNK * CHUNKS);
            this.transitMr = nic.register(transitRegion, Access.ALL);
            for (int c = 0; c < CHUNKS; c++) {
                freeChunks.add(c);
            }
            this.qps = new QueuePair[ranks];
            this.taken = new long[ranks];
            this.dead = new boolean[ranks];
            queue.initHeader(ProcessHandle.current().pid(), ShmDirectory.currentStartMillis(), threshold);
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
            work += serveRank(r, look);
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
        int work = 0;
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
        queue.publishProxy(r, qp.endpoint().toBytes());
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
                fail(t, t + " on rank " + r + ": rank " + e.peer + " is gone");
                entryDone(e);
                continue;
            }
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
        finishIfDone(t);
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
        entryDone(x.send);
        entryDone(x.recv);
        // A receive that finished releases the sends of its task that wait for it (a tree's forward).
        Task t = x.recv.task;
        for (Entry e : t.entries) {
            if (e.isSend() && e.after == x.recv.index && e.transfer != null && !e.transfer.started
                    && !ready.contains(e.transfer)) {
                ready.add(e.transfer);
            }
        }
        finishIfDone(x.send.task);
        finishIfDone(x.recv.task);
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
            if (!dead[t.rank]) {
                queue.finish(t.slot, t.number, t.failure);
            }
        }
    }

    /** A rank is gone: every unfinished task that exchanges with it fails now; its own tasks are dropped. */
    private void rankDied(int r, String why) {
        dead[r] = true;
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
        QueuePair qp = qps[r];
        if (qp != null && inFlightTouch(r) == 0) {
            qp.close();
            qps[r] = null;
            queue.setState(r, 0);
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
        nic.deregister(transitMr);
        nic.deregister(queueMr);
        nic.close();
    }

    /**
     * The proxy process: {@code GDASYNC_COLL_PROXY} (the locator path), {@code GDASYNC_SIZE} (the ranks) and
     * {@code GDASYNC_JOB_ID} from the launcher; runs until the launcher stops it.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        String locator = System.getenv(LOCATOR_ENV);
        String size = System.getenv("GDASYNC_SIZE");
        String job = System.getenv("GDASYNC_JOB_ID");
        if (locator == null || size == null || job == null) {
            System.err.println("coll-proxy: needs " + LOCATOR_ENV + ", GDASYNC_SIZE and GDASYNC_JOB_ID (started by mprun --proxies)");
            System.exit(2);
        }
        long threshold = Long.getLong("gdasync.coll.directThreshold", DEFAULT_THRESHOLD);
        CollProxy proxy = new CollProxy(NicProviders.defaults().withJobId(job), Integer.parseInt(size), Path.of(locator),
                threshold);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            proxy.stop = true;
            proxy.queue.markStopped();
        }));
        proxy.run();
    }
}
