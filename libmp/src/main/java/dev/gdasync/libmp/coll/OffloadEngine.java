package dev.gdasync.libmp.coll;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.coll.offload.ProxyQueue;
import dev.gdasync.libmp.coll.shm.ShmChannel;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * The offload engine of one {@link Mp}: each collective becomes one task descriptor in this rank's area of the
 * host's {@link ProxyQueue} (its sends and receives with addresses, lengths and registration keys; sends below the
 * proxy's threshold copied into the slot's staging bytes), published with one release store. The
 * collective proxy ({@code dev.gdasync.libmp.proxy.CollProxy}, a tool the launcher starts) executes it; {@link #progress} only reads the slots' done words, so a rank that never calls
 * test still has its collectives finished.
 *
 * <p>Where the job spans several hosts, the rank also makes one queue pair for every other host's proxy and publishes
 * its endpoint in its area; its own proxy forwards it and writes back the other proxy's endpoint (the proxies meet
 * through their own bootstrap). Those proxies write what the rank receives from their hosts' ranks.
 *
 * <p>A proxy that is gone (its pid, or its stopped flag) fails every active collective and the engine refuses new
 * ones. Runs on the thread that drives the Mp.
 */
final class OffloadEngine implements Engine {
    private static final long LIVENESS_NANOS = 20_000_000L;

    private final Mp mp;
    private final int me;
    private final Arena arena = Arena.ofShared();
    private final ProxyQueue queue;
    private final QueuePair qp;
    /** Per other host, the queue pair its proxy writes into this rank's buffers through (null for this host). */
    private final QueuePair[] links;
    private final CollOp[] slotOps = new CollOp[ProxyQueue.SLOTS];
    private final long[] slotNumbers = new long[ProxyQueue.SLOTS];
    private final long threshold;
    private long next;
    private int active;
    private long lastLook;
    private String broken;
    private boolean closed;

    /**
     * Attaches to the proxy named by a locator file and connects this rank to it.
     *
     * @param mp      the rank
     * @param locator the file holding the proxy queue's path
     */
    OffloadEngine(Mp mp, Path locator) {
        this.mp = mp;
        this.me = mp.rank();
        long timeout = mp.config().waitTimeout().toNanos();
        long start = System.nanoTime();
        Path queuePath = readLocator(locator, start, timeout);
        MemorySegment file;
        try {
            file = ShmDirectory.mapExisting(queuePath, true, arena);
        } catch (UncheckedIOException e) {
            arena.close();
            throw new IllegalStateException("cannot map the collective proxy's queue " + queuePath + ": " + e.getMessage(), e);
        }
        ProxyQueue q;
        try {
            q = ProxyQueue.attach(file);
            if (me >= q.ranks()) {
                throw new IllegalStateException("the collective proxy serves ranks 0.." + (q.ranks() - 1) + " of its host; rank "
                        + me + " of a job of " + mp.size() + " cannot use it (one proxy serves one host's ranks)");
            }
            if (!ShmDirectory.isAlive(q.proxyPid(), q.proxyStart()) || q.stopped()) {
                throw new IllegalStateException("the collective proxy (pid " + q.proxyPid() + ") is not running");
            }
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.queue = q;
        this.threshold = q.threshold();
        this.qp = mp.nic().createQueuePair(QueuePairConfig.DEFAULT);
        this.links = new QueuePair[queue.hosts()];
        try {
            for (int g = 0; g < links.length; g++) {
                if (g != queue.host()) {
                    links[g] = mp.nic().createQueuePair(QueuePairConfig.DEFAULT);
                    queue.publishLink(me, g, links[g].endpoint().toBytes());
                }
            }
            queue.publishRank(me, ProcessHandle.current().pid(), ShmDirectory.currentStartMillis(), qp.endpoint().toBytes());
            BackoffIdler idler = new BackoffIdler(BackoffPolicy.SPIN_THEN_YIELD);
            while (queue.state(me) == ProxyQueue.RANK_PUBLISHED) {
                if (System.nanoTime() - start > timeout || !proxyAlive()) {
                    throw new IllegalStateException("the collective proxy (pid " + queue.proxyPid() + ") did not connect rank "
                            + me + " within " + mp.config().waitTimeout() + (proxyAlive() ? "" : ": it is gone"));
                }
                idler.idle();
            }
            if (queue.state(me) != ProxyQueue.PROXY_CONNECTED) {
                throw new IllegalStateException(queue.refusal(me));
            }
            qp.connect(Endpoint.of(queue.proxyEndpoint(me)));
            for (int g = 0; g < links.length; g++) {
                if (links[g] != null) {
                    links[g].connect(Endpoint.of(queue.remoteProxyEndpoint(me, g)));
                }
            }
            this.next = queue.head(me);
        } catch (RuntimeException e) {
            closeLinks();
            qp.close();
            arena.close();
            throw e;
        }
    }

    private static Path readLocator(Path locator, long start, long timeout) {
        // mprun starts the proxy beside the ranks: its locator may appear a moment after a rank asks.
        while (true) {
            try {
                return Path.of(Files.readString(locator).trim());
            } catch (NoSuchFileException e) {
                if (System.nanoTime() - start > timeout) {
                    throw new IllegalStateException("no collective proxy published " + locator + " within "
                            + timeout / 1_000_000_000 + " s: is the job started with scripts/mprun --proxies?", e);
                }
                try {
                    Thread.sleep(10);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for the collective proxy", ie);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the collective proxy's locator " + locator, e);
            }
        }
    }

    @Override
    public Mp mp() {
        return mp;
    }

    @Override
    public int activeCount() {
        return active;
    }

    @Override
    public int hostOf(int worldRank) {
        return queue.hostOf(worldRank);
    }

    @Override
    public boolean offloaded() {
        return true;
    }

    @Override
    public void channelOpened(ShmChannel channel, int context) {
        channel.assist(queue::ringHelpers);
        queue.registerChannel(me, context, channel.size(), channel.rank(), channel.ownArea());
    }

    /** Also looks at the proxy's liveness now and then: shared-memory collectives never ask it anything else. */
    @Override
    public String failure() {
        long now = System.nanoTime();
        if (broken == null && now - lastLook > LIVENESS_NANOS) {
            lastLook = now;
            if (!proxyAlive()) {
                breakDown("the collective proxy (pid " + queue.proxyPid() + ") is gone");
            }
        }
        return broken;
    }

    @Override
    public void requireHealthy() {
        if (broken != null) {
            throw new CollectiveException("collectives on rank " + me + " are unusable: " + broken, null);
        }
    }

    @Override
    public void start(CollOp op) {
        requireHealthy();
        int count = op.sends.size() + op.recvs.size();
        if (count == 0) {
            return; // a communicator of one rank: nothing to move
        }
        if (count > ProxyQueue.MAX_ENTRIES) {
            throw new IllegalArgumentException(op + " has " + count + " sends and receives; a task for the collective proxy"
                    + " holds at most " + ProxyQueue.MAX_ENTRIES);
        }
        int s = (int) (next % ProxyQueue.SLOTS);
        awaitSlot(op, s);
        long slot = queue.slot(me, s);
        // Receives first, so that a send's afterRecv is the index of its receive among the entries.
        int i = 0;
        for (CollOp.Recv r : op.recvs) {
            queue.writeEntry(slot, i++, ProxyQueue.RECV, r.peer, r.part, -1, r.buf.address(), r.buf.byteSize(), r.reg == null ? 0 : r.reg.rkey());
        }
        long staged = 0;
        MemorySegment file = queue.file();
        for (CollOp.Send x : op.sends) {
            long n = x.buf.byteSize();
            if (x.afterRecv < 0 && n > 0 && n < threshold && staged + n <= ProxyQueue.STAGE_BYTES) {
                long at = ProxyQueue.stage(slot) + staged;
                MemorySegment.copy(x.buf, 0, file, at, n);
                queue.writeEntry(slot, i++, ProxyQueue.SEND_STAGED, x.peer, x.part, -1, at, n, 0);
                staged += (n + 63) & ~63L;
            } else {
                queue.writeEntry(slot, i++, ProxyQueue.SEND, x.peer, x.part, x.afterRecv, x.buf.address(), n, x.reg == null ? 0 : x.reg.rkey());
            }
        }
        queue.writeTask(slot, op.context, op.seq, op.name, count);
        slotOps[s] = op;
        slotNumbers[s] = next;
        active++;
        queue.setHead(me, ++next);
    }

    /** Waits for the slot's previous task (at most {@link ProxyQueue#SLOTS} collectives are outstanding). */
    private void awaitSlot(CollOp op, int s) {
        long timeout = mp.config().waitTimeout().toNanos();
        long start = System.nanoTime();
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.SPIN_THEN_YIELD);
        while (slotOps[s] != null) {
            progress();
            requireHealthy();
            if (slotOps[s] != null && System.nanoTime() - start > timeout) {
                throw new CollectiveException(op + " on rank " + me + ": " + ProxyQueue.SLOTS + " collectives are outstanding"
                        + " and " + slotOps[s] + " did not finish within " + mp.config().waitTimeout(), null);
            }
            idler.idle();
        }
    }

    @Override
    public void progress() {
        if (broken != null || active == 0) {
            return;
        }
        for (int s = 0; s < ProxyQueue.SLOTS; s++) {
            CollOp op = slotOps[s];
            if (op != null) {
                long slot = queue.slot(me, s);
                if (queue.done(slot) == slotNumbers[s] + 1) {
                    String why = queue.failure(slot);
                    op.finishedByProxy(why == null ? null : why + " (reported by the collective proxy to rank " + me + ")");
                    slotOps[s] = null;
                    active--;
                }
            }
        }
        long now = System.nanoTime();
        if (active > 0 && now - lastLook > LIVENESS_NANOS) {
            lastLook = now;
            if (!proxyAlive()) {
                breakDown("the collective proxy (pid " + queue.proxyPid() + ") is gone");
            }
        }
    }

    private boolean proxyAlive() {
        return !queue.stopped() && ShmDirectory.isAlive(queue.proxyPid(), queue.proxyStart());
    }

    private void breakDown(String why) {
        broken = why;
        for (int s = 0; s < ProxyQueue.SLOTS; s++) {
            if (slotOps[s] != null) {
                slotOps[s].abandon(slotOps[s] + " failed on rank " + me + ": " + why, null);
                slotOps[s] = null;
            }
        }
        active = 0;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (int s = 0; s < ProxyQueue.SLOTS; s++) {
            if (slotOps[s] != null) {
                slotOps[s].abandon(slotOps[s] + " was abandoned: its Collectives closed", null);
                slotOps[s] = null;
            }
        }
        queue.markClosed(me);
        // The proxy hands the area back (state 0) once it saw the close, so this rank can attach again.
        long deadline = System.nanoTime() + 2_000_000_000L;
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.SPIN_THEN_YIELD);
        while (queue.state(me) == ProxyQueue.PROXY_CONNECTED && proxyAlive() && System.nanoTime() < deadline) {
            idler.idle();
        }
        closeLinks();
        qp.close();
        arena.close();
    }

    private void closeLinks() {
        for (QueuePair link : links) {
            if (link != null) {
                link.close();
            }
        }
    }
}
