package dev.gdasync.apps.hpgmg;

import dev.gdasync.libmp.bootstrap.EnvBootstrap;

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
 * {@code mpj}: rank 0 runs {@link MpjHpgmg} with as many MPJ Express ranks as the job has, under MPJ's
 * starter with the multicore device ({@code java -jar $MPJ_HOME/lib/starter.jar -np N -dev multicore}), as a
 * child process, as the pingpong app's mpj mode does; the other gdasync ranks keep pace with a heartbeat
 * of bootstrap collectives and stay idle, so the MPJ ranks have the CPUs.
 */
final class MpjRunner {
    private static final long HEARTBEAT_MILLIS = 500;

    private MpjRunner() {
    }

    static List<String> run(EnvBootstrap boot, HpgmgCommand o, ProblemSize size, PrintStream out) throws Exception {
        if (boot.rank() != 0) {
            while (boot.allGather(new byte[]{0}).getFirst()[0] == 1) {
                // rank 0 says the MPJ run goes on
            }
            return List.of();
        }
        Process child;
        try {
            child = start(o, boot.size());
        } catch (IOException | RuntimeException e) {
            boot.allGather(new byte[]{0});
            throw e;
        }
        List<String> rows = Collections.synchronizedList(new ArrayList<>());
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        Thread t1 = Thread.ofPlatform().daemon().start(() -> pump(child, false, out, rows, errors));
        Thread t2 = Thread.ofPlatform().daemon().start(() -> pump(child, true, out, rows, errors));
        try {
            while (!child.waitFor(HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS)) {
                boot.allGather(new byte[]{1});
            }
        } finally {
            if (child.isAlive()) {
                child.descendants().forEach(ProcessHandle::destroyForcibly);
                child.destroyForcibly();
            }
            boot.allGather(new byte[]{0});
        }
        t1.join(5000);
        t2.join(5000);
        if (!errors.isEmpty()) {
            throw new IllegalStateException("the MPJ Express run failed: " + String.join("; ", errors));
        }
        if (child.exitValue() != 0 || rows.isEmpty()) {
            throw new IllegalStateException("the MPJ Express run exited with status " + child.exitValue() + " (its output is above)");
        }
        return List.copyOf(rows);
    }

    private static Process start(HpgmgCommand o, int ranks) throws IOException {
        String home = System.getenv("MPJ_HOME");
        if (home == null || home.isBlank() || !Files.isRegularFile(Path.of(home, "lib", "starter.jar"))) {
            throw new IllegalStateException("--mode mpj needs MPJ Express: MPJ_HOME is not set or has no lib/starter.jar;"
                    + " scripts/mprun installs it and sets MPJ_HOME");
        }
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", Path.of(home, "lib", "starter.jar").toString(),
                "-np", Integer.toString(ranks), "-dev", "multicore", "-cp", System.getProperty("java.class.path"),
                MpjHpgmg.class.getName(), Integer.toString(o.log2Box), Integer.toString(o.boxesPerRank),
                "--solves", Integer.toString(o.solves), "--warmup-seconds", Double.toString(o.warmupSeconds),
                "--levels", Integer.toString(o.levels)));
        if (o.quiet) {
            cmd.add("--quiet");
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
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

    private static void pump(Process child, boolean stderr, PrintStream to, List<String> rows, List<String> errors) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                stderr ? child.getErrorStream() : child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith(MpjHpgmg.RESULT + " ")) {
                    rows.add(line.substring(MpjHpgmg.RESULT.length() + 1));
                } else if (line.startsWith(MpjHpgmg.ERROR + " ")) {
                    errors.add(line.substring(MpjHpgmg.ERROR.length() + 1));
                } else if (to != null && !line.isBlank() && !line.startsWith("MPJ Express")) {
                    to.println("[mpj] " + line);
                }
            }
        } catch (IOException | RuntimeException e) {
            errors.add("reading the MPJ output failed: " + e);
        }
    }
}
