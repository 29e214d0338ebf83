package dev.gdasync.libmp.launch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The launcher's parts that need no process: options, the application registry, line prefixing. */
class LaunchOptionsTest {

    static final Map<String, String> NO_ENV = Map.of();

    static LaunchOptions parse(String... args) {
        return LaunchOptions.parse(NO_ENV, args);
    }

    static String usageError(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> parse(args)).getMessage();
    }

    @Test
    void options() {
        LaunchOptions o = parse("-np", "4", "--grace", "0.25", "--jvm-opt", "-Xmx1g", "pingpong", "--mode", "host", "-np", "9");
        assertEquals(4, o.ranks());
        assertEquals(Duration.ofMillis(250), o.grace());
        assertEquals(List.of("-Xmx1g"), o.jvmOpts());
        assertEquals("pingpong", o.app());
        assertEquals(List.of("--mode", "host", "-np", "9"), o.appArgs());
        assertTrue(o.classpath().isEmpty());
        LaunchOptions d = parse("hello");
        assertEquals(1, d.ranks());
        assertEquals(LaunchOptions.DEFAULT_GRACE, d.grace());
        assertTrue(parse("--list").list());
        assertEquals(List.of("--help"), parse("-n", "2", "Main", "--help").appArgs(), "options after MAIN are the program's");
        assertEquals(3, parse("-np", "2", "-np", "3", "Main").ranks(), "the last of a repeated option counts");
    }

    @Test
    void badOptionsNameTheOptionAndTheValue() {
        assertEquals("no program given: name its main class (or a short name from --list)", usageError("-np", "2"));
        assertEquals("missing required parameter for option '-np' (N)", usageError("-np"));
        assertEquals("invalid value for option '-np': '0' is not a number of ranks from 1 to 4096", usageError("-np", "0", "x"));
        assertEquals("invalid value for option '-np': 'two' is not a number of ranks from 1 to 4096", usageError("-np", "two", "x"));
        assertEquals("invalid value for option '--grace': '-1' is not a number of seconds from 0 to 3600",
                usageError("--grace", "-1", "x"));
        assertEquals("unknown option: '--verbose'; did you mean --version?", usageError("--verbose", "x"));
        assertEquals("unknown option: '--gracee'; did you mean --grace?", usageError("--gracee", "1", "x"));
        assertEquals("unknown option: '--bogus'", usageError("--bogus"), "an unknown last option is unknown, not missing a value");
        assertEquals("invalid value for option '--netns': '0' is not a number of namespaces from 1 to 64",
                usageError("-np", "2", "--netns", "0", "x"));
        assertEquals("invalid value for option '--netns': '65' is not a number of namespaces from 1 to 64",
                usageError("-np", "99", "--netns", "65", "x"));
        assertEquals("--netns 3 with 2 ranks would leave hosts without a rank: K must not exceed -np N",
                usageError("--netns", "3", "-np", "2", "x"));
        assertEquals("--netns 2 with 1 rank would leave hosts without a rank: K must not exceed -np N",
                usageError("--netns", "2", "x"));
    }

    @Test
    void theProgramsClassPathComesFromTheOptionTheJvmOptionsOrTheVariables(@TempDir Path dir) throws Exception {
        Path classes = Files.createDirectory(dir.resolve("classes"));
        Path lib = Files.createDirectory(dir.resolve("lib"));
        String cp = classes + ":" + lib + "/*";
        LaunchOptions o = parse("--classpath", cp, "-np", "2", "Main");
        assertEquals(cp, o.classpath().joined());
        assertEquals("--classpath", o.classpath().source());
        assertEquals(classes.toString(), parse("-cp", classes.toString(), "Main").classpath().joined());
        LaunchOptions j = parse("--jvm-opt", "-Xss2m", "--jvm-opt", "-cp", "--jvm-opt", classes.toString(), "Main");
        assertEquals(classes.toString(), j.classpath().joined());
        assertEquals(List.of("-Xss2m"), j.jvmOpts(), "the class path leaves the JVM options");
        assertEquals(classes.toString(), parse("--jvm-opt", "--class-path=" + classes, "Main").classpath().joined());
        assertEquals(lib.toString(), LaunchOptions.parse(Map.of("GDASYNC_CLASSPATH", lib.toString(), "CLASSPATH", classes.toString()),
                "Main").classpath().joined());
        assertEquals(classes.toString(), LaunchOptions.parse(Map.of("CLASSPATH", classes.toString()), "Main").classpath().joined());
        assertEquals(classes.toString(), LaunchOptions.parse(Map.of("CLASSPATH", lib.toString()), "-cp", classes.toString(), "Main")
                .classpath().joined(), "the option wins over the variable");
        assertEquals("--classpath: '" + dir.resolve("nope") + "' does not exist", usageError("-cp", dir.resolve("nope").toString(), "Main"));
        assertEquals("GDASYNC_CLASSPATH: '/no/such/folder/*' does not exist (no folder /no/such/folder)",
                assertThrows(IllegalArgumentException.class,
                        () -> LaunchOptions.parse(Map.of("GDASYNC_CLASSPATH", "/no/such/folder/*"), "Main")).getMessage());
        assertEquals("the class path is given twice, with --classpath and with --jvm-opt: give it once",
                usageError("-cp", classes.toString(), "--jvm-opt", "-cp", "--jvm-opt", lib.toString(), "Main"));
    }

    @Test
    void netnsSpreadsRanksRoundRobin() throws Exception {
        assertEquals(0, parse("-np", "2", "x").netns());
        LaunchOptions o = parse("--netns", "2", "-np", "5", "x", "--netns", "9");
        assertEquals(2, o.netns());
        assertEquals(5, o.ranks());
        assertEquals(List.of("--netns", "9"), o.appArgs());
        assertEquals(1, parse("--netns", "1", "x").netns());
        assertEquals(List.of(0, 1, 0, 1, 0), java.util.stream.IntStream.range(0, 5).map(r -> NetNamespaces.hostOf(r, 2)).boxed().toList());
        assertEquals("gdasync-h3", NetNamespaces.name(3));
        assertEquals("10.77.0.13", NetNamespaces.address(3));
        assertEquals("10.77.0.73", NetNamespaces.address(NetNamespaces.MAX_HOSTS - 1));
    }

    @Test
    void registry() {
        AppRegistry reg = AppRegistry.load(getClass().getClassLoader());
        ClassPath none = ClassPath.none();
        assertEquals("dev.gdasync.libmp.testutil.RankMain", reg.apps().get("testrank"));
        assertEquals("dev.gdasync.libmp.testutil.RankMain", reg.resolve("testrank", none));
        assertEquals(MpRun.class.getName(), reg.resolve(MpRun.class.getName(), none));
        assertEquals("unknown program 'nope': not a short name (known: mpexercise, testrank) and no class nope on the class path"
                + " (the launcher's jars only)", assertThrows(IllegalArgumentException.class, () -> reg.resolve("nope", none)).getMessage());
        assertEquals("the main class a.b.C is not on the class path (the launcher's jars only): give its folder or jar with --classpath",
                assertThrows(IllegalArgumentException.class, () -> reg.resolve("a.b.C", none)).getMessage());
    }

    @Test
    void exitStatusDescriptions() {
        assertEquals("exited with status 3", Job.describe(3));
        assertEquals("killed by SIGKILL (exit status 137)", Job.describe(137));
        assertEquals("killed by SIGTERM (exit status 143)", Job.describe(143));
        assertEquals("exited with status 255", Job.describe(255));
        assertEquals("rank 3", Job.ranksWord(List.of(3)));
        assertEquals("ranks 0 and 2", Job.ranksWord(List.of(0, 2)));
        assertEquals("ranks 0, 1 and 2", Job.ranksWord(List.of(0, 1, 2)));
    }

    @Test
    void linesArePrefixedWholeEvenWhenSplitAcrossReads() {
        byte[] data = "first\nsecond line\n\nno newline at the end".getBytes(StandardCharsets.UTF_8);
        // An input that hands out one byte per read.
        InputStream trickle = new ByteArrayInputStream(data) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, 1));
            }
        };
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        new LinePump(trickle, new PrintStream(sink, true, StandardCharsets.UTF_8), 7).run();
        assertEquals("[7] first\n[7] second line\n[7] \n[7] no newline at the end\n", sink.toString(StandardCharsets.UTF_8));
    }
}
