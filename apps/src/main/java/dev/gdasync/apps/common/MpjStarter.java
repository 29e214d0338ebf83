package dev.gdasync.apps.common;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * MPJ Express's starter with the multicore device as a {@link ChildJob}: {@code java -jar $MPJ_HOME/lib/starter.jar
 * -np N -dev multicore -cp CLASSPATH MAIN ARGS...} (N rank threads in one JVM), with this JVM's java first on the
 * child's PATH. The apps' {@code mpj} modes and baselines run their MPJ program this way from rank 0.
 */
public final class MpjStarter {
    /** The variable naming MPJ Express's home, set by {@code scripts/mprun}. */
    public static final String MPJ_HOME = "MPJ_HOME";

    private MpjStarter() {
    }

    /**
     * @param mpjHome the value of MPJ_HOME, or null
     * @return why MPJ Express cannot run here, or null if it can
     */
    public static String missing(String mpjHome) {
        if (mpjHome == null || mpjHome.isBlank()) {
            return "MPJ_HOME is not set (scripts/mprun installs MPJ Express and sets it)";
        }
        if (!Files.isRegularFile(starterJar(mpjHome))) {
            return "MPJ_HOME=" + mpjHome + " has no lib/starter.jar";
        }
        return null;
    }

    /**
     * Checks that an app's {@code --mode mpj} can start MPJ Express.
     *
     * @param mpjHome the value of MPJ_HOME, or null
     * @param app     what is run, in words, as the user starts it ("comd", "the ping-pong")
     * @throws IllegalStateException with what to do, if MPJ_HOME is not set or has no starter
     */
    public static void require(String mpjHome, String app) {
        if (mpjHome == null || mpjHome.isBlank()) {
            throw new IllegalStateException("--mode mpj needs MPJ Express: MPJ_HOME is not set. Run " + app + " with"
                    + " scripts/mprun, which installs MPJ Express (Debian's libmpj-java) and sets MPJ_HOME, or set"
                    + " MPJ_HOME to an MPJ Express installation");
        }
        if (!Files.isRegularFile(starterJar(mpjHome))) {
            throw new IllegalStateException("--mode mpj: MPJ_HOME=" + mpjHome + " has no lib/starter.jar; scripts/mprun"
                    + " sets up a working MPJ_HOME (.tools/mpj-home), or point MPJ_HOME at an MPJ Express"
                    + " installation");
        }
    }

    /**
     * @param name      the job in words, for the error messages ("the MPJ Express baseline")
     * @param mpjHome   MPJ_HOME, checked ({@link #missing})
     * @param ranks     MPJ ranks
     * @param mainClass the MPJ program's main class, on this JVM's class path
     * @param args      its arguments
     * @param resultTag the first word of its result lines
     * @param errorTag  the first word of its error lines
     * @return the job, ready to run; its lines echoed as they are until the caller sets an {@link ChildJob.Echo}
     */
    public static ChildJob job(String name, String mpjHome, int ranks, String mainClass, List<String> args,
                               String resultTag, String errorTag) {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> cmd = new ArrayList<>(List.of(java, "-jar", starterJar(mpjHome).toString(), "-np",
                Integer.toString(ranks), "-dev", "multicore", "-cp", System.getProperty("java.class.path"), mainClass));
        cmd.addAll(args);
        return new ChildJob(name, cmd, resultTag, errorTag).environment(environment(java, System.getenv("PATH")));
    }

    /**
     * The starter runs the ranks' JVM as plain "java" from PATH: make that this JVM's java, which can load the classes
     * this build compiled.
     *
     * @param java this JVM's java executable
     * @param path this process's PATH, or null
     * @return PATH and JAVA_HOME for the child
     */
    public static Map<String, String> environment(String java, String path) {
        Map<String, String> env = new HashMap<>();
        Path bin = Path.of(java).getParent();
        if (bin != null) {
            env.put("PATH", bin + (path == null || path.isEmpty() ? "" : File.pathSeparator + path));
            if (bin.getParent() != null) {
                env.put("JAVA_HOME", bin.getParent().toString());
            }
        }
        return env;
    }

    private static Path starterJar(String mpjHome) {
        return Path.of(mpjHome, "lib", "starter.jar");
    }
}
