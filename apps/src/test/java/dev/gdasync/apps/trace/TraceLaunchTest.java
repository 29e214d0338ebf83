package dev.gdasync.apps.trace;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gdasync.apps.testutil.Launcher;
import dev.gdasync.gdsync.testutil.ChildProcess.Finished;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The recording path end to end: two ranks under the launcher record with {@code pingpong --jfr DIR} (or
 * {@code mprun --jfr DIR}), and {@code scripts/trace DIR} turns the files into one trace JSON that has a process per
 * rank, the streams' and the CPU's tracks, the streams' waits, the doorbells, and flows whose both ends are events of
 * the trace.
 */
class TraceLaunchTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final Pattern WORK = Pattern.compile("\\[(\\d)] stats: rank \\1, NIC \\S+ .*?: (\\d+) work requests \\((\\d+) B\\)");

    @TempDir
    Path dir;

    @Test
    void aPingPongRecordedWithJfrBecomesOneTraceWithWaitsDoorbellsAndFlows() throws Exception {
        Path jfr = dir.resolve("jfr");
        Finished run = mprun("-np", "2", "pingpong", "--mode", "host,sa", "--sizes", "8", "--iters", "200", "--reps", "1",
                "--warmup", "0.2", "--jfr", jfr.toString(), "--stats");
        assertEquals(0, run.status(), run.all());
        assertTrue(Files.isRegularFile(jfr.resolve("rank-0.jfr")), run.all());
        assertTrue(Files.isRegularFile(jfr.resolve("rank-1.jfr")), run.all());
        // --stats: each rank's NIC counted the messages of both modes; 200 round trips of 8 B at least.
        Matcher m = WORK.matcher(run.out());
        Set<String> ranks = new HashSet<>();
        while (m.find()) {
            ranks.add(m.group(1));
            long requests = Long.parseLong(m.group(2));
            assertTrue(requests >= 400, run.out());
            assertEquals(8 * requests, Long.parseLong(m.group(3)), "every message is 8 bytes: " + run.out());
        }
        assertEquals(Set.of("0", "1"), ranks, run.out());

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Path png = dir.resolve("timeline.png");
        PrintStream outs = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream errs = new PrintStream(err, true, StandardCharsets.UTF_8);
        // Everything: the host mode's iterations may lie far from the end on a busy machine.
        int status = Trace.run(new String[]{jfr.toString(), "--all", "--png", png.toString(), "--png-us", "40"}, outs, errs);
        assertEquals(0, status, err.toString(StandardCharsets.UTF_8));
        BufferedImage image = ImageIO.read(png.toFile());
        assertNotNull(image, "a PNG");

        JsonNode trace = new ObjectMapper().readTree(jfr.resolve("trace.json").toFile());
        TraceChecks checks = new TraceChecks(trace);
        assertEquals(Set.of(0, 1), checks.processes());
        for (int r = 0; r < 2; r++) {
            String stream = "gdasync-stream-pingpong-sa-rank" + r;
            assertTrue(checks.threadNames(r).contains(stream), checks.threadNames(r).toString());
            assertTrue(checks.threadNames(r).contains("main"), "the CPU thread of the host mode: " + checks.threadNames(r));
            assertTrue(checks.count(r, stream, "X", "wait recv CQ of QP ") > 0, "the stream's waits on rank " + r);
            assertTrue(checks.count(r, stream, "i", "doorbell QP ") > 0, "the stream's doorbells on rank " + r);
            assertTrue(checks.count(r, "main", "i", "doorbell QP ") > 0, "the CPU's doorbells (host mode) on rank " + r);
            assertTrue(checks.count(r, "main", "i", "reaped recv #") > 0, "the CPU's reaps on rank " + r);
        }
        checks.assertFlowsBound();
        assertTrue(checks.flows("doorbell") > 0, "doorbell flows");
        assertTrue(checks.crossRankFlows("message") > 0, "a send's flow reaches the other rank");
        checks.assertTimesOrdered();

        // The default kind of trace: a window up to the end of the last work request, and nothing outside it.
        Path window = dir.resolve("window.json");
        assertEquals(0, Trace.run(new String[]{jfr.toString(), "--window-us", "1000", "-o", window.toString()}, outs, errs),
                err.toString(StandardCharsets.UTF_8));
        JsonNode windowed = new ObjectMapper().readTree(window.toFile());
        int kept = 0;
        for (JsonNode e : windowed.get("traceEvents")) {
            String ph = e.get("ph").asText();
            if (ph.equals("X") || ph.equals("i")) {
                double end = e.get("ts").asDouble() + (e.has("dur") ? e.get("dur").asDouble() : 0);
                assertTrue(end >= 0 && e.get("ts").asDouble() <= 1000.0 + 1e-6, "outside the window: " + e);
                kept++;
            }
        }
        assertTrue(kept > 0, "the window ends with the last work request, which it holds");
        new TraceChecks(windowed).assertFlowsBound();
    }

    @Test
    void theLauncherRecordsEveryRankFromJvmOptions() throws Exception {
        Path jfr = dir.resolve("launcher");
        Finished run = mprun("-np", "2", "--jfr", jfr.toString(), "pingpong", "--mode", "sa", "--sizes", "8",
                "--iters", "100",
                "--reps", "1", "--warmup", "0.1");
        assertEquals(0, run.status(), run.all());
        assertTrue(Files.isRegularFile(jfr.resolve("gdasync.jfc")), "the settings file the ranks started with");
        for (int r = 0; r < 2; r++) {
            Path file = jfr.resolve("rank-" + r + ".jfr");
            assertTrue(Files.isRegularFile(file), run.all());
            Map<String, Integer> counts = new HashMap<>();
            for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
                counts.merge(e.getEventType().getName(), 1, Integer::sum);
            }
            // 100 round trips and a warm-up: the stream waited and rang at least that often.
            assertTrue(counts.getOrDefault("dev.gdasync.StreamWait", 0) >= 100, counts.toString());
            assertTrue(counts.getOrDefault("dev.gdasync.DoorbellRung", 0) >= 100, counts.toString());
            assertTrue(counts.getOrDefault("dev.gdasync.RequestState", 0) >= 100, counts.toString());
        }
    }

    @Test
    void aFolderThatIsNotAFolderIsRefusedBeforeAnyRankStarts() throws Exception {
        Path file = Files.writeString(dir.resolve("plain"), "x");
        Finished run = mprun("-np", "2", "--jfr", file.toString(), "pingpong", "--mode", "sa");
        assertEquals(2, run.status(), run.all());
        assertTrue(run.err().contains("is a file, not a folder"), run.all());
        assertEquals("x", Files.readString(file));
    }

    /** @return the launcher's run to its end, without MPJ_HOME (killed, failing the test, after 120 s) */
    private static Finished mprun(String... args) {
        return Launcher.mprun(args).removeEnvironment(k -> k.equals("MPJ_HOME")).run(TIMEOUT);
    }
}
