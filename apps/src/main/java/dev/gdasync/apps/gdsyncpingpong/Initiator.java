package dev.gdasync.apps.gdsyncpingpong;

import dev.gdasync.apps.common.Medians;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.cli.ProgressLine;
import dev.gdasync.libmp.cli.SizeCosts;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The initiator: runs the plan, prints the table, writes the CSV. */
final class Initiator {
    /** Warm-up of each size before its timed runs. */
    static final long WARMUP_NANOS = 1_000_000_000L;
    /** Warm-up of each ring mode before anything is measured. */
    static final long GLOBAL_WARMUP_NANOS = 3_000_000_000L;
    /** The least time between two progress lines. */
    static final long PROGRESS_NANOS = 5_000_000_000L;

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
            int cpu = StreamPinning.cpuFor(true, plan.pin());
            int peerCpu = StreamPinning.cpuFor(false, plan.pin());
            StreamPinning.pin(cpu, stream);
            System.out.println(cpu >= 0 ? "stream threads pinned to CPUs " + cpu + " and " + peerCpu
                    : "stream threads not pinned");
            Memcpy memcpy = new Memcpy(s.nic, plan.maxBytes());
            SizeCosts costs = new SizeCosts();
            ProgressLine progress = new ProgressLine(System.err, PROGRESS_NANOS);
            // Warm every ring's code path up front, so the first measured size does not pay for the JIT.
            for (String ring : plan.rings()) {
                long warm = System.nanoTime();
                do {
                    timedRun(s, stream, toChild, fromChild, ring, 8, 20_000);
                } while (System.nanoTime() - warm < GLOBAL_WARMUP_NANOS);
            }
            for (int g = 0; g < plan.rings().size(); g++) {
                String ring = plan.rings().get(g);
                for (int i = 0; i < plan.sizes().size(); i++) {
                    int bytes = plan.sizes().get(i);
                    int iters = plan.itersFor(bytes);
                    double[] oneWay = new double[plan.repetitions()];
                    // Warm this size up (caches, branch history) for WARMUP_NANOS, then the timed runs.
                    long warm = System.nanoTime();
                    do {
                        costs.ran(bytes, iters, timedRun(s, stream, toChild, fromChild, ring, bytes, iters));
                    } while (System.nanoTime() - warm < WARMUP_NANOS);
                    for (int r = 0; r < plan.repetitions(); r++) {
                        int step = i, run = r, ringIndex = g;
                        progress.offer(() -> String.format(Locale.ROOT, "ring=%s %d B, run %d of %d (size %d of %d); %s",
                                ring, bytes, run + 1, plan.repetitions(), step + 1, plan.sizes().size(),
                                SizeCosts.left(secondsLeft(plan, costs, ringIndex, step, run))));
                        long ns = timedRun(s, stream, toChild, fromChild, ring, bytes, iters);
                        costs.ran(bytes, iters, ns);
                        oneWay[r] = ns / 1000.0 / iters / 2;
                    }
                    Result res = new Result(ring, bytes, iters, Medians.of(oneWay));
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

    /** @return the seconds left before timed run {@code run} of size {@code step} of ring {@code ring} */
    static double secondsLeft(PingPongPlan plan, SizeCosts costs, int ring, int step, int run) {
        double left = 0;
        for (int g = ring; g < plan.rings().size(); g++) {
            for (int i = g == ring ? step : 0; i < plan.sizes().size(); i++) {
                int bytes = plan.sizes().get(i);
                double runTime = plan.itersFor(bytes) * costs.nanosPerRoundTrip(bytes) / 1e9;
                int runs = g == ring && i == step ? plan.repetitions() - run : plan.repetitions();
                double warm = g == ring && i == step ? 0 : Math.max(WARMUP_NANOS / 1e9, runTime);
                left += warm + runs * runTime;
            }
        }
        return left;
    }

    private static long timedRun(Side s, HostStream stream, PrintStream toChild, BufferedReader fromChild,
                                 String ring, int bytes, int iters) throws IOException {
        s.setSize(bytes);
        toChild.println("RUN " + ring + " " + bytes + " " + iters);
        String ready = GdsyncPingPong.readLine(fromChild, "READY");
        if (!ready.equals("READY")) {
            throw new IOException("expected READY from the responder, got " + ready);
        }
        long ns = ring.equals("cpu") ? PingPongLoops.cpu(s, iters, true) : PingPongLoops.stream(s, stream, iters, true, null);
        String done = GdsyncPingPong.readLine(fromChild, "DONE");
        if (!done.equals("DONE")) {
            throw new IOException("expected DONE from the responder, got " + done);
        }
        return ns;
    }
}
