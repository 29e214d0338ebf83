package dev.gdasync.apps.gdsyncpingpong;

import dev.gdasync.gdsync.concurrent.ThreadAffinity;
import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * The gdsync ping-pong: two processes bounce a message through the software NIC's API, with the
 * doorbell rung by the CPU ({@code ring=cpu}) or by a host stream ({@code ring=stream}).
 *
 * <p>This process is the initiator (rank 0); it starts the responder (rank 1) as a child JVM and
 * exchanges endpoint descriptors with it over the child's standard input and output. For each ring mode
 * and size it runs a warm-up, then {@link PingPongPlan#repetitions()} timed runs; the one-way latency is
 * half the round trip, and the figure reported is the median over the runs. A single-thread memcpy of
 * the same sizes is measured in the same run as the bandwidth reference.
 */
public final class GdsyncPingPong {
    static final int WINDOW = 128;
    static final int WINDOWS_AHEAD = 4;
    static final int RECV_AHEAD = 896;
    static final long WARMUP_NANOS = 1_000_000_000L;
    static final long GLOBAL_WARMUP_NANOS = 3_000_000_000L;
    static final long POLL_PARK_NANOS = 250000;

    private GdsyncPingPong() {
    }

    /**
     * Runs the benchmark.
     *
     * @param args see {@link PingPongPlan#parse}
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--responder")) {
            Responder.run(PingPongPlan.parse(Arrays.copyOfRange(args, 1, args.length)));
            return;
        }
        PingPongPlan plan;
        try {
            plan = PingPongPlan.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("gdsync-pingpong: " + e.getMessage());
            System.err.println(PingPongPlan.USAGE);
            System.exit(2);
            return;
        }
        Initiator.run(plan);
    }

    /** Both sides' memory and queue pair. */
    static final class Side implements AutoCloseable {
        final SoftwareNic nic;
        final HostRegion region;
        final MemoryRegion mr;
        final Map<String, QueuePair> queuePairs = new LinkedHashMap<>();
        final long sendOffset;
        final long recvOffset;
        final SendWorkRequest send = new SendWorkRequest();
        final RecvWorkRequest recv = new RecvWorkRequest();
        final Completion completion = new Completion();

        Side(String jobId, int maxBytes, List<String> rings) {
            nic = SoftwareNic.open(SwNicConfig.defaults().withJobId(jobId));
            sendOffset = 0;
            recvOffset = align(maxBytes);
            region = nic.allocateHost(recvOffset + align(maxBytes));
            mr = nic.register(region, Access.LOCAL_WRITE);
            // One queue pair per ring mode: each mode starts from fresh completion queues.
            for (String ring : rings) {
                queuePairs.put(ring, nic.createQueuePair(new QueuePairConfig(1024, 1024, 2048)));
            }
        }

        QueuePair qp(String ring) {
            return queuePairs.get(ring);
        }

        /** Sends this side's endpoints, one line per ring mode. */
        void sendEndpoints(PrintStream out) {
            for (Map.Entry<String, QueuePair> e : queuePairs.entrySet()) {
                out.println("ENDPOINT " + e.getKey() + " " + e.getValue().endpoint().toHex());
            }
        }

        /** Reads the peer's endpoints and connects each queue pair. */
        void connect(BufferedReader in) throws IOException {
            for (int i = 0; i < queuePairs.size(); i++) {
                String[] f = readLine(in, "the peer's endpoints").split(" ");
                if (f.length != 3 || !f[0].equals("ENDPOINT") || !queuePairs.containsKey(f[1])) {
                    throw new IOException("expected ENDPOINT <ring> <hex> from the peer, got " + String.join(" ", f));
                }
                queuePairs.get(f[1]).connect(Endpoint.fromHex(f[2]));
            }
        }

        private static long align(long v) {
            return (v + 4095) & -4096L;
        }

        void setSize(int bytes) {
            send.reset().wrId(1).sge(mr, sendOffset, bytes);
            recv.reset().wrId(2).sge(mr, recvOffset, bytes);
        }

        /** Busy-polls a completion queue for one completion and checks it succeeded. */
        void awaitOne(CompletionQueue cq) {
            while (cq.poll(completion) == 0) {
                Thread.onSpinWait();
            }
            if (!completion.isSuccess()) {
                throw new IllegalStateException("completion failed: " + completion);
            }
        }

        /** Reaps every completion available on a completion queue. */
        int reap(CompletionQueue cq) {
            int n = 0;
            while (cq.poll(completion) == 1) {
                if (!completion.isSuccess()) {
                    throw new IllegalStateException("completion failed: " + completion);
                }
                n++;
            }
            return n;
        }

        @Override
        public void close() {
            nic.close();
        }
    }

    /** One timed loop of the CPU-rung ping-pong; the initiator returns the elapsed nanoseconds. */
    static long cpuLoop(Side s, int iters, boolean initiator) {
        QueuePair qp = s.qp("cpu");
        long start = System.nanoTime();
        if (initiator) {
            for (int i = 0; i < iters; i++) {
                qp.postRecv(s.recv);
                qp.postSend(s.send);
                s.awaitOne(qp.recvCq());
                s.awaitOne(qp.sendCq());
            }
        } else {
            // The first receive was posted before the run started.
            for (int i = 0; i < iters; i++) {
                s.awaitOne(qp.recvCq());
                if (i + 1 < iters) {
                    qp.postRecv(s.recv);
                }
                qp.postSend(s.send);
                s.awaitOne(qp.sendCq());
            }
        }
        return System.nanoTime() - start;
    }

    /**
     * One timed loop of the stream-rung ping-pong. The CPU prepares windows of iterations ahead and
     * hands them to the stream; the stream rings each send and waits for each receive itself. The CPU
     * only reaps a window's completions after the stream passed it.
     */
    static long streamLoop(Side s, HostStream stream, int iters, boolean initiator, WaitRequest firstWait) {
        QueuePair qp = s.qp("stream");
        long start = System.nanoTime();
        List<Event> events = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        ArrayDeque<WaitRequest> recvWaits = new ArrayDeque<>();
        int done = 0;
        int queued = 0;
        int reaped = 0;
        long recvReaped = 0;
        long sendReaped = 0;
        // The responder posted its first receive, and prepared its wait, before the run.
        int recvPosted = 0;
        if (firstWait != null) {
            recvWaits.add(firstWait);
            recvPosted = 1;
        }
        while (reaped < iters) {
            // Receives go up far ahead, as applications pre-post them, so a send never waits for one.
            // Each receive's wait is prepared with it (as LibMP's irecv does): the CQE is then held for
            // the stream's wait and the CPU cannot reap it first.
            while (recvPosted < iters && recvPosted - reaped < RECV_AHEAD) {
                qp.postRecv(s.recv);
                recvWaits.add(qp.prepareWaitCq(qp.recvCq()));
                recvPosted++;
            }
            // Keep WINDOWS_AHEAD windows queued, so the stream never waits for the CPU to prepare.
            while (queued < iters && events.size() - done < WINDOWS_AHEAD) {
                int n = Math.min(WINDOW, iters - queued);
                // A window goes to the stream as one descriptor list, one batch of memops.
                List<Descriptor> window = new ArrayList<>(2 * n);
                for (int i = 0; i < n; i++) {
                    WaitRequest wait = recvWaits.remove();
                    SendRequest send = qp.prepareSend(s.send);
                    if (initiator) {
                        window.add(new Descriptor.Send(send));
                        window.add(new Descriptor.Wait(wait));
                    } else {
                        window.add(new Descriptor.Wait(wait));
                        window.add(new Descriptor.Send(send));
                    }
                }
                stream.post(window);
                events.add(stream.record());
                sizes.add(n);
                queued += n;
            }
            // Poll the event with short sleeps: a CPU that spins or is woken by the stream would take a
            // core from the streams, which do the ping-pong.
            Event event = events.get(done);
            while (!event.isDone()) {
                LockSupport.parkNanos(POLL_PARK_NANOS);
            }
            event.synchronize();
            int n = sizes.get(done);
            // Reap at least this window; completions of the next one may come along.
            while (recvReaped < reaped + n) {
                recvReaped += s.reap(qp.recvCq());
            }
            while (sendReaped < reaped + n) {
                sendReaped += s.reap(qp.sendCq());
            }
            reaped += n;
            done++;
        }
        return System.nanoTime() - start;
    }

    /** Reads one line from a peer; fails clearly if the peer is gone. */
    static String readLine(BufferedReader in, String what) throws IOException {
        String line = in.readLine();
        if (line == null) {
            throw new IOException("the other process closed its output while we waited for " + what);
        }
        return line;
    }

    /** The responder: started by the initiator, talks over stdin/stdout. */
    static final class Responder {
        private Responder() {
        }

        static void run(PingPongPlan plan) throws Exception {
            PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            try (Side s = new Side(plan.jobId(), plan.maxBytes(), plan.rings());
                 HostStream stream = HostStream.create("responder")) {
                s.sendEndpoints(out);
                s.connect(in);
                pinStream(pingPongCpu(false, plan.pin()), stream);
                for (;;) {
                    String cmd = readLine(in, "a command");
                    if (cmd.equals("QUIT")) {
                        break;
                    }
                    // RUN ring bytes iters
                    String[] f = cmd.split(" ");
                    String ring = f[1];
                    int bytes = Integer.parseInt(f[2]);
                    int iters = Integer.parseInt(f[3]);
                    s.setSize(bytes);
                    QueuePair qp = s.qp(ring);
                    qp.postRecv(s.recv);
                    WaitRequest firstWait = ring.equals("stream") ? qp.prepareWaitCq(qp.recvCq()) : null;
                    out.println("READY");
                    if (ring.equals("cpu")) {
                        cpuLoop(s, iters, false);
                    } else {
                        streamLoop(s, stream, iters, false, firstWait);
                    }
                    out.println("DONE");
                }
            }
        }
    }

    /** The initiator: runs the plan, prints the table, writes the CSV. */
    static final class Initiator {
        private Initiator() {
        }

        static void run(PingPongPlan plan) throws Exception {
            String java = ProcessHandle.current().info().command().orElse("java");
            List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                    "-cp", System.getProperty("java.class.path"), GdsyncPingPong.class.getName(), "--responder"));
            cmd.addAll(plan.toArgs());
            Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            List<Result> results = new ArrayList<>();
            try (Side s = new Side(plan.jobId(), plan.maxBytes(), plan.rings());
                 HostStream stream = HostStream.create("initiator");
                 PrintStream toChild = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8)) {
                BufferedReader fromChild = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                s.connect(fromChild);
                s.sendEndpoints(toChild);
                int cpu = pingPongCpu(true, plan.pin());
                int peerCpu = pingPongCpu(false, plan.pin());
                pinStream(cpu, stream);
                System.out.println(cpu >= 0 ? "stream threads pinned to CPUs " + cpu + " and " + peerCpu
                        : "stream threads not pinned");
                Memcpy memcpy = new Memcpy(s.nic, plan.maxBytes());
                // Warm every ring's code path up front, so the first measured size does not pay for the JIT.
                for (String ring : plan.rings()) {
                    long warm = System.nanoTime();
                    do {
                        timedRun(s, stream, toChild, fromChild, ring, 8, 20_000);
                    } while (System.nanoTime() - warm < GLOBAL_WARMUP_NANOS);
                }
                for (String ring : plan.rings()) {
                    for (int bytes : plan.sizes()) {
                        int iters = plan.itersFor(bytes);
                        double[] oneWay = new double[plan.repetitions()];
                        // Warm this size up (caches, branch history) for WARMUP_NANOS, then the timed runs.
                        long warm = System.nanoTime();
                        do {
                            timedRun(s, stream, toChild, fromChild, ring, bytes, iters);
                        } while (System.nanoTime() - warm < WARMUP_NANOS);
                        for (int r = 0; r < plan.repetitions(); r++) {
                            long ns = timedRun(s, stream, toChild, fromChild, ring, bytes, iters);
                            oneWay[r] = ns / 1000.0 / iters / 2;
                        }
                        Result res = new Result(ring, bytes, iters, median(oneWay));
                        results.add(res);
                        System.out.println(res.line());
                    }
                }
                for (int bytes : plan.sizes()) {
                    if (bytes >= 4096) {
                        Result res = new Result("memcpy", bytes, plan.itersFor(bytes), memcpy.oneCopyMicros(bytes, plan.itersFor(bytes)));
                        results.add(res);
                        System.out.println(res.line());
                    }
                }
                memcpy.close();
                toChild.println("QUIT");
            } finally {
                if (!child.waitFor(Duration.ofSeconds(10))) {
                    child.destroyForcibly();
                }
            }
            Report.print(results, plan);
            if (plan.csv() != null) {
                Report.writeCsv(results, plan.csv());
                System.out.println("wrote " + plan.csv());
            }
            if (child.exitValue() != 0) {
                throw new IllegalStateException("the responder exited with status " + child.exitValue());
            }
        }

        private static long timedRun(Side s, HostStream stream, PrintStream toChild, BufferedReader fromChild,
                                     String ring, int bytes, int iters) throws IOException {
            s.setSize(bytes);
            toChild.println("RUN " + ring + " " + bytes + " " + iters);
            String ready = readLine(fromChild, "READY");
            if (!ready.equals("READY")) {
                throw new IOException("expected READY from the responder, got " + ready);
            }
            long ns = ring.equals("cpu") ? cpuLoop(s, iters, true) : streamLoop(s, stream, iters, true, null);
            String done = readLine(fromChild, "DONE");
            if (!done.equals("DONE")) {
                throw new IOException("expected DONE from the responder, got " + done);
            }
            return ns;
        }
    }

    /**
     * The CPU a side's ping-pong thread runs on: the initiator's the first allowed CPU, the responder's
     * the second; -1 when pinning is off or there are fewer than two CPUs. Call before pinning anything.
     */
    static int pingPongCpu(boolean initiator, boolean pin) {
        if (!pin || !ThreadAffinity.isSupported()) {
            return -1;
        }
        List<Integer> cpus = ThreadAffinity.allowedCpus();
        return cpus.size() < 2 ? -1 : cpus.get(initiator ? 0 : 1);
    }

    /**
     * Pins a stream's thread, which plays the ring=stream ping-pong, to the side's CPU. The CPU thread
     * that prepares for it stays free to run anywhere. (The ring=cpu loop is not pinned: on the 2-CPU
     * machines this was measured on, pinned CPU-rung loops ran slower than free ones.)
     */
    static void pinStream(int cpu, HostStream stream) {
        if (cpu >= 0) {
            stream.launch(() -> ThreadAffinity.pinCurrentThread(cpu));
            stream.synchronize();
        }
    }

    static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        int n = c.length;
        return n % 2 == 1 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    }

    /** One row of the results. */
    record Result(String ring, int bytes, int iters, double oneWayMicros) {
        /** @return megabytes (10^6 bytes) per second delivered one way */
        double megabytesPerSecond() {
            return bytes / oneWayMicros;
        }

        String line() {
            return String.format("%-7s %9d B  %7d iters  %10.3f us  %10.1f MB/s", ring, bytes, iters, oneWayMicros,
                    megabytesPerSecond());
        }
    }

    /** Single-thread memcpy between two host regions: the bandwidth reference. */
    static final class Memcpy implements AutoCloseable {
        private final HostRegion a;
        private final HostRegion b;

        Memcpy(SoftwareNic nic, int maxBytes) {
            a = nic.allocateHost(maxBytes);
            b = nic.allocateHost(maxBytes);
        }

        double oneCopyMicros(int bytes, int iters) {
            MemorySegment src = a.segment();
            MemorySegment dst = b.segment();
            double[] runs = new double[5];
            for (int w = 0; w < 2; w++) {
                copyLoop(src, dst, bytes, iters);
            }
            for (int r = 0; r < runs.length; r++) {
                runs[r] = copyLoop(src, dst, bytes, iters) / 1000.0 / iters;
            }
            return median(runs);
        }

        private static long copyLoop(MemorySegment src, MemorySegment dst, int bytes, int iters) {
            long t = System.nanoTime();
            for (int i = 0; i < iters; i++) {
                MemorySegment.copy(src, 0, dst, 0, bytes);
            }
            return System.nanoTime() - t;
        }

        @Override
        public void close() {
            a.close();
            b.close();
        }
    }
}
