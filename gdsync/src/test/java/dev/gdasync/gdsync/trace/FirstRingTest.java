package dev.gdasync.gdsync.trace;

import dev.gdasync.gdsync.cuda.FakeCuda;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The first ring of a fresh JVM runs inline, as every later one: the event classes' first use (loading, registering
 * with the flight recorder) happens when the queue pair's class initializes ({@link TraceEvents}), not between the
 * doorbell stores and the call, where it outlasted the agent's grace and the agent took the ring. A JVM descheduled
 * there for as long may still see the agent take it, so three fresh JVMs get the chance; with the cost back on the
 * first ring every one of them fails.
 */
class FirstRingTest {
    private static final int TRIES = 3;

    @TempDir
    Path tmp;

    @Test
    void theFirstPostOfAFreshJvmRunsInline() {
        List<String> seen = new ArrayList<>();
        for (int i = 0; i < TRIES; i++) {
            FakeCuda.Child child = FakeCuda.runChild(tmp, List.of(), FirstRingProbe.class, tmp.toString());
            assertEquals(0, child.exitCode(), child.toString());
            String out = child.stdout().strip();
            if (out.startsWith("recv=1 send=1 ") && out.contains("doorbells 1 inline / 0 agent")) {
                return;
            }
            seen.add(out);
        }
        fail("the first post never ran inline in " + TRIES + " fresh JVMs: " + seen);
    }
}
