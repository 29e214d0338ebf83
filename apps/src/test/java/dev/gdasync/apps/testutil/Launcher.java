package dev.gdasync.apps.testutil;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.launch.MpRun;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The launcher ({@link MpRun}, what {@code scripts/mprun} runs) in a light child JVM of this test class path, for the
 * apps' end-to-end tests: one JVM that starts the rank JVMs. Its arguments choose the ranks' JVM options
 * ({@code --jvm-opt}); the builder, its environment and how its output is kept.
 */
public final class Launcher {
    private Launcher() {
    }

    /**
     * @param args the launcher's arguments ({@code --jvm-opt ...}, {@code -np N}, the app and its arguments)
     * @return a builder for the launcher's process
     */
    public static ChildProcess.Builder mprun(String... args) {
        return mprun(List.of(args));
    }

    /**
     * @param args the launcher's arguments ({@code --jvm-opt ...}, {@code -np N}, the app and its arguments)
     * @return a builder for the launcher's process
     */
    public static ChildProcess.Builder mprun(List<String> args) {
        return ChildProcess.builder("mprun", ChildProcess.javaCommand(MpRun.class, args));
    }

    /** @return MPJ_HOME from the environment or the build (scripts/ set it up under .tools/mpj-home), or null */
    public static String mpjHome() {
        for (String home : new String[]{System.getenv("MPJ_HOME"), System.getProperty("gdasync.mpj.home")}) {
            if (home != null && Files.isRegularFile(Path.of(home, "lib", "starter.jar"))) {
                return home;
            }
        }
        return null;
    }
}
