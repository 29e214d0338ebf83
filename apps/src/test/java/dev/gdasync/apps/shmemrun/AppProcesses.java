package dev.gdasync.apps.shmemrun;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Runs an app by name under the launcher (what {@code scripts/mprun} runs) in light JVMs, for the apps' tests. */
public final class AppProcesses {
    private AppProcesses() {
    }

    /**
     * @param app  the app's short name
     * @param pes  the PEs
     * @param args the app's arguments
     * @return the launcher, started, stdout and stderr merged
     * @throws Exception if it cannot start
     */
    public static Process start(String app, int pes, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "--enable-native-access=ALL-UNNAMED", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                "dev.gdasync.libmp.launch.MpRun", "--jvm-opt", "-XX:+UseSerialGC", "--jvm-opt", "-XX:TieredStopAtLevel=1",
                "-np", String.valueOf(pes), app));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().keySet().removeIf(k -> k.startsWith("GDASYNC_"));
        return pb.start();
    }

    /**
     * @return the output of a run that must exit 0 within 300 s
     * @throws Exception if it cannot start
     */
    public static String run(String app, int pes, String... args) throws Exception {
        Process p = start(app, pes, args);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        return out;
    }
}
