package dev.gdasync.test.firsthour;

import dev.gdasync.libmp.cli.ProjectVersion;
import dev.gdasync.test.harness.Command;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Maven commands a user types, on a fresh {@code git clone} of this repository: {@code mvn package
 * -Dmaven.test.skip=true}, {@code mvn -DskipTests install} (every module's jar with its sources and Javadoc jars, and
 * the BOM, which a user's project then imports to name libmp without a version), and {@code mvn -pl libmp -am test
 * -Dtest=SomeTest -Dsurefire.failIfNoSpecifiedTests=false} (that test alone). {@code mvn verify} is not run here: it is
 * the whole suite, which {@code scripts/test} runs as {@code mvn clean verify} on every CI run.
 *
 * <p>Maven runs offline ({@code -o}) against a private local repository whose files are hard links to the user's
 * repository (copies where links cannot be made), less the project's own artifacts: nothing is downloaded, and
 * nothing is installed into the user's repository. Maven's small bookkeeping files are copied, not linked, because
 * Maven rewrites them in place.
 */
@Timeout(900)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MavenCommandsTest {
    static final Duration BUILD = Duration.ofSeconds(420);
    static final String VERSION = ProjectVersion.version();
    static final List<String> MODULES = List.of("gdsync", "ki-kernels", "libmp", "apps");
    static Path work;
    static Path clone;
    static Path repo;

    @BeforeAll
    static void aFreshCloneAndAPrivateRepository() throws IOException {
        Path root = Path.of(System.getProperty("gdasync.root", "..")).toAbsolutePath().normalize();
        Path userRepo = Path.of(System.getProperty("gdasync.maven.repo", System.getProperty("user.home") + "/.m2/repository"));
        boolean git = Files.exists(root.resolve(".git"));
        if (!git) {
            System.out.println("SKIPPED (Maven commands): " + root + " is not a git clone, so there is nothing to clone fresh");
        }
        assumeTrue(git, "not a git clone");
        work = Files.createTempDirectory("gdasync-maven-");
        clone = work.resolve("clone");
        Command.Ran cloned = Command.run(List.of("git", "clone", "--quiet", root.toString(), clone.toString()), Map.of(),
                Duration.ofSeconds(120));
        assertEquals(0, cloned.status(), cloned.describe());
        repo = work.resolve("repository");
        mirror(userRepo, repo);
    }

    @AfterAll
    static void removeTheWork() throws IOException {
        if (work != null) {
            try (Stream<Path> all = Files.walk(work)) {
                all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    @Order(1)
    void packageWithoutTestsBuildsEveryJar() {
        Command.Ran r = mvn(List.of("package", "-Dmaven.test.skip=true"));
        assertTrue(r.out().contains("BUILD SUCCESS"), r.describe());
        for (String m : MODULES) {
            for (String suffix : List.of(".jar", "-sources.jar", "-javadoc.jar")) {
                Path jar = clone.resolve(m + "/target/" + m + "-" + VERSION + suffix);
                assertTrue(Files.isRegularFile(jar), jar + " is built: " + tail(r));
            }
        }
        assertTrue(Files.isRegularFile(clone.resolve("libmp/target/libmp-" + VERSION + "-launcher.jar")), tail(r));
    }

    @Test
    @Order(2)
    void installWithoutTestsInstallsTheArtifactsTheirSourcesAndJavadocAndTheBom() throws IOException {
        Command.Ran r = mvn(List.of("-DskipTests", "install"));
        assertTrue(r.out().contains("BUILD SUCCESS"), r.describe());
        for (String m : MODULES) {
            Path dir = repo.resolve("dev/gdasync/" + m + "/" + VERSION);
            for (String suffix : List.of(".jar", "-sources.jar", "-javadoc.jar", ".pom")) {
                assertTrue(Files.isRegularFile(dir.resolve(m + "-" + VERSION + suffix)), dir + " holds " + suffix + ": " + tail(r));
            }
        }
        assertTrue(Files.isRegularFile(repo.resolve("dev/gdasync/gdasync-bom/" + VERSION + "/gdasync-bom-" + VERSION + ".pom")), tail(r));

        // A user's project imports the BOM and names libmp without a version.
        Path user = Files.createDirectories(work.resolve("user"));
        Files.writeString(user.resolve("pom.xml"), """
                <project xmlns="http://maven.apache.org/POM/4.0.0">
                  <modelVersion>4.0.0</modelVersion>
                  <groupId>demo</groupId>
                  <artifactId>user</artifactId>
                  <version>1</version>
                  <properties><maven.compiler.release>25</maven.compiler.release></properties>
                  <dependencyManagement>
                    <dependencies>
                      <dependency>
                        <groupId>dev.gdasync</groupId>
                        <artifactId>gdasync-bom</artifactId>
                        <version>%s</version>
                        <type>pom</type>
                        <scope>import</scope>
                      </dependency>
                    </dependencies>
                  </dependencyManagement>
                  <dependencies>
                    <dependency>
                      <groupId>dev.gdasync</groupId>
                      <artifactId>libmp</artifactId>
                    </dependency>
                  </dependencies>
                </project>
                """.formatted(VERSION));
        Path src = Files.createDirectories(user.resolve("src/main/java/demo"));
        Files.writeString(src.resolve("Ranks.java"), """
                package demo;

                public class Ranks {
                    public static void main(String[] args) {
                        try (var boot = dev.gdasync.libmp.bootstrap.EnvBootstrap.fromEnvironment()) {
                            System.out.println(boot.rank());
                        }
                    }
                }
                """);
        Command.Ran compiled = mvn(List.of("-f", user.resolve("pom.xml").toString(),
                "org.apache.maven.plugins:maven-compiler-plugin:3.14.1:compile"));
        assertTrue(compiled.out().contains("BUILD SUCCESS"), compiled.describe());
        assertTrue(Files.isRegularFile(user.resolve("target/classes/demo/Ranks.class")), compiled.describe());

        // picocli belongs to the tools (the launcher, the applications), not to the library: the project gets none.
        Files.writeString(src.resolve("Options.java"), """
                package demo;

                @picocli.CommandLine.Command(name = "options")
                public class Options {
                }
                """);
        Command.Ran withPicocli = mvn(List.of("-f", user.resolve("pom.xml").toString(),
                "org.apache.maven.plugins:maven-compiler-plugin:3.14.1:compile"));
        assertTrue(withPicocli.out().contains("BUILD FAILURE") && withPicocli.out().contains("package picocli.CommandLine does not exist"),
                "a project that depends on libmp alone must not see picocli: " + withPicocli.describe());
    }

    @Test
    @Order(3)
    void oneNamedTestOfOneModuleRunsAlone() {
        Command.Ran r = mvn(List.of("-pl", "libmp", "-am", "test", "-Dtest=JobEnvironmentTest",
                "-Dsurefire.failIfNoSpecifiedTests=false"));
        assertTrue(r.out().contains("BUILD SUCCESS"), r.describe());
        Matcher m = Pattern.compile("Tests run: \\d+, .* -- in (\\S+)").matcher(r.out());
        List<String> ran = new ArrayList<>();
        while (m.find()) {
            ran.add(m.group(1));
        }
        assertEquals(List.of("dev.gdasync.libmp.bootstrap.JobEnvironmentTest"), ran, tail(r));
    }

    /** Runs Maven offline in the clone (or on the given -f pom) with the private repository. */
    private static Command.Ran mvn(List<String> args) {
        List<String> cmd = new ArrayList<>(List.of("mvn", "-B", "-ntp", "-o", "-Dstyle.color=never",
                "-Dmaven.repo.local=" + repo));
        if (!args.contains("-f")) {
            cmd.addAll(List.of("-f", clone.resolve("pom.xml").toString()));
        }
        cmd.addAll(args);
        return Command.run(cmd, Map.of(), BUILD);
    }

    private static String tail(Command.Ran r) {
        String out = r.out();
        return out.substring(Math.max(0, out.length() - 4000));
    }

    /** The user's repository, less the project's own artifacts (its third-party jars stay): links, bookkeeping copied. */
    private static void mirror(Path from, Path to) throws IOException {
        Set<String> own = Set.of("apps", "gdasync-parent", "gdasync-bom", "gdasync-test", "gdsync", "ki-kernels", "libmp");
        Path ownDir = from.resolve("dev/gdasync");
        try (Stream<Path> all = Files.walk(from)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                Path rel = from.relativize(p);
                if (p.startsWith(ownDir) && p.getNameCount() > ownDir.getNameCount()
                        && own.contains(p.getName(ownDir.getNameCount()).toString())) {
                    continue;
                }
                Path target = to.resolve(rel.toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else if (Files.isRegularFile(p)) {
                    String name = p.getFileName().toString();
                    boolean bookkeeping = name.startsWith("_") || name.startsWith("maven-metadata") || name.endsWith(".lastUpdated")
                            || name.startsWith("resolver-status");
                    if (bookkeeping) {
                        Files.copy(p, target);
                    } else {
                        try {
                            Files.createLink(target, p);
                        } catch (IOException | UnsupportedOperationException e) {
                            Files.copy(p, target);
                        }
                    }
                }
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
