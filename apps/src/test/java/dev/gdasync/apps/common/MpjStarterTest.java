package dev.gdasync.apps.common;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MpjStarterTest {
    @TempDir
    Path home;

    @Test
    void saysWhyMpjExpressCannotRun() throws Exception {
        assertEquals("MPJ_HOME is not set (scripts/mprun installs MPJ Express and sets it)", MpjStarter.missing(null));
        assertEquals("MPJ_HOME is not set (scripts/mprun installs MPJ Express and sets it)", MpjStarter.missing(" "));
        assertEquals("MPJ_HOME=" + home + " has no lib/starter.jar", MpjStarter.missing(home.toString()));
        Files.createDirectories(home.resolve("lib"));
        Files.createFile(home.resolve("lib/starter.jar"));
        assertNull(MpjStarter.missing(home.toString()));
    }

    @Test
    void anMpjModeSaysWhatToDo() throws Exception {
        IllegalStateException unset = assertThrows(IllegalStateException.class, () -> MpjStarter.require(null, "comd"));
        assertTrue(unset.getMessage().startsWith("--mode mpj needs MPJ Express: MPJ_HOME is not set. Run comd with"
                + " scripts/mprun"), unset.getMessage());
        IllegalStateException noJar = assertThrows(IllegalStateException.class,
                () -> MpjStarter.require(home.toString(), "comd"));
        assertTrue(noJar.getMessage().startsWith("--mode mpj: MPJ_HOME=" + home + " has no lib/starter.jar"),
                noJar.getMessage());
        Files.createDirectories(home.resolve("lib"));
        Files.createFile(home.resolve("lib/starter.jar"));
        MpjStarter.require(home.toString(), "comd");
    }

    @Test
    void theJobRunsTheStarterWithTheMulticoreDeviceAndThisJava() {
        ChildJob job = MpjStarter.job("the test run", home.toString(), 3, "x.Main", List.of("a", "b"), "R", "E");
        List<String> cmd = job.command();
        assertEquals(List.of("-jar", home.resolve("lib/starter.jar").toString(), "-np", "3", "-dev", "multicore", "-cp",
                System.getProperty("java.class.path"), "x.Main", "a", "b"), cmd.subList(1, cmd.size()));
        Path java = Path.of(cmd.getFirst());
        assertTrue(job.environment().get("PATH").startsWith(java.getParent() + File.pathSeparator)
                || job.environment().get("PATH").equals(java.getParent().toString()), job.environment().toString());
    }

    @Test
    void theChildsJavaIsThisJvms() {
        Map<String, String> env = MpjStarter.environment("/opt/jdk/bin/java", "/usr/bin:/bin");
        assertEquals(Map.of("PATH", "/opt/jdk/bin" + File.pathSeparator + "/usr/bin:/bin", "JAVA_HOME", "/opt/jdk"), env);
        assertEquals(Map.of("PATH", "/opt/jdk/bin", "JAVA_HOME", "/opt/jdk"), MpjStarter.environment("/opt/jdk/bin/java", null));
        assertFalse(MpjStarter.environment("java", "/usr/bin").containsKey("PATH"));
    }
}
