package dev.gdasync.apps.bench;

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
 * An MPJ Express baseline run as a child job of one gdasync rank: MPJ's starter with the multicore device
 * ({@code java -jar $MPJ_HOME/lib/starter.jar -np N -dev multicore -cp CLASSPATH MAIN ARGS...}), this JVM's java on
 * its PATH. The child's lines that start with the result tag are collected; one with the error tag fails the run;
 * the rest are echoed with a {@code mpj: } prefix. The gdasync ranks stay idle meanwhile (the caller's heartbeat keeps
 * them waiting), so the MPJ ranks have the CPUs.
 */
public final class MpjChildJob {
    private static final long HEARTBEAT_MILLIS = 500;

    private MpjChildJob() {
    }

    /**
     * @param mpjHome the value of MPJ_HOME, or null
     * @return why MPJ Express cannot run here, or null if it can
     */
    public static String missing(String mpjHome) {
        if (mpjHome == null || mpjHome.isBlank()) {
            return "MPJ_HOME is not set (scripts/mprun installs MPJ Express and sets it)";
        }
        if (!Files.isRegularFile(Path.of(mpjHome, "lib", "starter.jar"))) {
            return "MPJ_HOME=" + mpjHome + " has no lib/starter.jar";
        }
        return null;
    }

    /**
     * Runs the child job to its end; calls {@code heartbeat} every half second meanwhile.
     *
     * @param mpjHome   MPJ_HOME
     * @param np        MPJ ranks
     * @param main      the MPJ program's main class
     * @param args      its arguments
     * @param resultTag the prefix of result lines
     * @param errorTag  the prefix of error lines
     * @param heartbeat called while the child runs
     * @return the result lines without their tag, in order
     * @throws IllegalStateException if the child reported an error or exited with a failure
     * @throws IOException           if it cannot be started
     * @throws InterruptedException  if interrupted while waiting
     */
    public static List<String> run(String mpjHome, int np, String main, List<String> args, String resultTag,
                                   String errorTag, Runnable heartbeat) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", Path.of(mpjHome, "lib", "starter.jar").toString(), "-np",
                Integer.toString(np), "-dev", "multicore", "-cp", System.getProperty("java.class.path"), main));
        cmd.addAll(args);
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
        List<String> results = Collections.synchronizedList(new ArrayList<>());
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        Thread out = Thread.ofPlatform().daemon().start(() -> pump(child, false, System.out, resultTag, errorTag,
                results, errors));
        Thread err = Thread.ofPlatform().daemon().start(() -> pump(child, true, System.err, resultTag, errorTag,
                results, errors));
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
        return List.copyOf(results);
    }

    private static void pump(Process child, boolean stderr, PrintStream to, String resultTag, String errorTag,
                             List<String> results, List<String> errors) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                stderr ? child.getErrorStream() : child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith(resultTag + " ")) {
                    results.add(line.substring(resultTag.length() + 1));
                } else if (line.startsWith(errorTag + " ")) {
                    errors.add(line.substring(errorTag.length() + 1));
                } else if (!line.isBlank()) {
                    to.println("mpj: " + line);
                }
            }
        } catch (IOException | RuntimeException e) {
            errors.add("reading the MPJ output failed: " + e);
        }
    }
}
