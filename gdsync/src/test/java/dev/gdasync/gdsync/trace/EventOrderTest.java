package dev.gdasync.gdsync.trace;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.swnic.NicPair;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.gdsync.swnic.core.SwQueuePair;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Predicate;

import static dev.gdasync.gdsync.swnic.NicPair.awaitOne;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * One stream-asynchronous send over shared memory, recorded with the project's settings and read back with
 * {@code jdk.jfr.consumer}: the events come in the order docs/observability.md gives, on the threads it names, with
 * the fields that tie them together (queue pair tokens, the request's sequence, the peer's receive, the CQE index).
 */
class EventOrderTest {
    @TempDir
    Path base;

    @Test
    void oneStreamSendRecordsItsStepsInOrder() throws Exception {
        List<RecordedEvent> events;
        long tokenA;
        long tokenB;
        try (NicPair p = new NicPair(() -> SoftwareNic.open(SwNicConfig.defaults().withShmBase(base).withJobId("order")),
                QueuePairConfig.DEFAULT, 4096, Access.ALL, Access.ALL);
             HostStream sender = HostStream.create("sender");
             HostStream receiver = HostStream.create("receiver");
             Recording recording = new Recording(TraceSettings.configuration())) {
            tokenA = ((SwQueuePair) p.qa).token();
            tokenB = ((SwQueuePair) p.qb).token();
            recording.start();
            // Twice: a thread's first event in a recording costs more (its buffers), and the checks are on the second.
            for (int i = 0; i < 2; i++) {
                p.qb.postRecv(new RecvWorkRequest().wrId(10 + i).sge(p.mb, 1024, 64));
                WaitRequest arrived = p.qb.prepareWaitCq(p.qb.recvCq());
                receiver.post(List.of(new Descriptor.Wait(arrived)));
                SendRequest send = p.qa.prepareSend(new SendWorkRequest().wrId(20 + i).sge(p.ma, 0, 8));
                WaitRequest sent = p.qa.prepareWaitCq(p.qa.sendCq());
                sender.post(List.of(new Descriptor.Send(send), new Descriptor.Wait(sent)));
                sender.synchronize();
                receiver.synchronize();
                assertTrue(awaitOne(p.qa.sendCq()).isSuccess());
                assertTrue(awaitOne(p.qb.recvCq()).isSuccess());
            }
            recording.stop();
            Path file = base.resolve("order.jfr");
            recording.dump(file);
            events = read(file);
        }

        // The second exchange: request 1, CQEs 1.
        RecordedEvent rung = only(events, DoorbellRungEvent.NAME, e -> e.getLong("queuePairToken") == tokenA
                && e.getLong("producerIndex") == 2);
        RecordedEvent noticed = only(events, DoorbellNoticedEvent.NAME, e -> e.getLong("queuePairToken") == tokenA
                && e.getLong("firstRequest") == 1);
        RecordedEvent work = only(events, WorkRequestEvent.NAME, e -> e.getLong("queuePairToken") == tokenA
                && e.getLong("sequence") == 1);
        RecordedEvent recvWritten = only(events, CompletionWrittenEvent.NAME, e -> e.getString("queue").equals("recv")
                && e.getLong("index") == 1);
        RecordedEvent sendWritten = only(events, CompletionWrittenEvent.NAME, e -> e.getString("queue").equals("send")
                && e.getLong("index") == 1);
        RecordedEvent senderWait = only(events, StreamWaitEvent.NAME, e -> e.getLong("queuePairToken") == tokenA
                && e.getLong("cqe") == 1);
        RecordedEvent receiverWait = only(events, StreamWaitEvent.NAME, e -> e.getLong("queuePairToken") == tokenB
                && e.getLong("cqe") == 1);
        RecordedEvent sendReaped = only(events, CompletionReapedEvent.NAME, e -> e.getString("queue").equals("send")
                && e.getLong("index") == 1);
        RecordedEvent recvReaped = only(events, CompletionReapedEvent.NAME, e -> e.getString("queue").equals("recv")
                && e.getLong("index") == 1);
        RecordedEvent senderBatch = events.stream().filter(e -> e.getEventType().getName().equals(MemopBatchEvent.NAME)
                && thread(e).equals("gdasync-stream-sender")).toList().getLast();

        // The fields that tie the steps together.
        // The stream rings by a call and runs the send itself; only if it was descheduled for longer than the agent's
        // grace (50 us) between its doorbell stores and its call does the agent run it.
        String by = noticed.getString("noticedBy");
        assertTrue(by.equals("inline") || by.equals("agent"), by);
        boolean inline = by.equals("inline");
        assertEquals(1, noticed.getInt("requests"));
        assertEquals("SEND", work.getString("opcode"));
        assertEquals("shm", work.getString("transport"));
        assertEquals("DONE", work.getString("outcome"));
        assertEquals(8, work.getInt("bytes"));
        assertEquals(tokenB, work.getLong("peerToken"));
        assertEquals(1, work.getLong("peerReceive"));
        assertEquals(tokenB, recvWritten.getLong("queuePairToken"));
        assertEquals(11, recvWritten.getLong("wrId"));
        assertEquals(tokenA, sendWritten.getLong("queuePairToken"));
        assertEquals(21, sendWritten.getLong("wrId"));
        assertEquals("recv CQ of QP " + recvWritten.getInt("queuePair"), receiverWait.getString("completionQueue"));
        assertEquals(4, senderBatch.getInt("memops"), "the send's two stores, the wait and its release");
        assertEquals(8, recvReaped.getInt("bytes"));

        // The threads: the sender's stream rings and (inline) runs the send; the CPU reaps.
        for (RecordedEvent e : List.of(rung, senderWait)) {
            assertEquals("gdasync-stream-sender", thread(e), e.getEventType().getName());
        }
        for (RecordedEvent e : List.of(noticed, work, recvWritten, sendWritten)) {
            String expected = inline ? "gdasync-stream-sender" : thread(e).startsWith("gdasync-agent-") ? thread(e) : "the agent";
            assertEquals(expected, thread(e), e.getEventType().getName());
        }
        assertEquals("gdasync-stream-receiver", thread(receiverWait));
        assertEquals(Thread.currentThread().getName(), thread(sendReaped));

        // The order on the sender's stream: the batch begins, the doorbell is rung and noticed, the request runs and
        // writes the peer's receive CQE then its own send CQE, the stream waits for that and the batch ends.
        inOrder(senderBatch.getStartTime(), rung.getStartTime(), senderWait.getStartTime(), senderWait.getEndTime(),
                senderBatch.getEndTime());
        inOrder(senderBatch.getStartTime(), noticed.getStartTime(), work.getStartTime(), recvWritten.getStartTime(),
                sendWritten.getStartTime(), work.getEndTime(), noticed.getEndTime(), senderWait.getEndTime());
        if (inline) {
            inOrder(rung.getStartTime(), noticed.getStartTime(), noticed.getEndTime(), senderWait.getStartTime());
        }
        // The receiver's wait ends once its CQE is written (it may have begun after: its stream may wake late); the CPU
        // reaps after both.
        inOrder(recvWritten.getStartTime(), receiverWait.getEndTime(), recvReaped.getStartTime());
        inOrder(sendWritten.getStartTime(), sendReaped.getStartTime());
    }

    private static String thread(RecordedEvent e) {
        return e.getThread() == null ? "" : e.getThread().getJavaName();
    }

    private static void inOrder(Instant... times) {
        for (int i = 1; i < times.length; i++) {
            if (times[i].isBefore(times[i - 1])) {
                fail("step " + i + " at " + times[i] + " is before step " + (i - 1) + " at " + times[i - 1]);
            }
        }
    }

    private static RecordedEvent only(List<RecordedEvent> events, String name, Predicate<RecordedEvent> which) {
        List<RecordedEvent> found = events.stream().filter(e -> e.getEventType().getName().equals(name)).filter(which).toList();
        assertFalse(found.isEmpty(), "no " + name + " event among " + names(events));
        assertEquals(1, found.size(), name + ": " + found);
        return found.getFirst();
    }

    private static List<String> names(List<RecordedEvent> events) {
        return events.stream().map(e -> e.getEventType().getName()).toList();
    }

    private static List<RecordedEvent> read(Path file) throws IOException {
        List<RecordedEvent> out = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (e.getEventType().getName().startsWith("dev.gdasync.")) {
                out.add(e);
            }
        }
        out.sort(Comparator.comparing(RecordedEvent::getStartTime));
        return out;
    }
}
