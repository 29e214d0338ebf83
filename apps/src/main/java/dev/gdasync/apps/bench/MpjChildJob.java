package dev.gdasync.apps.bench;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An MPJ Express baseline run as a child job of one gdasync rank: MPJ's starter with the multicore device
 * ({@code java -jar $MPJ_HOME/lib/starter.jar -np N -dev multicore -cp CLASSPATH MAIN ARGS...}), this JVM's java on
 * its PATH, run by {@link ChildJob}: the child's lines that start with the result tag are collected, one with the
 * error tag fails the run, the rest are echoed with a {@code mpj: } prefix. The gdasync ranks stay idle meanwhile (the
 * caller's heartbeat keeps them waiting), so the MPJ ranks have the CPUs.
 */
public final class MpjChildJob {
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
        Map<String, String> env = new HashMap<>();
        // The starter runs the ranks' JVM as plain "java" from PATH: make that this JVM's java.
        Path bin = Path.of(java).getParent();
        if (bin != null) {
            env.put("PATH", bin + File.pathSeparator + System.getenv().getOrDefault("PATH", ""));
            if (bin.getParent() != null) {
                env.put("JAVA_HOME", bin.getParent().toString());
            }
        }
        return ChildJob.run("the MPJ Express baseline", cmd, env, "mpj: ", resultTag, errorTag, heartbeat);
    }
}
