package dev.gdasync.apps.shmemrun;

import dev.gdasync.apps.testutil.Launcher;
import dev.gdasync.gdsync.testutil.ChildProcess;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Runs an app by name under the launcher (what {@code scripts/mprun} runs) in light JVMs, for the apps' tests. */
public final class AppProcesses {
    private AppProcesses() {
    }

    /**
     * @param app  the app's short name
     * @param pes  the PEs
     * @param args the app's arguments
     * @return the launcher, light rank JVMs, stdout and stderr merged
     */
    public static ChildProcess.Builder launcher(String app, int pes, String... args) {
        List<String> a = new ArrayList<>(List.of("--jvm-opt", "-XX:+UseSerialGC", "--jvm-opt", "-XX:TieredStopAtLevel=1",
                "-np", String.valueOf(pes), app));
        a.addAll(List.of(args));
        return Launcher.mprun(a).mergeStderr();
    }

    /** @return the output of a run that must exit 0 within 300 s */
    public static String run(String app, int pes, String... args) {
        ChildProcess.Finished run = launcher(app, pes, args).run(Duration.ofSeconds(300));
        assertEquals(0, run.status(), run.out());
        return run.out();
    }
}
