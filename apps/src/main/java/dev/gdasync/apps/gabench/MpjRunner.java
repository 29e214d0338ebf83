package dev.gdasync.apps.gabench;

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
import java.util.concurrent.TimeUnit;

/**
 * Runs {@link MpjGaBench} under MPJ Express's starter with the multicore device as a child JVM of rank 0 ({@code java
 * -jar $MPJ_HOME/lib/starter.jar -np 2 -dev multicore -cp CLASSPATH MpjGaBench PLAN...}), as the pingpong's mpj mode
 * does, and collects its rows. The gdasync ranks stay idle meanwhile, so the MPJ ranks have the CPUs.
 */
final class MpjRunner {
    private static final long HEARTBEAT_MILLIS = 500;

    private MpjRunner() {
    }

    /**
     * @param mpjHome the value of MPJ_HOME, or null
     * @return why MPJ Express cannot run here, or null if it can
     */
    static String missing(String mpjHome) {
        if (mpjHome == null || mpjHome.isBlank()) {
            return "MPJ_HOME is not set (scripts/mprun installs MPJ Express and sets it)";
        }
        if (!Files.isRegularFile(Path.of(mpjHome, "lib", "starter.jar"))) {
            return "MPJ_HOME=" + mpjHome + " has no lib/starter.jar";
        }
        return null;
    }

    /**
     * Runs the baseline; calls {@code heartbeat} every half second while it runs.
     *
     * @return the rows, two per layout and size
     * @throws IllegalStateException if the MPJ run failed or reported too few rows
     */
    static List<Row> run(String mpjHome, Plan plan, Runnable heartbeat) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", Path.of(mpjHome, "lib", "starter.jar").toString(), "-np",
                "2", "-dev", "multicore", "-cp", System.getProperty("java.class.path"), MpjGaBench.class.getName()));
        cmd.addAll(plan.args());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        // The starter runs the ranks' JVM as plain "java" from PATH: make that this JVM's java.
        Path bin = Path.of(java).getParent();
        if (bin != null) {
            pb.environment().put("PATH", bin + File.pathSeparator + pb.environment().getOrDefault("PATH", ""));
            if (bin.getParent() != null) {
                pb.environment().put("JAVA_HOME", bin.getParent().toString());
            }
        }
        Process child = pb.start();
        List<Row> rows = Collections.synchronizedList(new ArrayList<>());
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        Thread out = Thread.ofPlatform().daemon().start(() -> pump(child, false, System.out, rows, errors));
        Thread err = Thread.ofPlatform().daemon().start(() -> pump(child, true, System.err, rows, errors));
        try {
            while (!child.waitFor(HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS)) {
                heartbeat.run();
            }
        } finally {
            if (child.isAlive()) {
                child.descendants().forEach(ProcessHandle::destroyForcibly);
                child.destroyForcibly();
            }
        }
        out.join(5000);
        err.join(5000);
        if (!errors.isEmpty()) {
            throw new IllegalStateException("the MPJ Express baseline failed: " + String.join("; ", errors));
        }
        if (child.exitValue() != 0) {
            throw new IllegalStateException("the MPJ Express baseline exited with status " + child.exitValue());
        }
        if (rows.size() != 4 * plan.sizes().size()) {
            throw new IllegalStateException("the MPJ Express baseline reported " + rows.size() + " of "
                    + 4 * plan.sizes().size() + " rows");
        }
        return List.copyOf(rows);
    }

    private static void pump(Process child, boolean stderr, PrintStream to, List<Row> rows, List<String> errors) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                stderr ? child.getErrorStream() : child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith(MpjGaBench.RESULT + " ")) {
                    rows.add(MpjGaBench.parse(line));
                } else if (line.startsWith(MpjGaBench.ERROR + " ")) {
                    errors.add(line.substring(MpjGaBench.ERROR.length() + 1));
                } else if (!line.isBlank()) {
                    to.println("mpj: " + line);
                }
            }
        } catch (IOException | RuntimeException e) {
            errors.add("reading the MPJ output failed: " + e);
        }
    }
}
