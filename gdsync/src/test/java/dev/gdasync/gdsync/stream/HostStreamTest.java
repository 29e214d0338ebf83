package dev.gdasync.gdsync.stream;

import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.SenderReceiver;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.memop.WaitTimeoutException;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HostStreamTest {
    /** Waits that must succeed get a long timeout, so that only a real hang fails them. */
    private static final WaitPolicy PATIENT = WaitPolicy.lowLatency(Duration.ofSeconds(20));
    /** Waits that must time out. */
    private static final WaitPolicy SHORT = WaitPolicy.lowLatency(Duration.ofMillis(200));
    private static final Duration NO_HANG = Duration.ofSeconds(10);

    @TempDir
    Path base;
    private Arena arena;
    private MemorySegment seg;
    private final List<HostStream> streams = new ArrayList<>();
    private final List<CountDownLatch> gates = new ArrayList<>();
    private SenderReceiver nics;

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
        seg = arena.allocate(4096, 64);
    }

    @AfterEach
    void tearDown() {
        gates.forEach(CountDownLatch::countDown);
        streams.forEach(HostStream::close);
        if (nics != null) {
            nics.close();
        }
        arena.close();
    }

    private HostStream stream(String name, WaitPolicy policy) {
        HostStream s = HostStream.create(name, policy);
        streams.add(s);
        return s;
    }

    private MemoryWord word32(int index, String name) {
        return MemoryWord.word32(seg, 4L * index, name);
    }

    /** A task that blocks its stream until the returned latch is counted down. */
    private CountDownLatch gate(HostStream s) {
        CountDownLatch gate = new CountDownLatch(1);
        gates.add(gate);
        s.launch(() -> {
            try {
                if (!gate.await(20, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("gate never opened");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return gate;
    }

    /** Whether the named thread is now inside a method of the given name. */
    private static boolean isIn(String threadName, String method) {
        for (var entry : Thread.getAllStackTraces().entrySet()) {
            if (entry.getKey().getName().equals(threadName)) {
                for (StackTraceElement f : entry.getValue()) {
                    if (f.getMethodName().equals(method)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private static void assertContains(String s, String part) {
        assertTrue(s.contains(part), () -> "'" + s + "' lacks '" + part + "'");
    }

    // ---- order ----

    @Test
    void memopsTasksAndEventsRunInSubmissionOrder() {
        HostStream s = stream("order", PATIENT);
        MemoryWord w = word32(0, "w");
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        s.launch(() -> order.add("t1 " + w.getAcquire32()));
        s.post(MemopBatch.of(new Memop.Write32(w, 42, true)));
        s.launch(() -> order.add("t2 " + w.getAcquire32()));
        Event e1 = s.record();
        s.launch(() -> order.add("t3 " + e1.isDone()));
        s.post(MemopBatch.of(new Memop.Write32(w, 43, false), new Memop.Wait32(w, 43, WaitCondition.EQ)));
        s.launch(() -> order.add("t4 " + w.getAcquire32()));
        s.post(MemopBatch.of(new Memop.Write32(w, 44, true)));
        s.synchronize();
        assertEquals(List.of("t1 0", "t2 42", "t3 true", "t4 43"), order);
        assertEquals(44, w.getAcquire32());
        assertTrue(e1.isDone());
        assertNull(s.failure());
    }

    @Test
    void manyItemsKeepTheirOrder() {
        HostStream s = stream("many", PATIENT);
        MemoryWord w = word32(0, "seq");
        int[] counter = {0};
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 2_000; i++) {
            int expect = i;
            if (i % 2 == 0) {
                s.launch(() -> {
                    if (counter[0] != expect || w.getAcquire32() != expect) {
                        errors.add("task " + expect + " saw counter " + counter[0] + " word " + w.getAcquire32());
                    }
                    counter[0]++;
                });
            } else {
                s.post(MemopBatch.of(new Memop.Wait32(w, expect - 1, WaitCondition.EQ), new Memop.Write32(w, expect, true)));
                s.launch(() -> counter[0]++);
                // keep the word and counter in step: the task above moved counter to expect + 1
                s.post(MemopBatch.of(new Memop.Write32(w, expect + 1, true)));
            }
        }
        s.synchronize();
        assertEquals(List.of(), errors);
        assertEquals(2_000, counter[0]);
    }

    @Test
    void synchronizeReturnsAfterEverythingQueuedRan() {
        HostStream s = stream("sync", PATIENT);
        AtomicBoolean slowDone = new AtomicBoolean();
        MemoryWord w = word32(0, "w");
        s.launch(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            slowDone.set(true);
        });
        s.post(MemopBatch.of(new Memop.Write32(w, 7, true)));
        s.synchronize();
        assertTrue(slowDone.get());
        assertEquals(7, w.getAcquire32());
    }

    // ---- events ----

    @Test
    void eventCompletesWhenTheStreamReachesIt() {
        HostStream s = stream("events", PATIENT);
        CountDownLatch gate = gate(s);
        Event e = s.record();
        assertFalse(e.isDone());
        assertFalse(e.synchronize(Duration.ofMillis(50)), "not done while the stream is blocked before it");
        assertFalse(e.isDone());
        assertNull(e.failure());
        assertContains(e.toString(), "pending");

        gate.countDown();
        e.synchronize();
        assertTrue(e.isDone());
        assertNull(e.failure());
        assertTrue(e.synchronize(NO_HANG));
        assertContains(e.toString(), "complete");
    }

    @Test
    void eventSynchronizeWithTimeoutReturnsTrueOnceDone() {
        HostStream s = stream("events2", PATIENT);
        CountDownLatch gate = gate(s);
        Event e = s.record();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException ignored) {
                return;
            }
            gate.countDown();
        });
        assertTrue(e.synchronize(NO_HANG));
        assertTrue(e.isDone());
    }

    // ---- failure ----

    @Test
    void aWaitThatNeverCompletesFailsTheStream() {
        HostStream s = stream("timeouts", SHORT);
        MemoryWord flag = word32(3, "flag of the peer");
        flag.set32(5, true);
        AtomicBoolean after = new AtomicBoolean();
        s.post(MemopBatch.of(new Memop.Wait32(flag, 6, WaitCondition.EQ)));
        s.launch(() -> after.set(true));
        Event later = s.record();

        StreamFailedException e = assertThrows(StreamFailedException.class, s::synchronize);
        assertContains(e.getMessage(), "timeouts");
        WaitTimeoutException cause = assertInstanceOf(WaitTimeoutException.class, e.getCause());
        assertContains(cause.getMessage(), flag.toString());
        assertContains(cause.getMessage(), "flag of the peer");
        assertContains(cause.getMessage(), "wanted EQ 6");
        assertContains(cause.getMessage(), "last value seen 5");
        assertSame(flag, cause.word());
        assertEquals(6, cause.awaited());
        assertEquals(5, cause.seen());

        assertSame(cause, s.failure());
        assertFalse(after.get(), "work queued after the failed wait must not run");
        assertTrue(later.isDone());
        assertSame(cause, later.failure());
        StreamFailedException e2 = assertThrows(StreamFailedException.class, later::synchronize);
        assertSame(cause, e2.getCause());
        assertContains(s.toString(), "failed");
    }

    @Test
    void aFailedStreamRejectsNewWorkWithTheOriginalCause() {
        HostStream s = stream("failed", SHORT);
        MemoryWord flag = word32(0, "never");
        s.post(MemopBatch.of(new Memop.Wait32(flag, 1, WaitCondition.GEQ)));
        StreamFailedException first = assertThrows(StreamFailedException.class, s::synchronize);
        Throwable cause = first.getCause();
        assertInstanceOf(WaitTimeoutException.class, cause);

        MemopBatch batch = MemopBatch.of(new Memop.Write32(flag, 1, false));
        assertSame(cause, assertThrows(StreamFailedException.class, () -> s.post(batch)).getCause());
        assertSame(cause, assertThrows(StreamFailedException.class, () -> s.launch(() -> { })).getCause());
        assertSame(cause, assertThrows(StreamFailedException.class, s::record).getCause());
        assertSame(cause, assertThrows(StreamFailedException.class, s::synchronize).getCause());
        assertSame(cause, assertThrows(StreamFailedException.class,
                () -> s.post(List.of(new Descriptor.WriteValue32(flag, 1, 0)))).getCause());
        Event other = stream("other", PATIENT).record();
        assertSame(cause, assertThrows(StreamFailedException.class, () -> s.waitEvent(other)).getCause());
        assertEquals(0, flag.getAcquire32(), "nothing rejected ran");
        assertSame(cause, s.failure());
    }

    @Test
    void aTaskThatThrowsFailsTheStream() {
        HostStream s = stream("task-fails", PATIENT);
        RuntimeException boom = new IllegalArgumentException("boom in a kernel");
        CountDownLatch gate = gate(s);
        s.launch(() -> {
            throw boom;
        });
        AtomicBoolean after = new AtomicBoolean();
        s.launch(() -> after.set(true));
        Event e1 = s.record();
        Event e2 = s.record();
        gate.countDown();

        StreamFailedException e = assertThrows(StreamFailedException.class, e1::synchronize);
        assertSame(boom, e.getCause());
        assertContains(e.getMessage(), "task-fails");
        assertSame(boom, assertThrows(StreamFailedException.class, () -> e2.synchronize(NO_HANG)).getCause());
        assertTrue(e2.isDone());
        assertSame(boom, e1.failure());
        assertSame(boom, e2.failure());
        assertFalse(after.get());
        assertSame(boom, s.failure());
        assertSame(boom, assertThrows(StreamFailedException.class, () -> s.launch(() -> { })).getCause());
    }

    @Test
    void eventsRecordedBeforeTheFailureComplete() {
        HostStream s = stream("partial", PATIENT);
        Event before = s.record();
        s.launch(() -> {
            throw new IllegalStateException("x");
        });
        assertThrows(StreamFailedException.class, s::synchronize);
        assertTrue(before.isDone());
        assertNull(before.failure());
        before.synchronize();
    }

    // ---- independence and cross-stream waits ----

    @Test
    void streamsRunIndependently() {
        MemoryWord[] flags = new MemoryWord[3];
        HostStream[] blocked = new HostStream[3];
        for (int i = 0; i < 3; i++) {
            flags[i] = word32(i, "flag " + i);
            blocked[i] = stream("blocked-" + i, PATIENT);
            blocked[i].post(MemopBatch.of(new Memop.Wait32(flags[i], 1, WaitCondition.EQ)));
        }
        Event[] blockedDone = new Event[3];
        for (int i = 0; i < 3; i++) {
            blockedDone[i] = blocked[i].record();
        }
        for (int i = 0; i < 3; i++) {
            HostStream free = stream("free-" + i, PATIENT);
            MemoryWord w = word32(10 + i, "free word " + i);
            AtomicBoolean ran = new AtomicBoolean();
            free.post(MemopBatch.of(new Memop.Write32(w, 9, true)));
            free.launch(() -> ran.set(true));
            // the free streams finish while every blocked stream still waits (its timeout is 20 s)
            assertTrue(free.record().synchronize(NO_HANG), "free stream " + i + " was held up");
            assertTrue(ran.get());
            assertEquals(9, w.getAcquire32());
        }
        for (int i = 0; i < 3; i++) {
            assertFalse(blockedDone[i].isDone(), "blocked stream " + i + " went past its wait");
        }
        for (int i = 0; i < 3; i++) {
            flags[i].set32(1, true);
        }
        for (int i = 0; i < 3; i++) {
            assertTrue(blockedDone[i].synchronize(NO_HANG));
            blocked[i].synchronize();
        }
    }

    @Test
    void waitEventOrdersWorkAcrossStreams() {
        HostStream a = stream("a", PATIENT);
        HostStream b = stream("b", PATIENT);
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch gate = gate(a);
        a.launch(() -> order.add("a"));
        Event ea = a.record();
        b.waitEvent(ea);
        b.launch(() -> order.add("b"));
        Event eb = b.record();

        assertFalse(eb.synchronize(Duration.ofMillis(100)), "b went past its wait for a's event");
        assertEquals(List.of(), order);

        gate.countDown();
        b.synchronize();
        assertEquals(List.of("a", "b"), order);
        assertTrue(ea.isDone());
        assertTrue(eb.isDone());
        assertNull(b.failure());
    }

    @Test
    void waitEventOnACompletedEventDoesNotBlock() {
        HostStream a = stream("a2", PATIENT);
        HostStream b = stream("b2", PATIENT);
        Event ea = a.record();
        ea.synchronize();
        b.waitEvent(ea);
        AtomicBoolean ran = new AtomicBoolean();
        b.launch(() -> ran.set(true));
        b.synchronize();
        assertTrue(ran.get());
    }

    @Test
    void waitEventFailsIfTheOtherStreamFailed() {
        HostStream a = stream("producer", PATIENT);
        HostStream b = stream("consumer", PATIENT);
        RuntimeException boom = new IllegalStateException("producer kernel failed");
        CountDownLatch gate = gate(a);
        a.launch(() -> {
            throw boom;
        });
        Event ea = a.record();
        b.waitEvent(ea);
        AtomicBoolean ran = new AtomicBoolean();
        b.launch(() -> ran.set(true));
        gate.countDown();

        StreamFailedException e = assertThrows(StreamFailedException.class, b::synchronize);
        Throwable cause = e.getCause();
        assertNotNull(cause);
        assertContains(cause.getMessage(), "consumer");
        assertContains(cause.getMessage(), "failed");
        assertSame(boom, cause.getCause(), "the producer's failure is carried");
        assertFalse(ran.get());
        assertSame(cause, b.failure());
    }

    // ---- close ----

    @Test
    void closeAbandonsABlockedWaitWithoutHanging() throws Exception {
        // Few spins and yields, so the wait reaches its parks soon even on a loaded machine (a yield there can take
        // a whole time slice), and a long timeout, so it is still parked when the stream closes.
        HostStream s = stream("closing", new WaitPolicy(new BackoffPolicy(1_000, 10, 1_000, 50_000),
                Duration.ofSeconds(60).toNanos()));
        MemoryWord never = word32(0, "never written");
        CountDownLatch started = new CountDownLatch(1);
        s.launch(started::countDown);
        s.post(MemopBatch.of(new Memop.Wait32(never, 1, WaitCondition.EQ)));
        AtomicBoolean after = new AtomicBoolean();
        s.launch(() -> after.set(true));
        Event e = s.record();
        assertTrue(started.await(10, TimeUnit.SECONDS));
        // Blocked: past its spin and yield phases, parked inside the wait (abort is noticed at each park).
        assertTrue(SenderReceiver.within(() -> isIn("gdasync-stream-closing", "await32")
                        && isIn("gdasync-stream-closing", "parkNanos"), 20_000),
                "the stream never blocked in its wait");

        long t0 = System.nanoTime();
        s.close();
        long closeNanos = System.nanoTime() - t0;
        assertTrue(closeNanos < 1_000_000_000L, "close took " + closeNanos / 1_000_000 + " ms");

        assertFalse(after.get(), "work queued behind the abandoned wait ran");
        assertTrue(e.isDone(), "a queued event must fail, not stay pending");
        assertNotNull(e.failure());
        assertThrows(StreamFailedException.class, e::synchronize);
        assertNull(s.failure(), "closing a stream is not a failure");
        assertContains(e.failure().getMessage(), "closed");

        var ex = assertThrows(IllegalStateException.class, () -> s.post(MemopBatch.of(new Memop.Write32(never, 1, false))));
        assertContains(ex.getMessage(), "closed");
        assertThrows(IllegalStateException.class, () -> s.launch(() -> { }));
        assertThrows(IllegalStateException.class, s::record);
        assertThrows(IllegalStateException.class, () -> s.waitEvent(e));
        assertThrows(IllegalStateException.class, () -> s.post(List.of(new Descriptor.WriteValue32(never, 1, 0))));
        s.close(); // twice: nothing
        assertEquals(0, never.getAcquire32());
    }

    @Test
    void abortEndsAWaitInProgressAndFailsTheStreamWithItsCause() throws Exception {
        // A timeout far beyond the event's bound: only the abort ends the wait in time.
        HostStream s = stream("aborted", WaitPolicy.lowLatency(Duration.ofHours(1)));
        MemoryWord never = word32(0, "never written: its writer died");
        CountDownLatch started = new CountDownLatch(1);
        s.launch(started::countDown);
        s.post(MemopBatch.of(new Memop.Wait32(never, 1, WaitCondition.EQ)));
        AtomicBoolean after = new AtomicBoolean();
        s.launch(() -> after.set(true));
        Event e = s.record();
        assertTrue(started.await(10, TimeUnit.SECONDS));

        IllegalStateException why = new IllegalStateException("the job failed: rank 1's process is gone");
        assertTrue(s.abort(why));
        StreamFailedException ex = assertThrows(StreamFailedException.class, () -> e.synchronize(NO_HANG));
        assertSame(why, ex.getCause());
        assertSame(why, s.failure());
        assertFalse(after.get(), "work queued behind the aborted wait must not run");
        assertSame(why, assertThrows(StreamFailedException.class, s::record).getCause());
        assertFalse(s.abort(new IllegalStateException("later")), "the first failure is kept");
        assertSame(why, s.failure());
        assertEquals(0, never.getAcquire32());
    }

    @Test
    void abortEndsAWaitForAnotherStreamsEventAndIsIgnoredOnceClosed() {
        HostStream a = stream("slow-writer", PATIENT);
        HostStream b = stream("abort-waiter", WaitPolicy.lowLatency(Duration.ofHours(1)));
        gate(a);
        Event ea = a.record();
        b.waitEvent(ea);
        Event eb = b.record();
        RuntimeException why = new RuntimeException("aborted from outside");
        assertTrue(b.abort(why));
        assertSame(why, assertThrows(StreamFailedException.class, () -> eb.synchronize(NO_HANG)).getCause());
        assertFalse(ea.isDone(), "the other stream is not affected");

        HostStream c = stream("closed-first", PATIENT);
        c.close();
        assertFalse(c.abort(why), "a closed stream stays closed, not failed");
        assertNull(c.failure());
        assertThrows(NullPointerException.class, () -> a.abort(null));
    }

    @Test
    void closeAbandonsAWaitForAnotherStreamsEvent() {
        HostStream a = stream("slow", PATIENT);
        HostStream b = stream("waiter", PATIENT);
        gate(a);
        Event ea = a.record();
        b.waitEvent(ea);
        Event eb = b.record();
        long t0 = System.nanoTime();
        b.close();
        assertTrue(System.nanoTime() - t0 < 1_000_000_000L);
        assertTrue(eb.isDone());
        assertNotNull(eb.failure());
    }

    @Test
    void closeDropsQueuedWork() throws Exception {
        HostStream s = stream("drop", PATIENT);
        CountDownLatch inTask = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        gates.add(release);
        s.launch(() -> {
            inTask.countDown();
            try {
                release.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        });
        AtomicBoolean queuedRan = new AtomicBoolean();
        s.launch(() -> queuedRan.set(true));
        Event queued = s.record();
        assertTrue(inTask.await(10, TimeUnit.SECONDS));

        Thread closer = Thread.ofPlatform().start(s::close);
        long end = System.nanoTime() + 10_000_000_000L;
        while (!s.toString().contains("closed") && System.nanoTime() < end) {
            Thread.onSpinWait();
        }
        assertContains(s.toString(), "closed");
        release.countDown();
        closer.join(10_000);
        assertFalse(closer.isAlive(), "close hung");

        assertFalse(queuedRan.get(), "work queued before close ran after close");
        assertTrue(queued.isDone());
        assertNotNull(queued.failure(), "an event queued before close must fail");
        assertThrows(StreamFailedException.class, queued::synchronize);
    }

    @Test
    void closeFromATaskStopsTheStreamAfterThatTask() {
        HostStream s = stream("self-close", PATIENT);
        AtomicBoolean taskFinished = new AtomicBoolean();
        s.launch(() -> {
            s.close();
            taskFinished.set(true);
        });
        long end = System.nanoTime() + 10_000_000_000L;
        while (!taskFinished.get() && System.nanoTime() < end) {
            Thread.onSpinWait();
        }
        assertTrue(taskFinished.get());
        assertThrows(IllegalStateException.class, () -> s.launch(() -> { }));
    }

    // ---- descriptors ----

    @Test
    void postedDescriptorsAreExecutedByTheStream() {
        nics = new SenderReceiver(base, "stream");
        nics.postRecvs(2);
        HostStream s = stream("sa", PATIENT);
        WaitRequest recvWait = nics.receiver.prepareWaitCq(nics.receiver.recvCq());
        CountDownLatch gate = gate(s);
        SendRequest s0 = nics.prepareSend(0);
        SendRequest s1 = nics.prepareSend(1);
        WaitRequest sendWait = nics.sender.prepareWaitCq(nics.sender.sendCq());
        AtomicReference<Thread> streamThread = new AtomicReference<>();
        s.launch(() -> streamThread.set(Thread.currentThread()));
        s.post(List.of(new Descriptor.Send(s0), new Descriptor.Send(s1), new Descriptor.Wait(sendWait)));

        // posted at once, rung only when the stream gets there
        assertEquals(SendRequest.State.POSTED, s0.state());
        assertEquals(SendRequest.State.POSTED, s1.state());
        assertEquals(WaitRequest.State.POSTED, sendWait.state());
        Completion c = new Completion();
        assertFalse(SenderReceiver.pollWithin(nics.receiver.recvCq(), c, 50));
        assertFalse(s0.isExecuted(), "the send ran before the stream reached it");

        gate.countDown();
        s.synchronize();
        assertTrue(streamThread.get().getName().contains("sa"));
        // the stream passed its wait for the first send's CQE: that send ran
        assertTrue(sendWait.isSatisfied());
        // the receiver holds its first CQE behind its prepared wait, which the CPU now releases
        assertTrue(SenderReceiver.within(recvWait::isSatisfied, 5_000), "the first receive CQE arrived");
        assertEquals(0, nics.receiver.recvCq().poll(c), "held by the receiver's unreleased wait");
        recvWait.releaseOnCpu();
        for (int i = 0; i < 2; i++) {
            assertTrue(SenderReceiver.pollWithin(nics.receiver.recvCq(), c, 5_000), "receive " + i);
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(i, c.wrId());
            assertEquals(SenderReceiver.payload(i), nics.received(i));
        }
        assertTrue(SenderReceiver.within(s0::isExecuted, 5_000));
        assertTrue(SenderReceiver.within(s1::isExecuted, 5_000));
    }

    @Test
    void descriptorsOutOfOrderAreRejectedByTheStreamAndNothingIsQueued() {
        nics = new SenderReceiver(base, "stream2");
        nics.postRecvs(2);
        HostStream s = stream("sa2", PATIENT);
        SendRequest s0 = nics.prepareSend(0);
        SendRequest s1 = nics.prepareSend(1);
        assertThrows(IllegalStateException.class,
                () -> s.post(List.of(new Descriptor.Send(s1), new Descriptor.Send(s0))));
        assertEquals(SendRequest.State.PREPARED, s0.state());
        assertEquals(SendRequest.State.PREPARED, s1.state());
        s.synchronize();
        assertNull(s.failure(), "a rejected post does not fail the stream");
        s.post(List.of(new Descriptor.Send(s0), new Descriptor.Send(s1)));
        s.synchronize();
        Completion c = new Completion();
        for (int i = 0; i < 2; i++) {
            assertTrue(SenderReceiver.pollWithin(nics.receiver.recvCq(), c, 5_000), "receive " + i);
            assertEquals(SenderReceiver.payload(i), nics.received(i));
        }
    }

    @Test
    void descriptorsPostedToAFailedOrClosedStreamStayPrepared() {
        nics = new SenderReceiver(base, "stream3");
        nics.postRecvs(1);
        HostStream failed = stream("failed-sa", SHORT);
        failed.launch(() -> {
            throw new IllegalStateException("kernel failed");
        });
        assertThrows(StreamFailedException.class, failed::synchronize);
        SendRequest s0 = nics.prepareSend(0);
        assertThrows(StreamFailedException.class, () -> failed.post(List.of(new Descriptor.Send(s0))));
        assertEquals(SendRequest.State.PREPARED, s0.state());

        HostStream closed = stream("closed-sa", PATIENT);
        closed.close();
        assertThrows(IllegalStateException.class, () -> closed.post(List.of(new Descriptor.Send(s0))));
        assertEquals(SendRequest.State.PREPARED, s0.state());
    }

    @Test
    void accessors() {
        HostStream s = stream("named", SHORT);
        assertEquals("named", s.name());
        assertSame(SHORT, s.policy());
        assertNull(s.failure());
        assertContains(s.toString(), "named");
        assertThrows(NullPointerException.class, () -> s.post((MemopBatch) null));
        assertThrows(NullPointerException.class, () -> s.launch(null));
        assertThrows(NullPointerException.class, () -> s.waitEvent(null));
        assertThrows(NullPointerException.class, () -> HostStream.create(null, SHORT));
    }
}
