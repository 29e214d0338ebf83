package dev.gdasync.apps.comd;

import dev.gdasync.libmp.bootstrap.Bootstrap;

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
 * {@code mpj}: rank 0 runs {@link ComdMpj} under MPJ Express's starter with the multicore device
 * ({@code java -jar $MPJ_HOME/lib/starter.jar -np N -dev multicore -cp CLASSPATH ComdMpj ...}: N rank threads in one
 * JVM) as a child process, relays its output and reads its result; the other ranks keep pace with rank 0 at a heartbeat
 * of all-gathers (a plain barrier could time out during a long run) and stay idle, so the MPJ ranks have the CPUs.
 */
final class MpjRunner {
    /** The variable naming MPJ Express's home, set by {@code scripts/mprun}. */
    static final String MPJ_HOME = "MPJ_HOME";
    private static final long HEARTBEAT_MILLIS = 500;

    private MpjRunner() {
    }

    /**
     * @param mpjHome the value of MPJ_HOME, or null
     * @return the starter jar
     * @throws IllegalStateException with what to do
     */
    static Path starter(String mpjHome) {
        if (mpjHome == null || mpjHome.isBlank()) {
            throw new IllegalStateException("--mode mpj needs MPJ Express: MPJ_HOME is not set. Run comd with scripts/mprun,"
                    + " which installs MPJ Express (Debian's libmpj-java) and sets MPJ_HOME, or set MPJ_HOME to an MPJ Express"
                    + " installation");
        }
        Path jar = Path.of(mpjHome, "lib", "starter.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("--mode mpj: MPJ_HOME=" + mpjHome + " has no lib/starter.jar; scripts/mprun sets up"
                    + " a working MPJ_HOME (.tools/mpj-home), or point MPJ_HOME at an MPJ Express installation");
        }
        return jar;
    }

    /**
     * Runs the mode on every rank.
     *
     * @param boot  the gdasync ranks (for the heartbeat)
     * @param o     the run
     * @param print whether the child prints CoMD's output
     * @param out   where rank 0 relays the child's output
     * @return the result on rank 0, null on the others
     */
    static RunResult run(Bootstrap boot, ComdOptions o, boolean print, PrintStream out) throws IOException, InterruptedException {
        boolean root = boot.rank() == 0;
        if (!root) {
            while (decide(boot, false)) {
                // rank 0 says the MPJ run goes on
            }
            return null;
        }
        Process child;
        try {
            child = start(o, print);
        } catch (IOException | RuntimeException e) {
            decide(boot, false);
            throw e;
        }
        Thread reaper = new Thread(() -> {
            child.descendants().forEach(ProcessHandle::destroyForcibly);
            child.destroyForcibly();
        });
        Runtime.getRuntime().addShutdownHook(reaper);
        List<String> results = Collections.synchronizedList(new ArrayList<>());
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        Thread t1 = Thread.ofPlatform().daemon().name("mpj-stdout").start(() -> pump(child, false, out, results, errors));
        Thread t2 = Thread.ofPlatform().daemon().name("mpj-stderr").start(() -> pump(child, true, System.err, results, errors));
        try {
            while (!child.waitFor(HEARTBEAT_MILLIS, TimeUnit.MILLISECONDS)) {
                decide(boot, true);
            }
        } finally {
            if (child.isAlive()) {
                child.descendants().forEach(ProcessHandle::destroyForcibly);
                child.destroyForcibly();
            }
            decide(boot, false);
        }
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException e) {
            // shutting down already
        }
        t1.join(5000);
        t2.join(5000);
        if (!errors.isEmpty()) {
            throw new IllegalStateException("the MPJ Express run failed: " + String.join("; ", errors));
        }
        if (child.exitValue() != 0 || results.size() != 1) {
            throw new IllegalStateException("the MPJ Express run exited with status " + child.exitValue() + " and "
                    + results.size() + " results (its output is above)");
        }
        return RunResult.decode(results.getFirst());
    }

    private static boolean decide(Bootstrap boot, boolean mine) {
        List<byte[]> all = boot.allGather(boot.rank() == 0 ? new byte[]{(byte) (mine ? 1 : 0)} : new byte[0]);
        byte[] root = all.get(0);
        if (root.length != 1) {
            throw new IllegalStateException("rank 0 sent no decision: are all ranks running the same comd arguments?");
        }
        return root[0] == 1;
    }

    private static Process start(ComdOptions o, boolean print) throws IOException {
        Path starter = starter(System.getenv(MPJ_HOME));
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", starter.toString(), "-np", "" + o.ranks(), "-dev", "multicore",
                "-cp", System.getProperty("java.class.path"), ComdMpj.class.getName(), print ? "print" : "quiet"));
        cmd.addAll(o.simulationArgs());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        // The starter runs the ranks' JVM as plain "java" from PATH: make that this JVM's java.
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

    private static void pump(Process child, boolean stderr, PrintStream to, List<String> results, List<String> errors) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                stderr ? child.getErrorStream() : child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith(ComdMpj.RESULT + " ")) {
                    results.add(line.substring(ComdMpj.RESULT.length() + 1));
                } else if (line.startsWith(ComdMpj.ERROR + " ")) {
                    errors.add(line.substring(ComdMpj.ERROR.length() + 1));
                } else if (line.startsWith("MPJ Express (") || line.isBlank() && stderr) {
                    // the starter's banner
                } else {
                    to.println(line);
                }
            }
        } catch (IOException | RuntimeException e) {
            errors.add("reading the MPJ output failed: " + e);
        }
    }
}
