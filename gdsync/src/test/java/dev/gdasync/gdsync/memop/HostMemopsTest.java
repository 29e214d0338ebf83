package dev.gdasync.gdsync.memop;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HostMemopsTest {
    private static final WaitPolicy SHORT = WaitPolicy.lowLatency(Duration.ofMillis(100));
    private static final WaitPolicy LONG = WaitPolicy.lowLatency(Duration.ofSeconds(20));
    private static final Duration NO_HANG = Duration.ofSeconds(10);

    private Arena arena;
    private MemorySegment seg;

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
        seg = arena.allocate(1024, 64);
    }

    @AfterEach
    void tearDown() {
        arena.close();
    }

    private static Thread later(long delayMillis, Runnable r) {
        return Thread.ofPlatform().daemon().start(() -> {
            try {
                Thread.sleep(delayMillis);
            } catch (InterruptedException e) {
                return;
            }
            r.run();
        });
    }

    private static void assertContains(String s, String part) {
        assertTrue(s.contains(part), () -> "'" + s + "' lacks '" + part + "'");
    }

    // ---- writes ----

    @Test
    void writesStoreTheirValues() {
        MemoryWord a = MemoryWord.word32(seg, 0, "a");
        MemoryWord b = MemoryWord.word32(seg, 4, "b");
        MemoryWord c = MemoryWord.word64(seg, 8, "c");
        MemoryWord d = MemoryWord.word64(seg, 16, "d");
        HostMemops.execute(MemopBatch.of(
                new Memop.Write32(a, 0xDEADBEEF, true),
                new Memop.Write32(b, 17, false),
                new Memop.Write64(c, 0x1122_3344_5566_7788L, true),
                new Memop.Write64(d, -3L, false)), SHORT);
        assertEquals(0xDEADBEEF, seg.get(ValueLayout.JAVA_INT, 0));
        assertEquals(17, seg.get(ValueLayout.JAVA_INT, 4));
        assertEquals(0x1122_3344_5566_7788L, seg.get(ValueLayout.JAVA_LONG, 8));
        assertEquals(-3L, seg.get(ValueLayout.JAVA_LONG, 16));
        assertEquals(0L, seg.get(ValueLayout.JAVA_LONG, 24));
    }

    @Test
    void laterWritesOfABatchWin() {
        MemoryWord a = MemoryWord.word32(seg, 0, "a");
        HostMemops.execute(MemopBatch.of(new Memop.Write32(a, 1, false), new Memop.Write32(a, 2, true),
                new Memop.Write32(a, 3, false)), SHORT);
        assertEquals(3, a.getAcquire32());
    }

    @Test
    void writeMemoryCopiesBytes() {
        byte[] bytes = new byte[37];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 7 + 1);
        }
        byte[] full = new byte[256];
        java.util.Arrays.fill(full, (byte) 0x5A);
        HostMemops.execute(MemopBatch.of(
                new Memop.WriteMemory(seg, 101, bytes, false),
                new Memop.WriteMemory(seg, 512, full, true)), SHORT);
        assertArrayEquals(bytes, seg.asSlice(101, 37).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(0, seg.get(ValueLayout.JAVA_BYTE, 100));
        assertEquals(0, seg.get(ValueLayout.JAVA_BYTE, 138));
        assertArrayEquals(full, seg.asSlice(512, 256).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(0, seg.get(ValueLayout.JAVA_BYTE, 511));
        assertEquals(0, seg.get(ValueLayout.JAVA_BYTE, 768));
    }

    @Test
    void writeMemoryWritesTheStagedBytesNotTheCallersLaterOnes() {
        byte[] bytes = {9, 8, 7};
        Memop.WriteMemory m = new Memop.WriteMemory(seg, 0, bytes, false);
        bytes[0] = 0;
        HostMemops.execute(MemopBatch.of(m), SHORT);
        assertArrayEquals(new byte[] {9, 8, 7}, seg.asSlice(0, 3).toArray(ValueLayout.JAVA_BYTE));
    }

    @ParameterizedTest
    @EnumSource(BarrierScope.class)
    void barrierRunsBetweenWrites(BarrierScope scope) {
        MemoryWord a = MemoryWord.word32(seg, 0, "a");
        MemoryWord b = MemoryWord.word32(seg, 4, "b");
        HostMemops.execute(MemopBatch.of(new Memop.Write32(a, 1, false), new Memop.Barrier(scope),
                new Memop.Write32(b, 2, false)), SHORT);
        assertEquals(1, a.getAcquire32());
        assertEquals(2, b.getAcquire32());
    }

    @Test
    void doorbellIsRungAfterTheStoreAndSeesTheNewValue() {
        MemoryWord dbrec = MemoryWord.word32(seg, 0, "dbrec");
        MemoryWord db = MemoryWord.word64(seg, 8, "doorbell");
        db.set64(5, true);
        AtomicLong seenDoorbell = new AtomicLong(-1);
        AtomicInteger seenDbrec = new AtomicInteger(-1);
        AtomicInteger rings = new AtomicInteger();
        Doorbell bell = () -> {
            rings.incrementAndGet();
            seenDoorbell.set(db.getAcquire64());
            seenDbrec.set(dbrec.getAcquire32());
        };
        HostMemops.execute(MemopBatch.of(new Memop.Write32(dbrec, 1, true),
                new Memop.Write64(db, 0x0000_0007_0000_0001L, false, bell)), SHORT);
        assertEquals(1, rings.get());
        assertEquals(0x0000_0007_0000_0001L, seenDoorbell.get(), "the doorbell must observe the stored value");
        assertEquals(1, seenDbrec.get(), "the doorbell record written before must be visible");
    }

    @Test
    void aDoorbellThatThrowsEndsTheBatch() {
        MemoryWord db = MemoryWord.word64(seg, 8, "doorbell");
        MemoryWord after = MemoryWord.word32(seg, 0, "after");
        IllegalStateException boom = new IllegalStateException("boom");
        var e = assertThrows(IllegalStateException.class, () -> HostMemops.execute(MemopBatch.of(
                new Memop.Write64(db, 1, false, () -> {
                    throw boom;
                }),
                new Memop.Write32(after, 1, false)), SHORT));
        assertSame(boom, e);
        assertEquals(1, db.getAcquire64());
        assertEquals(0, after.getAcquire32());
    }

    // ---- waits ----

    @ParameterizedTest
    @EnumSource(WaitCondition.class)
    void satisfiedWaitsReturnAtOnce(WaitCondition cond) {
        MemoryWord w32 = MemoryWord.word32(seg, 0, "w32");
        MemoryWord w64 = MemoryWord.word64(seg, 8, "w64");
        w32.set32(6, true);
        w64.set64(6, true);
        // 6 GEQ 5, 6 EQ 6, 6 AND 2, 6 NOR 1 (~(6|1) = ~7 != 0)
        int v = switch (cond) {
            case GEQ -> 5;
            case EQ -> 6;
            case AND -> 2;
            case NOR -> 1;
        };
        // An idler already in its park phase: a satisfied wait must not even reset it (no idling at all).
        BackoffIdler idler = new BackoffIdler(new BackoffPolicy(1, 0, 1_000, 1_000));
        idler.idle();
        assertTrue(idler.isParking());
        AtomicBoolean abortPolled = new AtomicBoolean();
        assertTimeoutPreemptively(NO_HANG, () -> HostMemops.execute(MemopBatch.of(
                new Memop.Wait32(w32, v, cond), new Memop.Wait64(w64, v, cond, true)), SHORT, idler, () -> {
                    abortPolled.set(true);
                    return false;
                }));
        assertTrue(idler.isParking(), "a satisfied wait idled");
        org.junit.jupiter.api.Assertions.assertFalse(abortPolled.get(), "a satisfied wait polled for abort");
    }

    @Test
    void wait32SatisfiedLaterByAnotherThreadReturns() throws Exception {
        MemoryWord flag = MemoryWord.word32(seg, 0, "flag");
        MemoryWord after = MemoryWord.word32(seg, 4, "after");
        Thread t = later(50, () -> {
            seg.set(ValueLayout.JAVA_LONG, 64, 0x1234_5678L); // payload written before the flag
            flag.set32(3, true);
        });
        assertTimeoutPreemptively(NO_HANG, () -> HostMemops.execute(MemopBatch.of(
                new Memop.Wait32(flag, 3, WaitCondition.GEQ),
                new Memop.Write32(after, 1, false)), LONG));
        assertEquals(0x1234_5678L, seg.get(ValueLayout.JAVA_LONG, 64), "the wait must acquire the payload");
        assertEquals(1, after.getAcquire32(), "the write after the wait ran");
        t.join();
    }

    @Test
    void wait64SatisfiedLaterByAnotherThreadReturns() throws Exception {
        MemoryWord word = MemoryWord.word64(seg, 8, "counter64");
        word.set64(0xFFFF_FFFF_FFFF_FFF0L, true);
        Thread t = later(50, () -> {
            for (long v = 0xFFFF_FFFF_FFFF_FFF1L; v != 4; v++) {
                word.set64(v, true);
            }
            word.set64(4, true);
        });
        // waits across the 64-bit wrap-around
        assertTimeoutPreemptively(NO_HANG, () -> HostMemops.execute(MemopBatch.of(
                new Memop.Wait64(word, 3, WaitCondition.GEQ)), LONG));
        assertTrue(WaitCondition.GEQ.test(word.getAcquire64(), 3L));
        t.join();
    }

    @Test
    void wait32TimesOutWithAMessageNamingWordConditionValueAndSeen() {
        MemoryWord word = MemoryWord.word32(seg, 12, "validity word of recv CQ slot 3");
        word.set32(3, true);
        MemoryWord after = MemoryWord.word32(seg, 0, "after");
        WaitTimeoutException e = assertTimeoutPreemptively(NO_HANG, () -> assertThrows(WaitTimeoutException.class,
                () -> HostMemops.execute(MemopBatch.of(new Memop.Wait32(word, 7, WaitCondition.GEQ),
                        new Memop.Write32(after, 1, false)), SHORT)));
        String m = e.getMessage();
        assertContains(m, word.toString());
        assertContains(m, "validity word of recv CQ slot 3");
        assertContains(m, "GEQ");
        assertContains(m, "wanted GEQ 7 (0x7)");
        assertContains(m, "last value seen 3 (0x3)");
        assertSame(word, e.word());
        assertEquals(WaitCondition.GEQ, e.condition());
        assertEquals(7, e.awaited());
        assertEquals(3, e.seen());
        assertTrue(waitedMillis(m) >= 100, m);
        assertEquals(0, after.getAcquire32(), "nothing after a failed wait runs");
    }

    @Test
    void wait32TimeoutFormatsValuesUnsigned() {
        MemoryWord word = MemoryWord.word32(seg, 12, "ctr");
        word.set32(-5, true);
        WaitTimeoutException e = assertThrows(WaitTimeoutException.class,
                () -> HostMemops.execute(MemopBatch.of(new Memop.Wait32(word, -2, WaitCondition.EQ)), SHORT));
        assertContains(e.getMessage(), "wanted EQ 4294967294 (0xfffffffe)");
        assertContains(e.getMessage(), "last value seen 4294967291 (0xfffffffb)");
        assertEquals(WaitCondition.EQ, e.condition());
    }

    @Test
    void wait64TimesOutWithAMessageNamingWordConditionValueAndSeen() {
        MemoryWord word = MemoryWord.word64(seg, 16, "doorbell64");
        word.set64(0x1_0000_0005L, true);
        WaitTimeoutException e = assertTimeoutPreemptively(NO_HANG, () -> assertThrows(WaitTimeoutException.class,
                () -> HostMemops.execute(MemopBatch.of(new Memop.Wait64(word, -1L, WaitCondition.EQ)), SHORT)));
        String m = e.getMessage();
        assertContains(m, word.toString());
        assertContains(m, "wanted EQ 18446744073709551615 (0xffffffffffffffff)");
        assertContains(m, "last value seen 4294967301 (0x100000005)");
        assertSame(word, e.word());
        assertEquals(WaitCondition.EQ, e.condition());
        assertEquals(-1L, e.awaited());
        assertEquals(0x1_0000_0005L, e.seen());
        assertTrue(waitedMillis(m) >= 100, m);
    }

    @Test
    void wait64NorTimesOutWhenTheWordAndOperandCoverEveryBit() {
        MemoryWord word = MemoryWord.word64(seg, 16, "nor64");
        word.set64(0xFFFF_FFFF_0000_0000L, true);
        WaitTimeoutException e = assertThrows(WaitTimeoutException.class, () -> HostMemops.execute(
                MemopBatch.of(new Memop.Wait64(word, 0xFFFF_FFFFL, WaitCondition.NOR)), SHORT));
        assertContains(e.getMessage(), "wanted NOR 4294967295 (0xffffffff)");
        assertContains(e.getMessage(), "last value seen 18446744069414584320 (0xffffffff00000000)");
    }

    private static long waitedMillis(String message) {
        Matcher m = Pattern.compile("timed out after (\\d+) ms").matcher(message);
        assertTrue(m.find(), message);
        return Long.parseLong(m.group(1));
    }

    @Test
    void abortedEndsAWaitWithWaitAbortedException() throws Exception {
        MemoryWord word = MemoryWord.word32(seg, 0, "never-set");
        AtomicBoolean aborted = new AtomicBoolean();
        Thread t = later(50, () -> aborted.set(true));
        WaitAbortedException e = assertTimeoutPreemptively(NO_HANG, () -> assertThrows(WaitAbortedException.class,
                () -> HostMemops.execute(MemopBatch.of(new Memop.Wait32(word, 1, WaitCondition.EQ)), LONG,
                        new BackoffIdler(LONG.backoff()), aborted::get)));
        assertContains(e.getMessage(), "never-set");
        assertTrue(aborted.get());
        t.join();
    }

    @Test
    void abortedIsIgnoredByASatisfiedWait() {
        MemoryWord word = MemoryWord.word64(seg, 8, "set");
        word.set64(1, true);
        HostMemops.execute(MemopBatch.of(new Memop.Wait64(word, 1, WaitCondition.EQ)), SHORT,
                new BackoffIdler(SHORT.backoff()), () -> true);
    }

    @Test
    void timeoutOfAnotherWaitInTheBatchNamesThatWord() {
        MemoryWord ok = MemoryWord.word32(seg, 0, "first");
        MemoryWord bad = MemoryWord.word32(seg, 4, "second");
        ok.set32(1, true);
        List<Memop> ops = new ArrayList<>();
        ops.add(new Memop.Wait32(ok, 1, WaitCondition.EQ));
        ops.add(new Memop.Wait32(bad, 1, WaitCondition.EQ));
        WaitTimeoutException e = assertThrows(WaitTimeoutException.class,
                () -> HostMemops.execute(MemopBatch.of(ops), SHORT));
        assertSame(bad, e.word());
        assertContains(e.getMessage(), "second@0x");
    }
}
