package dev.gdasync.apps.mpjsuite;

import dev.gdasync.apps.common.MpjStarter;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Runs cases of MPJ Express's own test suite on one device, as jobs of {@link MpjSuiteCases}: one job runs the cases
 * in order until one fails or runs out of time (that job then ends), and the next job starts with the case after it,
 * so a failed or hung case never stops the run. Over gdasync a job is {@code mprun -np N [--netns K] --mpj} (one JVM
 * per rank; over K network-namespace hosts with {@link #netns}); on MPJ's multicore device it is MPJ's starter
 * ({@code starter.jar -np N -dev multicore}, one thread per rank).
 *
 * <p>A case passes when every rank's constructor returned and no rank printed an error line meanwhile (the suite's
 * cases report most failures by printing, as MPI's IBM test cases they come from: {@code ERROR in MPI_...}, or
 * {@code <<<<FAILED>>>>}, see {@link #isErrorLine}).
 */
public final class SuiteRun {
    /** Where the cases run. */
    public enum Device {
        /** MPJ's layers over gdasync's device: {@code mprun --mpj}. */
        GDASYNC("gdasync", "over gdasync"),
        /** MPJ's own multicore device: MPJ's starter, the ranks threads of one JVM. */
        MULTICORE("multicore", "on MPJ's multicore device");

        private final String label;
        private final String words;

        Device(String label, String words) {
            this.label = label;
            this.words = words;
        }

        /** @return its name on the command line ({@code gdasync}, {@code multicore}) */
        public String label() {
            return label;
        }

        /** @return where, in words ("over gdasync") */
        public String words() {
            return words;
        }
    }

    /** How a case ended. */
    public enum Outcome {
        /** Every rank returned, no error line. */
        PASS,
        /** A rank threw, printed an error line, or its job ended under it. */
        FAIL,
        /** It ran longer than the timeout. */
        TIMEOUT
    }

    /**
     * @param name    the case (the class's full name)
     * @param outcome how it ended
     * @param why     the first line of what went wrong; empty for a pass
     * @param millis  the slowest rank's time for a pass, else 0
     */
    public record Verdict(String name, Outcome outcome, String why, long millis) {
    }

    /** How long a job may print nothing beyond the case timeout before it is killed (its own watchdog failed). */
    private static final Duration SILENCE_MARGIN = Duration.ofSeconds(30);
    private static final int TAIL_LINES = 6;
    /** The ranks' main, by name: it uses MPJ's classes, which are not on this JVM's class path under scripts/. */
    static final String RANK_MAIN = "dev.gdasync.apps.mpjsuite.MpjSuiteCases";
    private static final Pattern SUITE_LINE =
            Pattern.compile("SUITE-(BEGIN|PASS|FAIL|TIMEOUT|DONE) ");

    private final Device device;
    private final int ranks;
    private final Duration timeout;
    private final Path classes;
    private final String mpjHome;
    private int hosts;
    private Map<String, String> environment = Map.of();
    private Consumer<Verdict> onVerdict = v -> {
    };
    private Consumer<String> echo = line -> {
    };

    /**
     * @param device  where the cases run
     * @param ranks   the job's ranks
     * @param timeout the longest a case may run
     * @param classes the suite's compiled classes ({@code .tools/mpj-tests/classes})
     * @param mpjHome MPJ_HOME (its {@code lib/starter.jar} and {@code lib/mpj.jar})
     */
    public SuiteRun(Device device, int ranks, Duration timeout, Path classes, String mpjHome) {
        this.device = Objects.requireNonNull(device, "device");
        if (ranks < 2) {
            throw new IllegalArgumentException("the suite needs at least 2 ranks, got " + ranks);
        }
        this.ranks = ranks;
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.classes = Objects.requireNonNull(classes, "classes");
        this.mpjHome = Objects.requireNonNull(mpjHome, "mpjHome");
    }

    /**
     * @param listener told of each verdict as it is known
     * @return this run
     */
    public SuiteRun onVerdict(Consumer<Verdict> listener) {
        this.onVerdict = Objects.requireNonNull(listener, "listener");
        return this;
    }

    /**
     * Spreads the ranks of the gdasync jobs over network namespaces, one "host" each ({@code mprun --netns K}: rank r
     * on host r % K, so ranks on different hosts talk over UCX). Needs root; without it the first job ends before its
     * first case with the launcher's reason, and {@link #run} throws. MPJ's multicore device runs its ranks as threads
     * of one JVM, so it has no hosts to spread over: a multicore run refuses this.
     *
     * @param hosts K, from 1 to the ranks (docs/netns.md)
     * @return this run
     * @throws IllegalArgumentException if K is out of range or the device is MPJ's multicore device
     */
    public SuiteRun netns(int hosts) {
        if (device != Device.GDASYNC) {
            throw new IllegalArgumentException("--netns " + hosts + ": MPJ's multicore device runs every rank as a"
                    + " thread of one JVM, which cannot be spread over hosts");
        }
        if (hosts < 1 || hosts > ranks) {
            throw new IllegalArgumentException("--netns " + hosts + ": K must be from 1 to the ranks (" + ranks + ")"
                    + (hosts > ranks ? ", or hosts would have no rank" : ""));
        }
        this.hosts = hosts;
        return this;
    }

    /** @return where the ranks run, in words: "" on this host, else " on K hosts (network namespaces)" */
    public String whereInWords() {
        return hosts == 0 ? "" : " on " + hosts + " host" + (hosts == 1 ? "" : "s") + " (network namespaces)";
    }

    /**
     * @param variables set in every job's environment, over this JVM's (e.g. {@code UCX_TLS=tcp}: UCX between the
     *                  hosts of {@link #netns} over their veth link, as between machines, instead of the shared memory
     *                  it finds between namespaces of one machine)
     * @return this run
     */
    public SuiteRun environment(Map<String, String> variables) {
        this.environment = Map.copyOf(variables);
        return this;
    }

    /**
     * @param lines where the jobs' own lines go, as they come (default: nowhere)
     * @return this run
     */
    public SuiteRun echo(Consumer<String> lines) {
        this.echo = Objects.requireNonNull(lines, "lines");
        return this;
    }

    /**
     * Runs the cases, a job at a time, until each has a verdict.
     *
     * @param cases the cases' class names in order ({@link TestSuiteCases#forRanks})
     * @return a verdict per case, in order
     * @throws IllegalStateException if a job ended before it began its first case (the device cannot run at all)
     * @throws IOException           if a job cannot be started
     * @throws InterruptedException  if interrupted (the job is then killed)
     */
    public List<Verdict> run(List<String> cases) throws IOException, InterruptedException {
        List<Verdict> verdicts = new ArrayList<>();
        int next = 0;
        while (next < cases.size()) {
            List<String> batch = cases.subList(next, cases.size());
            List<String> args = new ArrayList<>(List.of("--timeout", Long.toString(timeout.toSeconds())));
            args.addAll(batch);
            JobOutput out = runJob(RANK_MAIN, args, timeout.plus(SILENCE_MARGIN));
            int decided = judge(batch, out, verdicts);
            if (decided == 0) {
                throw new IllegalStateException("a job " + device.words() + " ended before its first case ("
                        + out.describe() + ")");
            }
            next += decided;
        }
        return verdicts;
    }

    /** What one job printed and how it ended. */
    private record JobOutput(List<String> lines, int status, boolean silentTooLong, Deque<String> tail) {
        String describe() {
            return (silentTooLong ? "killed after printing nothing for too long" : "exit status " + status)
                    + (tail.isEmpty() ? "" : "; its last lines: " + String.join(" | ", tail));
        }
    }

    /**
     * Runs the suite's own {@code TestSuite}, unmodified, as one job: every case in one process per rank (one JVM
     * under MPJ's multicore device), stopping at the first case that throws.
     *
     * @param limit the longest the job may print nothing
     * @return how it ended: finished (its last line), or where it stopped
     * @throws IOException          if the job cannot be started
     * @throws InterruptedException if interrupted (the job is then killed)
     */
    public Whole runTestSuite(Duration limit) throws IOException, InterruptedException {
        long start = System.nanoTime();
        JobOutput out = runJob("TestSuite", List.of(), limit);
        String finished = out.lines().stream().filter(l -> l.contains("TestSuite finished in")).findFirst().orElse(null);
        List<String> errors = out.lines().stream().filter(SuiteRun::isErrorLine).map(String::strip).toList();
        return new Whole(finished != null && out.status() == 0 && !out.silentTooLong(),
                (System.nanoTime() - start) / 1_000_000_000L, errors, out.describe());
    }

    /**
     * @param finished whether TestSuite printed its last line ("TestSuite finished in N secs") and the job exited
     *                 with 0
     * @param seconds  the job's time
     * @param errors   the error lines it printed ({@link #isErrorLine})
     * @param ending   its exit status and last lines
     */
    public record Whole(boolean finished, long seconds, List<String> errors, String ending) {
    }

    private JobOutput runJob(String main, List<String> args, Duration silenceLimit)
            throws IOException, InterruptedException {
        // In a folder of its own: some cases write files where they run (mpi.perf.Latency its delays).
        Path scratch = Files.createTempDirectory("mpj-suite-job-");
        try {
            return runJobIn(scratch, main, args, silenceLimit);
        } finally {
            deleteTree(scratch);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path f : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }

    private JobOutput runJobIn(Path scratch, String main, List<String> args, Duration silenceLimit)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command(main, args)).redirectErrorStream(true).directory(scratch.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().remove("CLASSPATH");
        pb.environment().put("MPJ_HOME", mpjHome);
        pb.environment().putAll(environment);
        if (device == Device.MULTICORE) {
            pb.environment().putAll(MpjStarter.environment(java(), System.getenv("PATH")));
        }
        Process p = pb.start();
        Thread reaper = new Thread(() -> kill(p));
        Runtime.getRuntime().addShutdownHook(reaper);
        BlockingQueue<String> queue = new LinkedBlockingQueue<>();
        String end = new String("end of output");
        Thread.ofPlatform().daemon().name("mpj-suite-output").start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    queue.add(line);
                }
            } catch (IOException e) {
                // The job was killed: what it printed until then is in the queue.
            } finally {
                queue.add(end);
            }
        });
        List<String> lines = new ArrayList<>();
        Deque<String> tail = new ArrayDeque<>();
        boolean silent = false;
        long silenceNanos = silenceLimit.toNanos();
        try {
            while (true) {
                String line = queue.poll(silenceNanos, TimeUnit.NANOSECONDS);
                if (line == null) {
                    silent = true;
                    kill(p);
                    break;
                }
                if (line == end) {
                    break;
                }
                String own = withoutRankPrefix(line);
                lines.add(own);
                if (!own.contains("SUITE-")) {
                    tail.addLast(line);
                    if (tail.size() > TAIL_LINES) {
                        tail.removeFirst();
                    }
                }
                echo.accept(line);
            }
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                kill(p);
            }
            p.waitFor();
        } finally {
            kill(p);
            try {
                Runtime.getRuntime().removeShutdownHook(reaper);
            } catch (IllegalStateException e) {
                // Shutting down already: the hook kills it.
            }
        }
        return new JobOutput(lines, p.exitValue(), silent, tail);
    }

    private List<String> command(String main, List<String> args) {
        String own = System.getProperty("java.class.path");
        List<String> cmd = new ArrayList<>();
        cmd.add(java());
        if (device == Device.GDASYNC) {
            // The launcher and the ranks as the project's tests start them: a serial GC and C1, light on 2 CPUs.
            cmd.addAll(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", own,
                    "dev.gdasync.libmp.launch.MpRun", "--jvm-opt", "-XX:+UseSerialGC", "--jvm-opt",
                    "-XX:TieredStopAtLevel=1", "-np", Integer.toString(ranks), "--grace", "2"));
            if (hosts > 0) {
                cmd.addAll(List.of("--netns", Integer.toString(hosts)));
            }
            cmd.addAll(List.of("--mpj", "--classpath", classes.toAbsolutePath().toString(), main));
        } else {
            cmd.addAll(List.of("-jar", Path.of(mpjHome, "lib", "starter.jar").toString(), "-np", Integer.toString(ranks),
                    "-dev", "multicore", "-cp", classes.toAbsolutePath() + File.pathSeparator + own, main));
        }
        cmd.addAll(args);
        return cmd;
    }

    /** The verdicts of the cases a job ran; returns how many were decided (the job's last is the one that ended it). */
    private int judge(List<String> batch, JobOutput out, List<Verdict> verdicts) {
        CaseLines[] state = new CaseLines[batch.size()];
        for (int i = 0; i < state.length; i++) {
            state[i] = new CaseLines();
        }
        int current = -1;
        for (String printed : out.lines()) {
            // A case's print() without a line end puts the rank's next SUITE- line at the end of its own.
            Matcher m = SUITE_LINE.matcher(printed);
            String line = printed;
            if (m.find() && m.start() > 0) {
                String before = printed.substring(0, m.start());
                if (current >= 0 && state[current].errorLine == null && isErrorLine(before)) {
                    state[current].errorLine = before.strip();
                }
                line = printed.substring(m.start());
            }
            String[] w = line.split(" ", 4);
            if (w.length >= 3 && w[0].startsWith("SUITE-") && !w[0].equals("SUITE-DONE")) {
                String name = w[2].endsWith(":") ? w[2].substring(0, w[2].length() - 1) : w[2];
                int i = batch.indexOf(name);
                if (i < 0) {
                    continue;
                }
                CaseLines s = state[i];
                switch (w[0]) {
                    case "SUITE-BEGIN" -> {
                        s.begun++;
                        current = Math.max(current, i);
                    }
                    case "SUITE-PASS" -> {
                        s.passed++;
                        s.millis = Math.max(s.millis, w.length > 3 ? Long.parseLong(w[3].strip()) : 0);
                    }
                    case "SUITE-FAIL" -> {
                        if (s.failure == null) {
                            s.failure = "rank " + w[1] + ": " + (w.length > 3 ? w[3] : "");
                        }
                    }
                    case "SUITE-TIMEOUT" -> s.timedOut = true;
                    default -> {
                    }
                }
            } else if (current >= 0 && state[current].errorLine == null && isErrorLine(line)) {
                state[current].errorLine = line.strip();
            }
        }
        for (int i = 0; i < batch.size(); i++) {
            CaseLines s = state[i];
            String name = batch.get(i);
            if (s.passed == ranks && s.failure == null && !s.timedOut) {
                add(verdicts, s.errorLine == null ? new Verdict(name, Outcome.PASS, "", s.millis)
                        : new Verdict(name, Outcome.FAIL, "printed: " + s.errorLine, 0));
                continue;
            }
            if (s.begun == 0 && i == 0) {
                return 0;
            }
            if (s.timedOut || out.silentTooLong()) {
                add(verdicts, new Verdict(name, Outcome.TIMEOUT, "still running after " + timeout.toSeconds() + " s", 0));
            } else if (s.failure != null) {
                add(verdicts, new Verdict(name, Outcome.FAIL, s.failure, 0));
            } else if (s.errorLine != null) {
                add(verdicts, new Verdict(name, Outcome.FAIL, "printed: " + s.errorLine + "; then the job ended ("
                        + out.describe() + ")", 0));
            } else {
                add(verdicts, new Verdict(name, Outcome.FAIL, (s.begun == 0 ? "the job ended before it began"
                        : s.passed + " of " + ranks + " ranks finished it before the job ended") + " (" + out.describe()
                        + ")", 0));
            }
            return i + 1;
        }
        return batch.size();
    }

    private void add(List<Verdict> verdicts, Verdict v) {
        verdicts.add(v);
        onVerdict.accept(v);
    }

    /** What a job printed about one case. */
    private static final class CaseLines {
        int begun;
        int passed;
        long millis;
        boolean timedOut;
        String failure;
        String errorLine;
    }

    /**
     * A line of a case that says it failed. The suite's cases (MPI's IBM test cases, mpiJava's, MPJ's own) report by
     * printing: {@code ERROR in MPI_Probe(1): ...}, {@code <<<<FAILED>>>>}, {@code test #1 failed}; a stack trace
     * printed by a case that caught an exception itself starts with the exception's class. Not one: the timing
     * remark of {@code mpi.pt2pt.ssend}, {@code ERROR (Not important): MPI_Ssend did not synchronize}, which its
     * own comment says "may falsely signal an error" (it compares clocks across ranks with a 0.1 s bound).
     *
     * @param line a line the job printed (its rank prefix removed)
     * @return whether it reports a failure
     */
    static boolean isErrorLine(String line) {
        if (line.contains("ERROR (Not important)")) {
            return false;
        }
        return line.contains("ERROR") || line.contains("FAILED") || line.contains(" failed")
                || line.matches("^\\s*(Exception in thread|[a-z][\\w.]*\\.\\w*(Exception|Error)\\b).*");
    }

    /** @return the line without the launcher's {@code [rank] } prefix */
    static String withoutRankPrefix(String line) {
        if (line.startsWith("[")) {
            int close = line.indexOf("] ");
            if (close > 1 && line.substring(1, close).chars().allMatch(Character::isDigit)) {
                return line.substring(close + 2);
            }
        }
        return line;
    }

    private static String java() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    private static void kill(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }

    /** @return the summary of one device's verdicts: "N of M cases pass over gdasync" */
    static String passCount(List<Verdict> verdicts) {
        return verdicts.stream().filter(v -> v.outcome() == Outcome.PASS).count() + " of " + verdicts.size();
    }

    /** @return the verdicts by case name */
    static Map<String, Verdict> byName(List<Verdict> verdicts) {
        Map<String, Verdict> m = new LinkedHashMap<>();
        for (Verdict v : verdicts) {
            m.put(v.name(), v);
        }
        return m;
    }
}
