package dev.gdasync.apps.common;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ChildJobTest {
    private static final Runnable NO_HEARTBEAT = () -> {
    };

    private static ChildJob sh(String script) {
        return new ChildJob("the test job", List.of("sh", "-c", script), "RESULT", "ERROR");
    }

    @Test
    void collectsTheResultLinesAndEchoesTheOthersWithTheirStream() throws Exception {
        List<String> echoed = Collections.synchronizedList(new ArrayList<>());
        List<String> told = Collections.synchronizedList(new ArrayList<>());
        List<String> results = sh("echo 'RESULT 1 a'; echo hello; echo 'RESULT 2 b'; echo oops >&2; echo 'RESULTS not one'")
                .echo((line, stderr) -> echoed.add((stderr ? "err: " : "out: ") + line))
                .onResult(told::add)
                .run(NO_HEARTBEAT);
        assertEquals(List.of("1 a", "2 b"), results);
        assertEquals(results, told);
        assertTrue(echoed.containsAll(List.of("out: hello", "err: oops", "out: RESULTS not one")), echoed.toString());
        assertEquals(3, echoed.size(), echoed.toString());
    }

    @Test
    void failsWithTheStatusWhenTheChildExitsNonZero() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> sh("echo 'RESULT 1'; exit 3").echo((line, stderr) -> { }).run(NO_HEARTBEAT));
        assertEquals("the test job exited with status 3 (its output is above)", e.getMessage());
    }

    @Test
    void failsWithTheErrorLinesTheChildPrinted() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> sh("echo 'ERROR rank 1: broken' >&2; echo 'ERROR rank 0: too'; exit 3").run(NO_HEARTBEAT));
        assertTrue(e.getMessage().startsWith("the test job failed: "), e.getMessage());
        assertTrue(e.getMessage().contains("rank 1: broken") && e.getMessage().contains("rank 0: too"), e.getMessage());
    }

    @Test
    void aMissingCommandCannotBeStarted() {
        ChildJob job = new ChildJob("the test job", List.of("/nonexistent/gdasync-no-such-program"), "RESULT", "ERROR");
        assertThrows(IOException.class, () -> job.run(NO_HEARTBEAT));
    }

    @Test
    void beatsWhileTheChildRunsAndPassesItsEnvironment() throws Exception {
        AtomicInteger beats = new AtomicInteger();
        List<String> results = sh("sleep 1.2; echo \"RESULT $GDASYNC_CHILD_JOB_TEST\"")
                .environment(Map.of("GDASYNC_CHILD_JOB_TEST", "here"))
                .run(beats::incrementAndGet);
        assertEquals(List.of("here"), results);
        assertTrue(beats.get() >= 2, "heartbeats: " + beats.get());
    }

    @Test
    void theDefaultEchoLeavesOutBlankLines() throws Exception {
        List<String> results = sh("echo; echo '   '; echo 'RESULT x'").run(NO_HEARTBEAT);
        assertEquals(List.of("x"), results);
    }
}
