package dev.gdasync.libmp.testutil;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.launch.MpRun;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The launcher ({@link MpRun}, what {@code scripts/mprun} runs) in a light child JVM of this test class path, with
 * light rank JVMs and a 30 s bootstrap timeout.
 */
public final class MpRunProcess {
    private MpRunProcess() {
    }

    /**
     * Starts the launcher in a clean environment.
     *
     * @param args the launcher's arguments ({@code -np N}, the main class and its arguments, ...)
     * @return the running launcher
     */
    public static ChildProcess start(String... args) {
        return start(Map.of(), args);
    }

    /**
     * Starts the launcher.
     *
     * @param env  more variables for the launcher (a null value removes one); it gets no {@code CLASSPATH} unless
     *             given one here: the test decides the program's class path
     * @param args the launcher's arguments ({@code -np N}, the main class and its arguments, ...)
     * @return the running launcher
     */
    public static ChildProcess start(Map<String, String> env, String... args) {
        List<String> a = new ArrayList<>(List.of("--jvm-opt", "-XX:+UseSerialGC", "--jvm-opt", "-XX:TieredStopAtLevel=1"));
        a.addAll(List.of(args));
        Map<String, String> e = new HashMap<>();
        e.put("GDASYNC_BOOTSTRAP_TIMEOUT_MS", "30000");
        e.put("CLASSPATH", null);
        e.putAll(env);
        return ChildProcess.start("mprun", ChildProcess.javaCommand(MpRun.class, a), e);
    }
}
