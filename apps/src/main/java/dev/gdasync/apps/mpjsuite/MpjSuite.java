package dev.gdasync.apps.mpjsuite;

import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.cli.ProjectVersion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * {@code scripts/mpj-suite}: MPJ Express's own test suite (the cases its {@code TestSuite} runs, compiled unmodified by
 * {@code ensure_mpj_tests}) over gdasync, and the same cases on MPJ's own multicore device for comparison. One line
 * per case and device, then the summary ("N of M cases pass over gdasync; K of M on MPJ's multicore device") and the
 * cases whose outcome differs.
 */
@Command(name = "scripts/mpj-suite", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        usageHelpAutoWidth = false,
        description = "Runs MPJ Express's own test suite (its TestSuite's cases, unmodified) on N ranks over gdasync and"
                + " on MPJ's multicore device, a job at a time: a case that fails or hangs ends its job, and the next job"
                + " starts after it. Prints one line per case and device, then the summary.")
public final class MpjSuite {
    /** The most hosts {@code mprun --netns} places ranks on (its address plan, docs/netns.md). */
    private static final int MAX_HOSTS = 64;

    @Option(names = "-np", paramLabel = "N", description = "ranks (default ${DEFAULT-VALUE})")
    int ranks = 2;

    @Option(names = "--device", paramLabel = "DEVICE", split = ",",
            description = "gdasync, multicore, or both (default: gdasync,multicore)")
    List<String> devices = new ArrayList<>(List.of("gdasync", "multicore"));

    @Option(names = "--timeout", paramLabel = "SECONDS", description = "the longest a case may run (default ${DEFAULT-VALUE})")
    int timeoutSeconds = 60;

    @Option(names = "--netns", paramLabel = "K",
            description = "spread the gdasync jobs' ranks over K network namespaces, one \"host\" each (mprun --netns"
                    + " K: rank r on host r %% K, ranks on different hosts talk over UCX; 1 <= K <= N, K <= 64; needs"
                    + " root). MPJ's multicore device runs its ranks as threads of one JVM and ignores it")
    Integer netns;

    @Option(names = "--only", paramLabel = "REGEX", description = "run only the cases whose class name this finds")
    String only;

    @Option(names = "--classes", paramLabel = "DIR",
            description = "the suite's compiled classes (default: $GDASYNC_MPJ_TESTS/classes, set by ensure_mpj_tests)")
    Path classes;

    @Option(names = "--testsuite", description = "run the suite's TestSuite itself, unmodified, as one job per device"
            + " (it stops at the first case that throws), instead of a case at a time")
    boolean whole;

    @Option(names = "--beyond", description = "run the cases of the suite's folders TestSuite does not run (threads,"
            + " signals, perf, the Java Grande benchmarks of size A, the mpiJava micro-benchmarks) instead of TestSuite's")
    boolean beyond;

    @Option(names = "--verbose", description = "echo the jobs' own lines")
    boolean verbose;

    private MpjSuite() {
    }

    /**
     * @param args the options
     * @throws Exception if a job cannot be started
     */
    public static void main(String[] args) throws Exception {
        MpjSuite s = new MpjSuite();
        OptionalInt stop = CommandLines.parse(CommandLines.of(s), args, System.out, System.err, true);
        if (stop.isPresent()) {
            System.exit(stop.getAsInt());
        }
        System.exit(s.run());
    }

    private int run() throws Exception {
        String mpjHome = System.getenv("MPJ_HOME");
        if (mpjHome == null || !Files.isRegularFile(Path.of(mpjHome, "lib", "starter.jar"))) {
            System.err.println("mpj-suite: MPJ_HOME (" + mpjHome + ") has no lib/starter.jar: run scripts/mpj-suite, which"
                    + " sets it up");
            return 1;
        }
        if (classes == null) {
            String tests = System.getenv("GDASYNC_MPJ_TESTS");
            classes = tests == null ? null : Path.of(tests, "classes");
        }
        if (classes == null || !Files.isRegularFile(classes.resolve("TestSuite.class"))) {
            System.err.println("mpj-suite: no compiled suite (" + classes + "/TestSuite.class): run scripts/mpj-suite,"
                    + " whose ensure_mpj_tests fetches and compiles it");
            return 1;
        }
        List<SuiteRun.Device> where = new ArrayList<>();
        for (String d : devices) {
            switch (d.strip()) {
                case "gdasync" -> where.add(SuiteRun.Device.GDASYNC);
                case "multicore" -> where.add(SuiteRun.Device.MULTICORE);
                case "both" -> where.addAll(List.of(SuiteRun.Device.GDASYNC, SuiteRun.Device.MULTICORE));
                default -> {
                    System.err.println("mpj-suite: --device " + d + ": gdasync, multicore or both");
                    return CommandLines.USAGE_ERROR;
                }
            }
        }
        if (netns != null && (netns < 1 || netns > ranks || netns > MAX_HOSTS)) {
            System.err.println("mpj-suite: --netns " + netns + ": K must be from 1 to -np N (" + ranks
                    + ") and at most " + MAX_HOSTS
                    + (netns > ranks ? ": more hosts than ranks would leave a host without a rank" : "")
                    + " (docs/netns.md)");
            return CommandLines.USAGE_ERROR;
        }
        if (whole && beyond) {
            System.err.println("mpj-suite: --testsuite runs TestSuite itself, --beyond the cases TestSuite does not run:"
                    + " one or the other");
            return CommandLines.USAGE_ERROR;
        }
        try {
            return whole ? runWhole(where, mpjHome) : runCases(where, mpjHome);
        } catch (IllegalArgumentException e) {
            System.err.println("mpj-suite: " + e.getMessage());
            return CommandLines.USAGE_ERROR;
        } catch (IllegalStateException e) {
            // A job that ended before its first case: the launcher's own reason (not root, no ip command) is in it.
            System.err.println("mpj-suite: " + e.getMessage());
            return 1;
        }
    }

    /** A run on one device, spread over the hosts of --netns where it applies (the gdasync device only). */
    private SuiteRun suiteRun(SuiteRun.Device d, String mpjHome) {
        SuiteRun run = new SuiteRun(d, ranks, Duration.ofSeconds(timeoutSeconds), classes, mpjHome);
        if (netns != null && d == SuiteRun.Device.GDASYNC) {
            run.netns(netns);
        }
        if (verbose) {
            run.echo(l -> System.out.println("   | " + l));
        }
        return run;
    }

    /** The cases a job at a time on each device, then the summary and the cases whose outcome differs. */
    private int runCases(List<SuiteRun.Device> where, String mpjHome) throws Exception {
        List<String> cases = new ArrayList<>(beyond ? TestSuiteCases.beyond(ranks) : TestSuiteCases.forRanks(ranks));
        String which = beyond ? "the folders MPJ Express's TestSuite does not run" : "MPJ Express's TestSuite";
        if (only != null) {
            Pattern p = Pattern.compile(only);
            cases.removeIf(c -> !p.matcher(c).find());
        }
        List<List<SuiteRun.Verdict>> results = new ArrayList<>();
        List<String> placed = new ArrayList<>();
        for (SuiteRun.Device d : where) {
            SuiteRun run = suiteRun(d, mpjHome).onVerdict(v -> System.out.println(line(d, v)));
            System.out.println("== " + cases.size() + " cases of " + which + " on " + ranks + " ranks "
                    + d.words() + run.whereInWords() + (netns != null && d == SuiteRun.Device.MULTICORE
                    ? " (one JVM on this host: --netns does not apply)" : ""));
            long start = System.nanoTime();
            List<SuiteRun.Verdict> v = run.run(cases);
            results.add(v);
            placed.add(d.words() + run.whereInWords());
            System.out.printf("== %s cases pass %s (%d s)%n", SuiteRun.passCount(v), placed.getLast(),
                    (System.nanoTime() - start) / 1_000_000_000L);
        }
        System.out.println();
        if (where.size() == 2) {
            Map<String, SuiteRun.Verdict> second = SuiteRun.byName(results.get(1));
            List<String> differ = new ArrayList<>();
            for (SuiteRun.Verdict a : results.get(0)) {
                SuiteRun.Verdict b = second.get(a.name());
                if (b != null && a.outcome() != b.outcome()) {
                    differ.add(String.format("  %-45s %-8s %s | %-8s %s", a.name(), a.outcome(), a.why(), b.outcome(),
                            b.why()));
                }
            }
            if (!differ.isEmpty()) {
                System.out.println("Cases whose outcome differs (" + where.get(0).label() + " | " + where.get(1).label()
                        + "):");
                differ.forEach(System.out::println);
            }
        }
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < where.size(); i++) {
            parts.add(SuiteRun.passCount(results.get(i)) + (i == 0 ? " cases pass " : " ") + placed.get(i));
        }
        System.out.println(String.join("; ", parts) + " (" + ranks + " ranks)");
        return 0;
    }

    /** TestSuite itself, one job per device: did it finish, in how long, and which error lines it printed. */
    private int runWhole(List<SuiteRun.Device> where, String mpjHome) throws Exception {
        for (SuiteRun.Device d : where) {
            SuiteRun run = suiteRun(d, mpjHome);
            SuiteRun.Whole w = run.runTestSuite(Duration.ofSeconds(timeoutSeconds));
            System.out.printf("TestSuite on %d ranks %s%s: %s in %d s; %d error lines%s%n", ranks, d.words(),
                    run.whereInWords(), w.finished() ? "finished" : "did not finish (" + w.ending() + ")", w.seconds(),
                    w.errors().size(), w.errors().isEmpty() ? "" : ": " + String.join(" | ", w.errors()));
        }
        return 0;
    }

    private static String line(SuiteRun.Device d, SuiteRun.Verdict v) {
        String detail = v.outcome() == SuiteRun.Outcome.PASS ? v.millis() + " ms" : v.why();
        return String.format("%-9s %-45s %-7s %s", d.label(), v.name(), v.outcome(), detail);
    }
}
