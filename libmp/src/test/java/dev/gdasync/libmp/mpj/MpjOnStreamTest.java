package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import dev.gdasync.libmp.testutil.MpjPrograms;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link MpjOnStream}'s stream-triggered sends and waits in MPJ Express programs over gdasync, started by the launcher
 * with {@code --mpj} as real JVMs: stream sends received by plain MPJ receives, in order with CPU sends on the same tag;
 * a ping-pong driven by a stream; bad arguments; a rank killed while streams wait for it; and the guide's example.
 * Without MPJ Express the tests are skipped with the reason.
 */
@Timeout(240)
class MpjOnStreamTest {

    /**
     * Every case of {@link MpjStreamMain} on 2 ranks, with the default settings, then with 2 slots (the stream's waits
     * for the receiver's credits happen all the time).
     */
    @Test
    void streamSendsAndWaitsMixWithMpjCallsInOrderAndByteExact() {
        Map<String, String> env = MpjOverGdasyncTest.mpjEnv();
        List<String> cases = List.of("order", "pingpong", "badargs", "truncated", "cancelled");
        for (List<String> settings : List.of(List.<String>of(), List.of("-D" + GdasyncDevice.SLOTS_PROPERTY + "=2"))) {
            List<String> a = new ArrayList<>();
            for (String d : settings) {
                a.addAll(List.of("--jvm-opt", d));
            }
            a.addAll(List.of("-np", "2", "--mpj", MpjStreamMain.class.getName()));
            // badargs expects the default slot size in its message
            List<String> run = settings.isEmpty() ? cases : List.of("order", "pingpong");
            a.addAll(run);
            try (ChildProcess mprun = MpRunProcess.start(env, a.toArray(String[]::new))) {
                int status = mprun.awaitExit(MpjOverGdasyncTest.WAIT);
                List<String> problems = MpjPrograms.conformanceProblems(mprun, 2, run);
                assertTrue(problems.isEmpty(), settings + ":\n" + String.join("\n", problems) + "\n" + mprun.describe());
                assertEquals(0, status, settings + ": " + mprun.describe());
            }
        }
    }

    /**
     * Rank 1 killed while rank 0's stream waits for a receive from it and rank 2's stream waits for a free slot of it:
     * both streams fail with an error naming rank 1 and saying its process is gone, and each survivor's next MPJ call
     * fails the same way. How long each took is printed (not checked: the machine's load decides it).
     */
    @Test
    void aKilledRankFailsTheStreamsWaitingForItNamingIt() throws Exception {
        Map<String, String> env = MpjOverGdasyncTest.mpjEnv();
        try (ChildProcess mprun = MpRunProcess.start(env, "--jvm-opt", "-D" + GdasyncDevice.SLOTS_PROPERTY + "=2",
                "-np", "3", "--grace", "20", "--mpj", MpjStreamVictimMain.class.getName())) {
            List<Long> pids = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                int rank = r;
                String line = mprun.awaitLine(l -> l.startsWith("[" + rank + "] ready "), MpjOverGdasyncTest.WAIT);
                pids.add(Long.parseLong(line.substring(line.lastIndexOf(' ') + 1)));
            }
            Thread.sleep(300); // the survivors go from their "ready" line into their streams' waits
            long killedAt = System.nanoTime();
            assertTrue(ProcessHandle.of(pids.get(1)).orElseThrow().destroyForcibly());
            for (int r : new int[] {0, 2}) {
                int rank = r;
                String prefix = "[" + r + "] FAILED stream ";
                String line = mprun.awaitLine(l -> l.startsWith(prefix) || l.startsWith("[" + rank + "] RETURNED"),
                        MpjOverGdasyncTest.WAIT);
                assertTrue(line.startsWith(prefix), "rank " + r + "'s stream must fail: " + mprun.describe());
                String[] parts = line.substring(prefix.length()).split(" ", 2);
                long ms = (Long.parseLong(parts[0]) - killedAt) / 1_000_000;
                System.out.println("MpjOnStreamTest: rank " + r + "'s stream failed " + ms + " ms after the kill: "
                        + parts[1]);
                // The bootstrap's news ("rank 1's process is gone") or the queue pair's flush, whichever came first
                // ("receive from rank 1 ... the peer's process is gone"), as for the device's CPU calls.
                assertTrue(parts[1].contains("rank 1") && (parts[1].contains("rank 1's process is gone")
                        || parts[1].contains("the peer's process is gone")), "the stream's failure names the killed "
                        + "rank: " + line);
                assertTrue(parts[1].contains(r == 0 ? "RECEIVE from rank 1 tag 99" : "stopped waiting for a free receive "
                        + "slot of rank 1"), "the failure says what the stream waited for: " + line);
                String later = mprun.awaitLine(l -> l.startsWith("[" + rank + "] LATER-"), MpjOverGdasyncTest.WAIT);
                assertTrue(later.startsWith("[" + r + "] LATER-FAILED ") && later.contains("rank 1"),
                        "a later call fails too, naming the killed rank: " + later);
            }
            assertTrue(mprun.awaitExit(MpjOverGdasyncTest.WAIT) != 0, mprun.describe());
            assertTrue(mprun.stdout().stream().noneMatch(l -> l.contains("FAIL:")), mprun.describe());
        }
    }

    @Test
    void theGuidesStreamExampleRunsAsShown() throws Exception {
        MpjOverGdasyncTest.runGuideExample(demo.mpj.MpjStreamExchange.class, "stream");
    }
}
