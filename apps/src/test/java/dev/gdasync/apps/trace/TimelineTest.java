package dev.gdasync.apps.trace;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The timeline's layout and flows on a scripted exchange of events (no recording): rank 0's stream rings a send that
 * consumes rank 1's receive 7, which rank 1's stream was waiting for; and the trace JSON written from it.
 */
class TimelineTest {
    private static final long TOKEN_A = 0x1111L;
    private static final long TOKEN_B = 0x2222L;
    private static final long T0 = 1_700_000_000_000_000_000L;

    @TempDir
    Path dir;

    private static TimelineEvent event(int rank, String type, long thread, String threadName, long start, long dur,
                                       Object... fields) {
        Map<String, Object> f = new LinkedHashMap<>();
        for (int i = 0; i < fields.length; i += 2) {
            f.put((String) fields[i], fields[i + 1]);
        }
        return new TimelineEvent(rank, "dev.gdasync." + type, type, thread, threadName, T0 + start, dur, f);
    }

    private static List<TimelineEvent> exchange() {
        List<TimelineEvent> e = new ArrayList<>();
        e.add(event(1, "StreamWait", 21, "stream-1", 0, 900, "word", "validity", "value", 8L, "condition", "GEQ",
                "completionQueue", "recv CQ of QP 1", "queuePairToken", TOKEN_B, "cqe", 7L));
        e.add(event(0, "MemopBatch", 11, "stream-0", 100, 700, "memops", 2));
        e.add(event(0, "DoorbellRung", 11, "stream-0", 200, 0, "provider", "swnic", "queuePair", 1, "queuePairToken", TOKEN_A,
                "producerIndex", 6L));
        e.add(event(0, "DoorbellNoticed", 11, "stream-0", 250, 500, "provider", "swnic", "queuePair", 1,
                "queuePairToken", TOKEN_A, "firstRequest", 5L, "requests", 1, "noticedBy", "inline"));
        e.add(event(0, "WorkRequest", 11, "stream-0", 300, 400, "queuePair", 1, "queuePairToken", TOKEN_A, "sequence", 5L,
                "opcode", "SEND", "bytes", 8, "transport", "shm", "outcome", "DONE", "peerToken", TOKEN_B, "peerReceive", 7L));
        e.add(event(0, "CompletionWritten", 11, "stream-0", 600, 0, "provider", "swnic", "queuePair", 1, "queuePairToken",
                TOKEN_B, "queue", "recv", "index", 7L, "opcode", "RECV", "status", "SUCCESS", "bytes", 8, "wrId", 3L));
        e.add(event(1, "CompletionReaped", 1, "main", 1500, 0, "provider", "swnic", "queuePair", 1, "queuePairToken", TOKEN_B,
                "queue", "recv", "index", 7L, "opcode", "RECV", "status", "SUCCESS", "bytes", 8, "wrId", 3L));
        // A doorbell whose work is outside the window: no flow.
        e.add(event(0, "DoorbellRung", 1, "main", 1600, 0, "provider", "swnic", "queuePair", 1, "queuePairToken", TOKEN_A,
                "producerIndex", 99L));
        e.sort((a, b) -> Long.compare(a.startNanos(), b.startNanos()));
        return e;
    }

    @Test
    void anInstantBelongsToTheWindowOfItsMomentNotOfItsCommit() {
        // A CQE's written event begins before the write and commits after it: begun 23 us before the window's start and
        // committed inside the window (a preempted thread), it overlaps the window, yet its moment is outside it.
        List<TimelineEvent> e = new ArrayList<>();
        e.add(event(0, "CompletionWritten", 11, "nic", -23_399, 30_000, "provider", "swnic", "queuePair", 1,
                "queuePairToken", TOKEN_A, "queue", "send", "index", 1198L, "opcode", "SEND", "status", "SUCCESS",
                "bytes", 8, "wrId", 1L));
        e.add(event(0, "CompletionWritten", 11, "nic", 100, 50, "provider", "swnic", "queuePair", 1,
                "queuePairToken", TOKEN_A, "queue", "send", "index", 1199L, "opcode", "SEND", "status", "SUCCESS",
                "bytes", 8, "wrId", 2L));
        e.add(event(0, "WorkRequest", 11, "nic", -500, 1000, "queuePair", 1, "queuePairToken", TOKEN_A, "sequence", 5L,
                "opcode", "SEND", "bytes", 8, "transport", "shm", "outcome", "DONE"));
        Timeline t = Timeline.of(e, T0, T0 + 2000);
        List<String> kept = t.items().stream().map(i -> i.event().shortType() + " #"
                + i.event().number(i.event().shortType().equals("WorkRequest") ? "sequence" : "index", -1)).sorted().toList();
        assertEquals(List.of("CompletionWritten #1199", "WorkRequest #5"), kept,
                "the instant of the window and the span that overlaps it; not the instant begun before it");
    }

    @Test
    void tracksAreThreadsOfRanksAndFlowsTieADoorbellToItsWorkAndASendToTheReceiversWait() {
        Timeline t = Timeline.of(exchange(), T0, T0 + 2000);
        assertEquals(List.of("stream-0", "main", "stream-1", "main"), t.tracks().stream().map(Timeline.Track::name).toList());
        assertEquals(List.of(0, 0, 1, 1), t.tracks().stream().map(Timeline.Track::rank).toList());
        assertEquals(2, t.flows().size(), t.flows().toString());
        Timeline.Flow doorbell = t.flows().get(0);
        assertEquals("doorbell", doorbell.kind());
        assertEquals("DoorbellRung", doorbell.from().event().shortType());
        assertEquals("SEND 8 B #5 shm", doorbell.to().name());
        Timeline.Flow message = t.flows().get(1);
        assertEquals("message", message.kind());
        assertEquals(0, message.from().track().rank());
        // The receiver's stream wait, not the later reap: the wait is where the stream saw it.
        assertEquals("wait recv CQ of QP 1 #7", message.to().name());
        assertEquals(1, message.to().track().rank());
        assertEquals(Timeline.Shape.INSTANT, doorbell.from().shape());
        assertEquals(Timeline.Shape.SPAN, message.to().shape());
    }

    @Test
    void withoutTheReceiversWaitTheFlowEndsAtTheReap() {
        List<TimelineEvent> events = new ArrayList<>(exchange());
        events.removeIf(e -> e.shortType().equals("StreamWait"));
        Timeline t = Timeline.of(events, T0, T0 + 2000);
        Timeline.Flow message = t.flows().stream().filter(f -> f.kind().equals("message")).findFirst().orElseThrow();
        assertEquals("reaped recv #7", message.to().name());
    }

    @Test
    void theJsonHasAProcessPerRankNamedThreadsSpansInstantsAndBoundFlows() throws Exception {
        Path file = dir.resolve("t.json");
        ChromeTrace.write(Timeline.of(exchange(), T0, T0 + 2000), List.of(0, 1, 2), file);
        JsonNode root = new ObjectMapper().readTree(file.toFile());
        TraceChecks checks = new TraceChecks(root);
        assertEquals(java.util.Set.of(0, 1, 2), checks.processes(), "rank 2 recorded nothing in the window, and still has its process");
        assertEquals(java.util.Set.of("stream-0", "main"), checks.threadNames(0));
        assertEquals(1, checks.count(1, "stream-1", "X", "wait recv CQ of QP 1 #7"));
        assertEquals(3, checks.count(0, "stream-0", "X", ""), "the batch, the drain and the work request");
        assertEquals(2, checks.count(0, "stream-0", "i", ""), "the doorbell and the receive CQE written");
        checks.assertFlowsBound();
        checks.assertTimesOrdered();
        assertEquals(1, checks.flows("doorbell"));
        assertEquals(1, checks.crossRankFlows("message"));
        // Times in microseconds from the window's start, to the nanosecond; the fields in args.
        JsonNode work = null;
        for (JsonNode e : root.get("traceEvents")) {
            if (e.get("name").asText().startsWith("SEND")) {
                work = e;
            }
        }
        assertEquals(0.3, work.get("ts").asDouble(), 1e-9);
        assertEquals(0.4, work.get("dur").asDouble(), 1e-9);
        assertEquals(TOKEN_B, work.get("args").get("peerToken").asLong());
        assertEquals("dev.gdasync.WorkRequest", work.get("args").get("event").asText());
    }

    @Test
    void aFolderWithoutRecordingsIsRefusedAndNothingIsWritten() throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream errs = new PrintStream(err, true, StandardCharsets.UTF_8);
        PrintStream outs = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertEquals(1, Trace.run(new String[]{dir.toString()}, outs, errs));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("no rank-N.jfr file in " + dir), err.toString(StandardCharsets.UTF_8));
        assertFalse(Files.exists(dir.resolve("trace.json")));

        err.reset();
        assertEquals(1, Trace.run(new String[]{dir.resolve("missing").toString()}, outs, errs));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("is not a folder"), err.toString(StandardCharsets.UTF_8));

        err.reset();
        assertEquals(2, Trace.run(new String[]{dir.toString(), "--all", "--window-us", "5"}, outs, errs));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("--all and --window-us"), err.toString(StandardCharsets.UTF_8));

        err.reset();
        assertEquals(2, Trace.run(new String[]{dir.toString(), "--window-us", "-3"}, outs, errs));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("microseconds"), err.toString(StandardCharsets.UTF_8));
        assertFalse(Files.exists(dir.resolve("trace.json")));
    }
}
