package dev.gdasync.test.harness;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A {@link Peer} in this JVM: a {@link SoftwareNic} and the named objects made with it, driven through
 * the gdsync API. Tests also reach the NIC and its objects directly ({@link #nic()}, {@link #qp}, ...)
 * for what the name-based operations do not cover (prepared sends, streams, KI tables).
 */
public final class LocalPeer implements Peer {
    private static final BackoffPolicy POLL_IDLE = new BackoffPolicy(200, 50, 10_000, 200_000);

    private final String name;
    private final SoftwareNic nic;
    private final Map<String, HostRegion> regions = new ConcurrentHashMap<>();
    private final Map<String, MemoryRegion> mrs = new ConcurrentHashMap<>();
    private final Map<String, QueuePair> qps = new ConcurrentHashMap<>();
    private final Map<String, Job> jobs = new ConcurrentHashMap<>();
    private final Completion completion = new Completion();
    private volatile boolean closing;

    private record Job(Thread thread, CompletableFuture<Traffic.Result> result, AtomicLong progress) {
    }

    private LocalPeer(String name, SoftwareNic nic) {
        this.name = name;
        this.nic = nic;
    }

    /**
     * Opens a software NIC.
     *
     * @param name   a name for messages
     * @param config its settings
     * @return the peer
     */
    public static LocalPeer open(String name, SwNicConfig config) {
        return new LocalPeer(name, SoftwareNic.open(config));
    }

    /** @return the NIC */
    public SoftwareNic nic() {
        return nic;
    }

    /** @return a region by name */
    public HostRegion region(String region) {
        return get(regions, region, "region");
    }

    /** @return a memory region by name */
    public MemoryRegion mr(String mr) {
        return get(mrs, mr, "memory region");
    }

    /** @return a queue pair by name */
    public QueuePair qp(String qp) {
        return get(qps, qp, "queue pair");
    }

    /** @return how far a background job has come (messages verified or posted) */
    public long progress(String job) {
        return get(jobs, job, "job").progress().get();
    }

    private static <T> T get(Map<String, T> map, String key, String what) {
        T v = map.get(key);
        if (v == null) {
            throw new PeerException("no " + what + " named '" + key + "'", null);
        }
        return v;
    }

    private <T> T call(String what, Supplier<T> action) {
        try {
            return action.get();
        } catch (PeerException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new PeerException(name + ": " + what + " failed: " + Wire.oneLine(e), e);
        }
    }

    private void run(String what, Runnable action) {
        call(what, () -> {
            action.run();
            return null;
        });
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long pid() {
        return ProcessHandle.current().pid();
    }

    @Override
    public long alloc(String region, long bytes) {
        return call("alloc " + region, () -> {
            HostRegion r = nic.allocateHost(bytes);
            regions.put(region, r);
            return r.address();
        });
    }

    @Override
    public void fill(String region, long offset, long length, long seed) {
        run("fill " + region, () -> Payloads.fill(region(region).segment(), offset, length, seed));
    }

    @Override
    public void write(String region, long offset, byte[] data) {
        run("write " + region, () -> MemorySegment.copy(data, 0, region(region).segment(), ValueLayout.JAVA_BYTE, offset, data.length));
    }

    @Override
    public byte[] read(String region, long offset, int length) {
        return call("read " + region, () -> region(region).segment().asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
    }

    @Override
    public int crc(String region, long offset, long length) {
        return call("crc " + region, () -> Payloads.crc(region(region).segment(), offset, length));
    }

    @Override
    public long get64(String region, long offset) {
        return call("get64 " + region, () -> region(region).segment().get(ValueLayout.JAVA_LONG, offset));
    }

    @Override
    public void set64(String region, long offset, long value) {
        run("set64 " + region, () -> region(region).segment().set(ValueLayout.JAVA_LONG, offset, value));
    }

    @Override
    public MrInfo register(String mr, String region, long offset, long length, int access) {
        return call("register " + mr, () -> {
            MemoryRegion m = nic.register(region(region), offset, length, access);
            mrs.put(mr, m);
            return new MrInfo(m.address(), m.length(), m.lkey(), m.rkey());
        });
    }

    @Override
    public void deregister(String mr) {
        run("deregister " + mr, () -> nic.deregister(mr(mr)));
    }

    @Override
    public Endpoint createQp(String qp, QueuePairConfig config) {
        return call("create queue pair " + qp, () -> {
            QueuePair q = nic.createQueuePair(config);
            qps.put(qp, q);
            return q.endpoint();
        });
    }

    @Override
    public void connect(String qp, Endpoint remote) {
        run("connect " + qp, () -> qp(qp).connect(remote));
    }

    @Override
    public void postRecv(String qp, long wrId, Sge... sges) {
        run("post receive on " + qp, () -> {
            RecvWorkRequest wr = new RecvWorkRequest().wrId(wrId);
            for (Sge s : sges) {
                wr.sge(mr(s.mr()), s.offset(), s.length());
            }
            qp(qp).postRecv(wr);
        });
    }

    /**
     * Translates a named request into the API's.
     *
     * @param wr the request
     * @return the API request
     */
    public SendWorkRequest toApi(Wr wr) {
        SendWorkRequest s = new SendWorkRequest().opcode(wr.opcode()).wrId(wr.wrId()).flags(wr.flags())
                .immediate(wr.immediate()).remote(wr.remoteAddress(), wr.rkey()).compareAdd(wr.compareAdd()).swap(wr.swap());
        for (Sge g : wr.sges()) {
            s.sge(mr(g.mr()), g.offset(), g.length());
        }
        return s;
    }

    @Override
    public void postSend(String qp, Wr wr) {
        run("post " + wr + " on " + qp, () -> qp(qp).postSend(toApi(wr)));
    }

    @Override
    public synchronized Cqe poll(String qp, Cq cq, Duration timeout) {
        return call("poll " + cq + " CQ of " + qp, () -> {
            QueuePair q = qp(qp);
            var queue = cq == Cq.SEND ? q.sendCq() : q.recvCq();
            long deadline = System.nanoTime() + timeout.toNanos();
            BackoffIdler idler = new BackoffIdler(POLL_IDLE);
            for (;;) {
                if (queue.poll(completion) == 1) {
                    return Cqe.of(completion);
                }
                if (System.nanoTime() - deadline > 0) {
                    return null;
                }
                idler.idle();
            }
        });
    }

    @Override
    public QpStatus status(String qp) {
        return call("status of " + qp, () -> {
            QueuePair q = qp(qp);
            return new QpStatus(q.state(), q.errorDetail());
        });
    }

    @Override
    public void closeQp(String qp) {
        run("close " + qp, () -> qp(qp).close());
    }

    private void startJob(String job, String what, java.util.function.Function<AtomicLong, Traffic.Result> body) {
        if (jobs.containsKey(job)) {
            throw new PeerException("job '" + job + "' exists", null);
        }
        AtomicLong progress = new AtomicLong();
        CompletableFuture<Traffic.Result> result = new CompletableFuture<>();
        Thread t = Thread.ofPlatform().daemon().name(name + "-" + job).unstarted(() -> {
            try {
                result.complete(body.apply(progress));
            } catch (Throwable e) {
                result.complete(new Traffic.Result(0, 0, null, null, 0, what + " threw " + Wire.oneLine(e)));
            }
        });
        jobs.put(job, new Job(t, result, progress));
        t.start();
    }

    @Override
    public void startSink(String job, String qp, String mr, long count, int minSize, int maxSize, Duration timeout) {
        QueuePair q = qp(qp);
        MemoryRegion m = mr(mr);
        startJob(job, "sink", p -> Traffic.sink(q, m, count, minSize, maxSize, timeout, () -> closing, p));
    }

    @Override
    public void startSource(String job, String qp, String mr, long count, int minSize, int maxSize, int signalEvery,
                            Duration timeout) {
        QueuePair q = qp(qp);
        MemoryRegion m = mr(mr);
        startJob(job, "source", p -> Traffic.source(q, m, count, minSize, maxSize, signalEvery, timeout, () -> closing, p));
    }

    /**
     * Waits for a background job.
     *
     * @return its result, or null if it did not end within the timeout
     */
    public Traffic.Result awaitOrNull(String job, Duration timeout) {
        try {
            Traffic.Result r = get(jobs, job, "job").result().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            jobs.remove(job);
            return r;
        } catch (TimeoutException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PeerException("interrupted", e);
        } catch (ExecutionException e) {
            throw new PeerException("job " + job + " failed", e.getCause());
        }
    }

    @Override
    public Traffic.Result await(String job, Duration timeout) {
        Traffic.Result r = awaitOrNull(job, timeout);
        if (r == null) {
            throw new PeerException(name + ": job '" + job + "' did not end within " + timeout.toMillis() + " ms", null);
        }
        return r;
    }

    @Override
    public void closeNic() {
        stopJobs();
        nic.close();
    }

    private void stopJobs() {
        closing = true;
        for (Job j : jobs.values()) {
            try {
                j.thread().join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Stops background jobs and closes the NIC with everything made with it. */
    @Override
    public void close() {
        stopJobs();
        nic.close();
    }

    @Override
    public String toString() {
        return "LocalPeer{" + name + ", " + nic + "}";
    }
}
