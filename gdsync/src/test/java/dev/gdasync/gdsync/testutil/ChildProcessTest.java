package dev.gdasync.gdsync.testutil;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.opentest4j.AssertionFailedError;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The harness itself: status and output of a failing child, a hung child killed at its deadline, stdin, kill, close. */
@Timeout(120)
class ChildProcessTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    /** Prints what it was given (an argument, a system property, a variable) and exits with 3. */
    public static final class ExitThree {
        public static void main(String[] args) {
            System.out.println("arg " + args[0]);
            System.out.println("property " + System.getProperty("child.test.property"));
            System.out.println("variable " + System.getenv("CHILD_TEST_VARIABLE"));
            System.out.println("launcher " + System.getenv("GDASYNC_RANK"));
            System.err.println("something went wrong");
            System.exit(3);
        }
    }

    /** Says it is up, then never ends. */
    public static final class Hang {
        public static void main(String[] args) throws InterruptedException {
            System.out.println("up");
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    /** Answers each line of its standard input with "echo LINE", and exits with 0 when it ends. */
    public static final class Echo {
        public static void main(String[] args) throws IOException {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                System.out.println("echo " + line);
            }
        }
    }

    @Test
    void aChildThatExitsWithThreeIsReportedWithItsStatusAndOutput() {
        try (ChildProcess child = ChildProcess.builder("three",
                        ChildProcess.javaCommand(List.of("-Dchild.test.property=p1"), ExitThree.class, List.of("a1")))
                .environment(Map.of("CHILD_TEST_VARIABLE", "v1")).start()) {
            assertEquals(3, child.awaitExit(WAIT), child.describe());
            assertEquals(List.of("arg a1", "property p1", "variable v1", "launcher null"), child.stdout());
            assertEquals(List.of("something went wrong"), child.stderr());
            assertEquals("arg a1\nproperty p1\nvariable v1\nlauncher null\n", child.stdoutText());
            String d = child.describe();
            assertTrue(d.startsWith("three (pid " + child.pid() + ", exited with status 3)"), d);
            assertTrue(d.contains("    property p1") && d.contains("    something went wrong"), d);
            // Its output has ended: waiting for a line it never printed fails at once, with its status and output.
            long t0 = System.nanoTime();
            AssertionFailedError e = assertThrows(AssertionFailedError.class,
                    () -> child.awaitLine(l -> l.equals("never"), WAIT));
            assertTrue(System.nanoTime() - t0 < WAIT.toNanos() / 2, "the end of the output ends the wait");
            assertTrue(e.getMessage().contains("ended without the line awaited") && e.getMessage().contains("status 3"),
                    e.getMessage());
        }
        ChildProcess.Finished merged = ChildProcess.builder("merged", ChildProcess.javaCommand(ExitThree.class,
                List.of("a2"))).mergeStderr().run(WAIT);
        assertEquals(3, merged.status(), merged.all());
        assertTrue(merged.out().startsWith("arg a2\n") && merged.out().contains("something went wrong\n"), merged.all());
        assertEquals("", merged.err(), merged.all());
    }

    @Test
    void aChildThatHangsIsKilledAtItsTimeoutAndTheFailureSaysSo() {
        try (ChildProcess child = ChildProcess.start("hang", ChildProcess.javaCommand(Hang.class, List.of()), Map.of())) {
            assertEquals("up", child.awaitLine(l -> l.equals("up"), WAIT));
            AssertionFailedError e = assertThrows(AssertionFailedError.class,
                    () -> child.awaitExit(Duration.ofMillis(500)));
            assertTrue(e.getMessage().startsWith("hang did not exit within 500 ms and was killed (SIGKILL): hang (pid "),
                    e.getMessage());
            assertTrue(e.getMessage().contains("    up"), e.getMessage());
            assertFalse(child.isAlive(), "killed and reaped");
            AssertionFailedError none = assertThrows(AssertionFailedError.class,
                    () -> child.awaitLine(l -> l.equals("never"), Duration.ZERO));
            assertTrue(none.getMessage().contains("hang"), none.getMessage());
        }
    }

    @Test
    void stdinCarriesRequestsAndReadsHaveDeadlinesAndKillEndsTheChild() {
        ChildProcess child = ChildProcess.builder("echo", ChildProcess.javaCommand(Echo.class, List.of()))
                .keepStdinOpen(Duration.ofSeconds(10)).start();
        try (child) {
            assertEquals("echo one", child.request("one", WAIT));
            assertEquals("echo two", child.request("two", WAIT));
            AssertionFailedError e = assertThrows(AssertionFailedError.class, () -> child.readLine(Duration.ofMillis(200)));
            assertTrue(e.getMessage().contains("no answer within 200 ms") && e.getMessage().contains("echo two"),
                    e.getMessage());
        }
        // close() closed its stdin and it exited by itself, with 0, within its grace.
        assertEquals(0, child.awaitExit(Duration.ofSeconds(1)));

        try (ChildProcess victim = ChildProcess.builder("victim", ChildProcess.javaCommand(Echo.class, List.of()))
                .keepStdinOpen(Duration.ZERO).start()) {
            assertEquals("echo x", victim.request("x", WAIT));
            victim.kill();
            assertEquals(137, victim.awaitExit(WAIT), "128 + SIGKILL");
            AssertionFailedError e = assertThrows(AssertionFailedError.class, () -> victim.readLine(WAIT));
            assertTrue(e.getMessage().contains("ended while waiting") && e.getMessage().contains("status 137"),
                    e.getMessage());
        }
    }

    @Test
    void closeKillsWhatTheChildStarted() throws Exception {
        ChildProcess shell = ChildProcess.start("shell", List.of("sh", "-c", "sleep 600 & echo $!; wait"), Map.of());
        long sleeper;
        try (shell) {
            sleeper = Long.parseLong(shell.readLine(WAIT));
            assertTrue(ProcessHandle.of(sleeper).map(ProcessHandle::isAlive).orElse(false));
        }
        assertFalse(shell.isAlive());
        assertFalse(ProcessHandle.of(sleeper).map(ProcessHandle::isAlive).orElse(false), "the shell's child is gone");
    }
}
