package dev.gdasync.apps.pingpong;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code mpj}: rank 0 runs {@link MpjPingPong} under MPJ Express's starter with the multicore device
 * ({@code java -jar $MPJ_HOME/lib/starter.jar -np 2 -dev multicore -cp CLASSPATH MpjPingPong ...}) as a
 * child process and reads its results; rank 1 keeps pace at a heartbeat of collectives with rank 0 (a
 * plain barrier would time out in the bootstrap during a long MPJ run). Both gdasync ranks stay idle
 * meanwhile, so the MPJ ranks have the CPUs.
 */
final class MpjMode {
    /** The variable naming MPJ Express's home, set by {@code scripts/mprun}. */
    static final String MPJ_HOME = "MPJ_HOME";
    private static final long HEARTBEAT_MILLIS = 500;

    private MpjMode() {
    }

    /**
     * Checks that MPJ Express can be started: MPJ_HOME is set and holds lib/starter.jar.
     *
     * @param mpjHome the value of MPJ_HOME, or null
     * @return the starter jar
     * @throws IllegalStateException with what to do
     */
    static Path starter(String mpjHome) {
        if (mpjHome == null || mpjHome.isBlank()) {
            throw new IllegalStateException("--mode mpj needs MPJ Express: MPJ_HOME is not set. Run the ping-pong with"
                    + " scripts/mprun, which installs MPJ Express (Debian's libmpj-java) and sets MPJ_HOME, or set"
                    + " MPJ_HOME to an MPJ Express installation");
        }
        Path jar = Path.of(mpjHome, "lib", "starter.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("--mode mpj: MPJ_HOME=" + mpjHome + " has no lib/starter.jar; scripts/mprun"
                    + " sets up a working MPJ_HOME (.tools/mpj-home), or point MPJ_HOME at an MPJ Express installation");
        }
        return jar;
    }

    /**
     * Runs the mode on both ranks.
     *
     * @param pair    the ranks (for the heartbeat)
     * @param options the measurement
     * @param onRow   told of every row as it arrives (rank 0)
     * @return the rows (rank 0; rank 1 gets an empty list)
     */
    static List<Result> run(Pair pair, PingPongOptions options, Consumer<Result> onRow) throws IOException, InterruptedException {
        return run(pair, MpjPingPong.class.getName(), options.measurementArgs(), options.sizes().size(), MpjPingPong.RESULT,
                MpjMode::parse, onRow);
    }

    /**
     * Runs an MPJ Express program on both ranks: rank 0 starts it and reads its result lines.
     *
     * @param pair       the ranks (for the heartbeat)
     * @param mainClass  the MPJ program ({@link MpjPingPong}, {@link MpjMessageRate})
     * @param args       its arguments
     * @param rowsWanted how many result lines it must print
     * @param resultTag  the first word of its result lines
     * @param parse      reads a result line
     * @param onRow      told of every row as it arrives (rank 0)
     * @param <R>        the rows' type
     * @return the rows (rank 0; rank 1 gets an empty list)
     */
    static <R> List<R> run(Pair pair, String mainClass, List<String> args, int rowsWanted, String resultTag,
                           java.util.function.Function<String, R> parse, Consumer<R> onRow)
            throws IOException, InterruptedException {
        if (!pair.initiator) {
            while (pair.decide(false)) {
                // rank 0 says the MPJ run goes on
            }
            return List.of();
        }
        Process child;
        try {
            child = start(mainClass, args);
        } catch (IOException | RuntimeException e) {
            pair.decide(false);
            throw e;
        }
        List<R> rows = Collections.synchronizedList(new ArrayList<>());
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        Thread out = Thread.ofPlatform().daemon().name("mpj-stdout")
                .start(() -> pump(child, false, System.out, resultTag, parse, rows, errors, onRow));
        Thread err = Thread.ofPlatform().daemon().name("mpj-stderr")
                .start(() -> pump(child, true, System.err, resultTag, parse, rows, errors, onRow));
        try {
            while (!child.waitFor(HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS)) {
                pair.decide(true);
            }
        } finally {
            if (child.isAlive()) {
                child.descendants().forEach(ProcessHandle::destroyForcibly);
                child.destroyForcibly();
            }
            pair.decide(false);
        }
        out.join(5000);
        err.join(5000);
        int status = child.exitValue();
        if (!errors.isEmpty()) {
            throw new IllegalStateException("the MPJ Express " + what(mainClass) + " failed: " + String.join("; ", errors));
        }
        if (status != 0) {
            throw new IllegalStateException("the MPJ Express " + what(mainClass) + " exited with status " + status + " (its output is above)");
        }
        if (rows.size() != rowsWanted) {
            throw new IllegalStateException("the MPJ Express " + what(mainClass) + " reported " + rows.size() + " of "
                    + rowsWanted + " sizes (its output is above)");
        }
        return List.copyOf(rows);
    }

    /** @return what an MPJ program is, for messages: "ping-pong" or "message rate" */
    private static String what(String mainClass) {
        return mainClass.equals(MpjPingPong.class.getName()) ? "ping-pong" : "message rate";
    }

    private static Process start(String mainClass, List<String> args) throws IOException {
        Path starter = starter(System.getenv(MPJ_HOME));
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", starter.toString(), "-np", "2", "-dev", "multicore",
                "-cp", System.getProperty("java.class.path"), mainClass));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        // The starter runs the ranks' JVM as plain "java" from PATH: make that this JVM's java, which can
        // load the classes this build compiled.
        Path bin = Path.of(java).getParent();
        if (bin != null) {
            String path = pb.environment().getOrDefault("PATH", "");
            pb.environment().put("PATH", bin + (path.isEmpty() ? "" : File.pathSeparator + path));
            if (bin.getParent() != null) {
                pb.environment().put("JAVA_HOME", bin.getParent().toString());
            }
        }
        return pb.start();
    }

    /** Copies the child's output, prefixed, and picks out result and error lines. */
    private static <R> void pump(Process child, boolean stderr, PrintStream to, String resultTag,
                                 java.util.function.Function<String, R> parse, List<R> rows, List<String> errors,
                                 Consumer<R> onRow) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                stderr ? child.getErrorStream() : child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith(resultTag + " ")) {
                    R row = parse.apply(line);
                    rows.add(row);
                    onRow.accept(row);
                } else if (line.startsWith(MpjPingPong.ERROR + " ")) {
                    errors.add(line.substring(MpjPingPong.ERROR.length() + 1));
                } else if (!line.isBlank()) {
                    to.println("mpj: " + line);
                }
            }
        } catch (IOException | RuntimeException e) {
            errors.add("reading the MPJ output failed: " + e);
        }
    }

    /**
     * @param line a result line of {@link #format}, or of its older four-field form (without the distribution)
     * @return the row it carries
     */
    static Result parse(String line) {
        String[] f = line.split(" ");
        if (f.length != 4 && f.length != 14) {
            throw new IllegalArgumentException("malformed MPJ result line: " + line);
        }
        Result r = new Result("mpj", Integer.parseInt(f[1]), Integer.parseInt(f[2]), Double.parseDouble(f[3]));
        if (f.length == 4) {
            return r;
        }
        Latencies l = new Latencies(Long.parseLong(f[4]), Double.parseDouble(f[5]), Double.parseDouble(f[6]),
                Double.parseDouble(f[7]), Double.parseDouble(f[8]), Double.parseDouble(f[9]));
        RunSpread s = new RunSpread(Integer.parseInt(f[10]), Double.parseDouble(f[11]), Double.parseDouble(f[12]),
                Double.parseDouble(f[13]));
        return new Result(r.mode(), r.bytes(), r.iters(), r.oneWayMicros(), l, s);
    }

    /**
     * @param r a row
     * @return {@code MPJ-PINGPONG-RESULT bytes iters oneway_us count min p50 p99 p99.9 max runs run_min run_max spread_pct}
     */
    static String format(Result r) {
        Latencies l = r.latencies();
        RunSpread s = r.runs();
        return String.format(Locale.ROOT, "%s %d %d %.6f %d %.6f %.6f %.6f %.6f %.6f %d %.6f %.6f %.4f", MpjPingPong.RESULT,
                r.bytes(), r.iters(), r.oneWayMicros(), l.count(), l.min(), l.p50(), l.p99(), l.p999(), l.max(), s.runs(),
                s.min(), s.max(), s.percent());
    }
}
