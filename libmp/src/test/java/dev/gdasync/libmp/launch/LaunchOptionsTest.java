package dev.gdasync.libmp.launch;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The launcher's parts that need no process: options, the application registry, line prefixing. */
class LaunchOptionsTest {

    static String usageError(String... args) {
        return assertThrows(LaunchOptions.UsageException.class, () -> LaunchOptions.parse(args)).getMessage();
    }

    @Test
    void options() throws Exception {
        LaunchOptions o = LaunchOptions.parse(new String[]{"-np", "4", "--grace", "0.25", "--jvm-opt", "-Xmx1g", "pingpong",
                "--mode", "host", "-np", "9"});
        assertEquals(4, o.ranks());
        assertEquals(Duration.ofMillis(250), o.grace());
        assertEquals(List.of("-Xmx1g"), o.jvmOpts());
        assertEquals("pingpong", o.app());
        assertEquals(List.of("--mode", "host", "-np", "9"), o.appArgs());
        LaunchOptions d = LaunchOptions.parse(new String[]{"hello"});
        assertEquals(1, d.ranks());
        assertEquals(LaunchOptions.DEFAULT_GRACE, d.grace());
        assertTrue(LaunchOptions.parse(new String[]{"--help"}).help());
        assertTrue(LaunchOptions.parse(new String[]{"--list"}).list());
    }

    @Test
    void badOptions() {
        assertEquals("no application given", usageError("-np", "2"));
        assertEquals("-np needs a value", usageError("-np"));
        assertEquals("-np takes a number of ranks from 1 to 4096, not '0'", usageError("-np", "0", "x"));
        assertEquals("-np takes a number of ranks from 1 to 4096, not 'two'", usageError("-np", "two", "x"));
        assertEquals("--grace takes a number of seconds from 0 to 3600, not '-1'", usageError("--grace", "-1", "x"));
        assertEquals("unknown option '--verbose'", usageError("--verbose", "x"));
        assertEquals("--netns takes a number of namespaces from 1 to 64, not '0'", usageError("-np", "2", "--netns", "0", "x"));
        assertEquals("--netns takes a number of namespaces from 1 to 64, not 'x'", usageError("-np", "2", "--netns", "x", "y"));
        assertEquals("--netns takes a number of namespaces from 1 to 64, not '65'", usageError("-np", "99", "--netns", "65", "x"));
        assertEquals("--netns needs a value", usageError("--netns"));
        assertEquals("--netns 3 with 2 ranks would leave hosts without a rank: K must not exceed -np N",
                usageError("--netns", "3", "-np", "2", "x"));
        assertEquals("--netns 2 with 1 rank would leave hosts without a rank: K must not exceed -np N",
                usageError("--netns", "2", "x"));
    }

    @Test
    void netnsSpreadsRanksRoundRobin() throws Exception {
        assertEquals(0, LaunchOptions.parse(new String[]{"-np", "2", "x"}).netns());
        LaunchOptions o = LaunchOptions.parse(new String[]{"--netns", "2", "-np", "5", "x", "--netns", "9"});
        assertEquals(2, o.netns());
        assertEquals(5, o.ranks());
        assertEquals(List.of("--netns", "9"), o.appArgs());
        assertEquals(1, LaunchOptions.parse(new String[]{"--netns", "1", "x"}).netns());
        assertEquals(List.of(0, 1, 0, 1, 0), java.util.stream.IntStream.range(0, 5).map(r -> NetNamespaces.hostOf(r, 2)).boxed().toList());
        assertEquals("gdasync-h3", NetNamespaces.name(3));
        assertEquals("10.77.0.13", NetNamespaces.address(3));
        assertEquals("10.77.0.73", NetNamespaces.address(NetNamespaces.MAX_HOSTS - 1));
    }

    @Test
    void registry() {
        AppRegistry reg = AppRegistry.load(getClass().getClassLoader());
        assertEquals("dev.gdasync.libmp.testutil.RankMain", reg.apps().get("testrank"));
        assertEquals("dev.gdasync.libmp.testutil.RankMain", reg.resolve("testrank"));
        assertEquals(MpRun.class.getName(), reg.resolve(MpRun.class.getName()));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> reg.resolve("nope")).getMessage()
                .startsWith("unknown application 'nope'; known by short name: mpexercise, testrank"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> reg.resolve("a.b.C")).getMessage()
                .startsWith("the main class a.b.C is not on the class path"));
    }

    @Test
    void exitStatusDescriptions() {
        assertEquals("exited with status 3", Job.describe(3));
        assertEquals("was killed by SIGKILL (exit status 137)", Job.describe(137));
        assertEquals("was killed by SIGTERM (exit status 143)", Job.describe(143));
        assertEquals("exited with status 255", Job.describe(255));
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
