package dev.gdasync.test.firsthour;

import dev.gdasync.libmp.bootstrap.RendezvousPorts;
import dev.gdasync.libmp.cli.ProjectVersion;
import dev.gdasync.test.harness.Command;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The getting-started guide's programs ({@code docs/examples/getting-started}), as a user gets them running: compiled
 * against the jars-only launcher and nothing else, then run by it ({@code java -jar libmp-VERSION-launcher.jar}), by
 * the launcher as {@code scripts/mprun} runs it (the project's class path), and with the environment {@code srun}
 * and {@code mpirun} give their tasks. The guide and docs/features.md must show the example files verbatim.
 */
@Timeout(300)
class GettingStartedTest {
    static final Duration RUN = Duration.ofSeconds(120);
    static Path root;
    static Path example;
    static Path launcherJar;
    @TempDir
    static Path work;
    static Path classes;

    @BeforeAll
    static void compileTheExamplesAgainstTheLauncherJarAlone() throws IOException {
        root = Path.of(System.getProperty("gdasync.root", "..")).toAbsolutePath().normalize();
        example = root.resolve("docs/examples/getting-started");
        launcherJar = Path.of(System.getProperty("gdasync.launcher.jar",
                root.resolve("libmp/target/libmp-" + ProjectVersion.version() + "-launcher.jar").toString()));
        assertTrue(Files.isRegularFile(launcherJar), "libmp's build makes the launcher jar " + launcherJar
                + " (package libmp before running these tests)");
        classes = Files.createDirectory(work.resolve("classes"));
        List<String> args = new ArrayList<>(List.of("--release", "25", "-proc:none", "-Xlint:all", "-Werror",
                "-d", classes.toString(), "-cp", launcherJar.toString()));
        try (Stream<Path> sources = Files.walk(example.resolve("src/main/java"))) {
            sources.filter(p -> p.toString().endsWith(".java")).forEach(p -> args.add(p.toString()));
        }
        ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        int rc = ToolProvider.getSystemJavaCompiler().run(null, diagnostics, diagnostics, args.toArray(String[]::new));
        assertEquals(0, rc, "the examples compile against the launcher jar alone, without warnings:\n"
                + diagnostics.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theLibmpExampleRunsUnderTheJarsOnlyLauncher() {
        Command.Ran r = Command.run(List.of(Command.java(), "-jar", launcherJar.toString(), "-np", "3", "--classpath",
                classes.toString(), "demo.HelloExchange"), Map.of(), RUN);
        assertEquals(0, r.status(), r.describe());
        for (int me = 0; me < 3; me++) {
            int prev = (me + 2) % 3;
            assertTrue(r.out().contains("[" + me + "] rank " + me + " (host): got " + (100 + prev) + " from rank " + prev + "\n"), r.describe());
            assertTrue(r.out().contains("[" + me + "] rank " + me + " (stream): got " + (200 + prev) + " from rank " + prev + "\n"), r.describe());
        }
    }

    @Test
    void theGdsyncExampleRunsUnderTheLauncherAsScriptsMprunRunsIt() {
        // scripts/mprun runs MpRun on the project's class path (the apps and their jars): this JVM's.
        Command.Ran r = Command.run(List.of(Command.java(), "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), "dev.gdasync.libmp.launch.MpRun", "-np", "2", "--classpath",
                classes.toString(), "demo.GdsyncExchange"), Map.of(), RUN);
        assertEquals(0, r.status(), r.describe());
        assertTrue(r.out().contains("[0] rank 0 got 'hello from rank 1'\n"), r.describe());
        assertTrue(r.out().contains("[1] rank 1 got 'hello from rank 0'\n"), r.describe());
    }

    @Test
    void theLibmpExampleRunsAsSrunAndMpirunStartIt() throws Exception {
        // What `srun -n 2 java ...` and `mpirun -np 2 java ...` start: the same command in every task, with the
        // launcher's variables in the environment, plus the rendezvous and the secret the guide exports.
        List<String> java = List.of(Command.java(), "--enable-native-access=ALL-UNNAMED", "-cp",
                launcherJar + ":" + classes, "demo.HelloExchange");
        String secret = HexFormat.of().formatHex(new SecureRandom().generateSeed(32));
        for (String launcher : List.of("slurm", "openmpi")) {
            String rendezvous = "127.0.0.1:" + RendezvousPorts.pick(InetAddress.getLoopbackAddress());
            List<Process> tasks = new ArrayList<>();
            for (int rank = 0; rank < 2; rank++) {
                ProcessBuilder pb = new ProcessBuilder(java);
                pb.environment().keySet().removeIf(k -> k.startsWith("GDASYNC_") || k.startsWith("SLURM_")
                        || k.startsWith("OMPI_") || k.startsWith("PMIX_"));
                pb.environment().putAll(Map.of("GDASYNC_RENDEZVOUS", rendezvous, "GDASYNC_SECRET", secret));
                pb.environment().putAll(launcher.equals("slurm")
                        ? Map.of("SLURM_PROCID", String.valueOf(rank), "SLURM_NTASKS", "2", "SLURM_JOB_ID", "4242",
                        "SLURM_STEP_ID", "0")
                        : Map.of("OMPI_COMM_WORLD_RANK", String.valueOf(rank), "OMPI_COMM_WORLD_SIZE", "2",
                        "OMPI_MCA_ess_base_jobid", "31337"));
                tasks.add(pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start());
            }
            for (int rank = 0; rank < 2; rank++) {
                Command.Ran r = Command.finish(java, tasks.get(rank), RUN);
                int prev = 1 - rank;
                assertEquals(0, r.status(), launcher + " task " + rank + ": " + r.describe());
                assertTrue(r.out().contains("rank " + rank + " (stream): got " + (200 + prev) + " from rank " + prev), r.describe());
            }
        }
    }

    @Test
    void theGuideAndTheReadmeShowTheExampleFilesVerbatim() throws IOException {
        String guide = Files.readString(root.resolve("docs/getting-started.md"));
        List<String> java = blocks(guide, "java");
        List<String> shown = new ArrayList<>();
        for (String block : java) {
            Matcher m = Pattern.compile("public class (\\w+)").matcher(block);
            if (block.startsWith("package demo;") && m.find()) {
                Path file = example.resolve("src/main/java/demo/" + m.group(1) + ".java");
                assertEquals(Files.readString(file), block, "docs/getting-started.md shows " + file + " as it is");
                shown.add(m.group(1));
            }
        }
        assertEquals(List.of("HelloExchange", "GdsyncExchange"), shown, "the guide shows both examples whole");
        List<String> xml = blocks(guide, "xml");
        assertEquals(Files.readString(example.resolve("pom.xml")), xml.getFirst(), "the guide shows the example's pom.xml as it is");
        String features = Files.readString(root.resolve("docs/features.md"));
        assertEquals(Files.readString(example.resolve("src/main/java/demo/GdsyncExchange.java")), blocks(features, "java").getFirst(),
                "docs/features.md's example is the compiled GdsyncExchange.java");
    }

    @Test
    void theExamplePomDependsOnThisVersion() throws IOException {
        String pom = Files.readString(example.resolve("pom.xml"));
        assertTrue(pom.contains("<gdasync.version>" + ProjectVersion.version() + "</gdasync.version>"),
                "docs/examples/getting-started/pom.xml names gdasync " + ProjectVersion.version());
    }

    /** @return the fenced code blocks of a language, in order, each ending with a newline */
    static List<String> blocks(String markdown, String language) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^```" + language + "\\n(.*?)^```$", Pattern.DOTALL).matcher(markdown);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }
}
