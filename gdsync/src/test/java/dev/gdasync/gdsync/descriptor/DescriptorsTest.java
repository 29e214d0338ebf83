package dev.gdasync.gdsync.descriptor;

import dev.gdasync.gdsync.memop.BarrierScope;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DescriptorsTest {
    private static final WaitPolicy POLICY = WaitPolicy.lowLatency(Duration.ofSeconds(10));

    private static void assertContains(String s, String part) {
        assertTrue(s.contains(part), () -> "'" + s + "' lacks '" + part + "'");
    }

    @TempDir
    Path base;
    private Arena arena;
    private MemorySegment seg;
    private MemoryWord w32;
    private MemoryWord w64;
    private SenderReceiver nics;

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
        seg = arena.allocate(512, 64);
        w32 = MemoryWord.word32(seg, 0, "w32");
        w64 = MemoryWord.word64(seg, 8, "w64");
    }

    @AfterEach
    void tearDown() {
        arena.close();
        if (nics != null) {
            nics.close();
        }
    }

    /** Starts the two NICs for a test that needs real prepared sends and waits. */
    private void startNics() {
        nics = new SenderReceiver(base, "desc");
    }

    private Memop only(Descriptor d) {
        MemopBatch b = Descriptors.translate(List.of(d));
        assertEquals(1, b.size(), b::toString);
        return b.get(0);
    }

    @Test
    void waitValue32WithoutFlush() {
        assertEquals(new Memop.Wait32(w32, 7, WaitCondition.GEQ, false),
                only(new Descriptor.WaitValue32(w32, 7, WaitCondition.GEQ, 0)));
    }

    @Test
    void waitValue32WithPostFlush() {
        for (WaitCondition c : WaitCondition.values()) {
            assertEquals(new Memop.Wait32(w32, -1, c, true),
                    only(new Descriptor.WaitValue32(w32, -1, c, DescriptorFlags.WAIT_POST_FLUSH)));
        }
    }

    @Test
    void writeValue32WithoutAndWithPreBarrier() {
        assertEquals(new Memop.Write32(w32, 5, false), only(new Descriptor.WriteValue32(w32, 5, 0)));
        assertEquals(new Memop.Write32(w32, 5, true),
                only(new Descriptor.WriteValue32(w32, 5, DescriptorFlags.WRITE_PRE_BARRIER)));
    }

    private static void assertWriteMemory(Memop m, MemorySegment target, long offset, byte[] data, boolean barrier) {
        Memop.WriteMemory w = assertInstanceOf(Memop.WriteMemory.class, m);
        assertSame(target, w.target());
        assertEquals(offset, w.offset());
        assertArrayEquals(data, w.data());
        assertEquals(barrier, w.barrier());
    }

    @Test
    void writeMemoryWithoutBarriers() {
        byte[] data = {1, 2, 3};
        MemopBatch b = Descriptors.translate(List.of(new Descriptor.WriteMemory(seg, 100, data, 0)));
        assertEquals(1, b.size());
        assertWriteMemory(b.get(0), seg, 100, data, false);
    }

    @Test
    void writeMemoryPreBarrier() {
        byte[] data = {4, 5};
        MemopBatch b = Descriptors.translate(List.of(
                new Descriptor.WriteMemory(seg, 8, data, DescriptorFlags.WRITE_MEMORY_PRE_BARRIER)));
        assertEquals(1, b.size());
        assertWriteMemory(b.get(0), seg, 8, data, true);
    }

    @Test
    void writeMemoryPostBarrierAddsASystemBarrier() {
        byte[] data = {6};
        MemopBatch b = Descriptors.translate(List.of(
                new Descriptor.WriteMemory(seg, 0, data, DescriptorFlags.WRITE_MEMORY_POST_BARRIER)));
        assertEquals(2, b.size());
        assertWriteMemory(b.get(0), seg, 0, data, false);
        assertEquals(new Memop.Barrier(BarrierScope.SYSTEM), b.get(1));
    }

    @Test
    void writeMemoryPreAndPostBarrier() {
        byte[] data = new byte[256];
        data[255] = 9;
        MemopBatch b = Descriptors.translate(List.of(new Descriptor.WriteMemory(seg, 256, data,
                DescriptorFlags.WRITE_MEMORY_PRE_BARRIER | DescriptorFlags.WRITE_MEMORY_POST_BARRIER)));
        assertEquals(2, b.size());
        assertWriteMemory(b.get(0), seg, 256, data, true);
        assertEquals(new Memop.Barrier(BarrierScope.SYSTEM), b.get(1));
    }

    @Test
    void writeMemoryStagesItsBytes() {
        byte[] data = {1, 2, 3};
        Descriptor.WriteMemory d = new Descriptor.WriteMemory(seg, 0, data, 0);
        data[0] = 42;
        assertArrayEquals(new byte[] {1, 2, 3}, d.data());
        d.data()[1] = 42;
        assertArrayEquals(new byte[] {1, 2, 3}, d.data());
        assertWriteMemory(only(d), seg, 0, new byte[] {1, 2, 3}, false);
    }

    @Test
    void writeMemoryIsValidatedLikeTheMemop() {
        assertThrows(IllegalArgumentException.class, () -> new Descriptor.WriteMemory(seg, 0, new byte[257], 0));
        assertThrows(IndexOutOfBoundsException.class, () -> new Descriptor.WriteMemory(seg, 510, new byte[4], 0));
        assertThrows(IllegalArgumentException.class,
                () -> new Descriptor.WriteMemory(MemorySegment.ofArray(new byte[8]), 0, new byte[4], 0));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 1 << 4, 1 << 5, 1 << 31, -1})
    void waitValue32RejectsUnknownFlags(int flags) {
        var e = assertThrows(IllegalArgumentException.class,
                () -> new Descriptor.WaitValue32(w32, 1, WaitCondition.EQ, flags));
        assertContains(e.getMessage(), "WAIT_VALUE32");
        assertContains(e.getMessage(), Integer.toHexString(flags & ~DescriptorFlags.WAIT_POST_FLUSH));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 1 << 3, 1 << 5, 1 << 31})
    void writeValue32RejectsUnknownFlags(int flags) {
        var e = assertThrows(IllegalArgumentException.class, () -> new Descriptor.WriteValue32(w32, 1, flags));
        assertContains(e.getMessage(), "WRITE_VALUE32");
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 1 << 3, 1 << 6, 1 << 31})
    void writeMemoryRejectsUnknownFlags(int flags) {
        var e = assertThrows(IllegalArgumentException.class, () -> new Descriptor.WriteMemory(seg, 0, new byte[1], flags));
        assertContains(e.getMessage(), "WRITE_MEMORY");
    }

    @Test
    void valueDescriptorsNeed32BitWords() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> new Descriptor.WaitValue32(w64, 1, WaitCondition.EQ, 0));
        assertContains(e.getMessage(), "w64");
        assertThrows(IllegalArgumentException.class, () -> new Descriptor.WriteValue32(w64, 1, 0));
    }

    @Test
    void nullsAreRejected() {
        assertThrows(NullPointerException.class, () -> new Descriptor.Send(null));
        assertThrows(NullPointerException.class, () -> new Descriptor.Wait(null));
        assertThrows(NullPointerException.class, () -> new Descriptor.WaitValue32(null, 1, WaitCondition.EQ, 0));
        assertThrows(NullPointerException.class, () -> new Descriptor.WaitValue32(w32, 1, null, 0));
        assertThrows(NullPointerException.class, () -> new Descriptor.WriteValue32(null, 1, 0));
    }

    @Test
    void emptyListIsTheEmptyBatch() {
        assertTrue(Descriptors.translate(List.of()).isEmpty());
        assertTrue(Descriptors.post(List.of(), Descriptors.CPU).isEmpty());
    }

    @Test
    void postOnCpuExecutesValueDescriptorsInOrder() {
        MemoryWord a = MemoryWord.word32(seg, 16, "a");
        Descriptors.postOnCpu(List.of(
                new Descriptor.WriteValue32(a, 1, 0),
                new Descriptor.WaitValue32(a, 1, WaitCondition.EQ, 0),
                new Descriptor.WriteMemory(seg, 32, new byte[] {7, 7}, DescriptorFlags.WRITE_MEMORY_POST_BARRIER),
                new Descriptor.WriteValue32(a, 2, DescriptorFlags.WRITE_PRE_BARRIER)), POLICY);
        assertEquals(2, a.getAcquire32());
        assertEquals(7, seg.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 33));
    }

    // ---- prepared sends and waits of a real software NIC ----

    private List<Descriptor> sends(SendRequest... requests) {
        List<Descriptor> out = new ArrayList<>();
        for (SendRequest r : requests) {
            out.add(new Descriptor.Send(r));
        }
        return out;
    }

    private void assertAllPrepared(SendRequest... requests) {
        for (SendRequest r : requests) {
            assertEquals(SendRequest.State.PREPARED, r.state(), r::toString);
        }
    }

    private void assertReceivedInOrder(int n) {
        Completion c = new Completion();
        for (int i = 0; i < n; i++) {
            assertTrue(SenderReceiver.pollWithin(nics.receiver.recvCq(), c, 5_000), "receive " + i);
            assertTrue(c.isSuccess(), c::toString);
            assertEquals(i, c.wrId());
            assertEquals(8, c.byteLength());
            assertEquals(CompletionOpcode.RECV, c.opcode());
            assertEquals(SenderReceiver.payload(i), nics.received(i));
        }
        assertEquals(0, nics.receiver.recvCq().poll(c), "no extra receive");
    }

    @Test
    void translateOfAListIsOneBatchInOrder() {
        startNics();
        nics.postRecvs(1);
        SendRequest s = nics.prepareSend(0);
        WaitRequest sendWait = nics.sender.prepareWaitCq(nics.sender.sendCq());
        WaitRequest recvWait = nics.receiver.prepareWaitCq(nics.receiver.recvCq());
        MemoryWord word = MemoryWord.word32(nics.receiverRegion.segment(), 256, "user flag");
        Descriptor.WriteMemory wm = new Descriptor.WriteMemory(nics.receiverRegion.segment(), 300, new byte[] {1},
                DescriptorFlags.WRITE_MEMORY_POST_BARRIER);
        MemopBatch b = Descriptors.translate(List.of(
                new Descriptor.WriteValue32(word, 1, 0),
                new Descriptor.Send(s),
                new Descriptor.Wait(sendWait),
                new Descriptor.WaitValue32(word, 1, WaitCondition.AND, DescriptorFlags.WAIT_POST_FLUSH),
                wm,
                new Descriptor.Wait(recvWait)));
        List<Memop> expected = new ArrayList<>();
        expected.add(new Memop.Write32(word, 1, false));
        expected.addAll(s.memops());
        expected.addAll(sendWait.memops());
        expected.add(new Memop.Wait32(word, 1, WaitCondition.AND, true));
        expected.add(null); // the WriteMemory, compared below
        expected.add(new Memop.Barrier(BarrierScope.SYSTEM));
        expected.addAll(recvWait.memops());
        assertEquals(expected.size(), b.size(), b::toString);
        for (int i = 0; i < b.size(); i++) {
            if (i == 6) {
                Memop.WriteMemory m = assertInstanceOf(Memop.WriteMemory.class, b.get(i));
                assertEquals(300, m.offset());
                assertArrayEquals(new byte[] {1}, m.data());
            } else {
                assertEquals(expected.get(i), b.get(i), "memop " + i);
            }
        }
        // the send's memops ring the doorbell record then the doorbell, the wait's wait then release
        assertInstanceOf(Memop.Write32.class, b.get(1));
        assertInstanceOf(Memop.Write64.class, b.get(2));
        assertInstanceOf(Memop.Wait32.class, b.get(3));
        assertInstanceOf(Memop.Write32.class, b.get(4));
        // translate marks nothing posted
        assertEquals(SendRequest.State.PREPARED, s.state());
        assertEquals(WaitRequest.State.PREPARED, sendWait.state());
        assertEquals(WaitRequest.State.PREPARED, recvWait.state());
        assertFalse(s.isExecuted());
    }

    @Test
    void sendsOutOfPrepareOrderAreRejectedAndNothingIsPosted() {
        startNics();
        nics.postRecvs(3);
        SendRequest s0 = nics.prepareSend(0);
        SendRequest s1 = nics.prepareSend(1);
        SendRequest s2 = nics.prepareSend(2);
        WaitRequest w = nics.sender.prepareWaitCq(nics.sender.sendCq());

        List<Descriptor> swapped = new ArrayList<>();
        swapped.add(new Descriptor.Wait(w));
        swapped.addAll(sends(s0, s2, s1));
        var e = assertThrows(IllegalStateException.class, () -> Descriptors.post(swapped, Descriptors.CPU));
        assertContains(e.getMessage(), "out of prepare order");
        assertContains(e.getMessage(), "#2");
        assertAllPrepared(s0, s1, s2);
        assertEquals(WaitRequest.State.PREPARED, w.state());

        assertThrows(IllegalStateException.class, () -> Descriptors.post(sends(s1, s0), Descriptors.CPU));
        assertThrows(IllegalStateException.class, () -> Descriptors.post(sends(s1), Descriptors.CPU));
        assertThrows(IllegalStateException.class, () -> Descriptors.postOnCpu(sends(s0, s2), POLICY));
        assertAllPrepared(s0, s1, s2);
        assertEquals(WaitRequest.State.PREPARED, w.state());
        assertFalse(s0.isExecuted(), "a rejected list must ring nothing");

        // nothing changed: the right order is still accepted, and the sends run
        List<Descriptor> ordered = new ArrayList<>(sends(s0, s1, s2));
        ordered.add(new Descriptor.Wait(w));
        Descriptors.postOnCpu(ordered, POLICY);
        for (SendRequest s : List.of(s0, s1, s2)) {
            assertEquals(SendRequest.State.POSTED, s.state());
        }
        assertEquals(WaitRequest.State.POSTED, w.state());
        assertReceivedInOrder(3);
    }

    @Test
    void longListsAreCheckedAllOrNothingToo() {
        startNics();
        int n = 20; // above the scan limit: the map-based check
        nics.postRecvs(n);
        SendRequest[] s = new SendRequest[n];
        for (int i = 0; i < n; i++) {
            s[i] = nics.prepareSend(i);
        }
        List<Descriptor> list = new ArrayList<>(sends(s));
        list.set(n - 2, new Descriptor.Send(s[n - 1]));
        list.set(n - 1, new Descriptor.Send(s[n - 2]));
        var e = assertThrows(IllegalStateException.class, () -> Descriptors.post(list, Descriptors.CPU));
        assertContains(e.getMessage(), "out of prepare order");
        assertAllPrepared(s);

        Descriptors.postOnCpu(sends(s), POLICY);
        for (SendRequest r : s) {
            assertEquals(SendRequest.State.POSTED, r.state());
        }
        assertReceivedInOrder(n);
    }

    @Test
    void theSameWaitTwiceInOneListIsRejected() {
        startNics();
        nics.postRecvs(1);
        SendRequest s0 = nics.prepareSend(0);
        WaitRequest w = nics.sender.prepareWaitCq(nics.sender.sendCq());
        var e = assertThrows(IllegalStateException.class, () -> Descriptors.post(
                List.of(new Descriptor.Send(s0), new Descriptor.Wait(w), new Descriptor.Wait(w)), Descriptors.CPU));
        assertContains(e.getMessage(), "appears twice");
        assertContains(e.getMessage(), "CQE #0");
        assertContains(e.getMessage(), nics.sender.sendCq().name());
        assertEquals(SendRequest.State.PREPARED, s0.state());
        assertEquals(WaitRequest.State.PREPARED, w.state());

        // in a long list as well
        List<Descriptor> longList = new ArrayList<>();
        longList.add(new Descriptor.Wait(w));
        MemoryWord scratch = MemoryWord.word32(nics.senderRegion.segment(), 8L * (SenderReceiver.SLOTS - 1), "scratch");
        for (int i = 0; i < 20; i++) {
            longList.add(new Descriptor.WriteValue32(scratch, i, 0));
        }
        longList.add(new Descriptor.Send(s0));
        longList.add(new Descriptor.Wait(w));
        assertThrows(IllegalStateException.class, () -> Descriptors.post(longList, Descriptors.CPU));
        assertEquals(SendRequest.State.PREPARED, s0.state());
        assertEquals(WaitRequest.State.PREPARED, w.state());
    }

    @Test
    void aWaitAlreadyPostedIsRejected() {
        startNics();
        nics.postRecvs(1);
        WaitRequest recvWait = nics.receiver.prepareWaitCq(nics.receiver.recvCq());
        SendRequest s0 = nics.prepareSend(0);
        Descriptors.postOnCpu(List.of(new Descriptor.Send(s0)), POLICY);
        Descriptors.postOnCpu(List.of(new Descriptor.Wait(recvWait)), POLICY);
        assertEquals(WaitRequest.State.POSTED, recvWait.state());

        var e = assertThrows(IllegalStateException.class,
                () -> Descriptors.post(List.of(new Descriptor.Wait(recvWait)), Descriptors.CPU));
        assertContains(e.getMessage(), "already posted");
        assertContains(e.getMessage(), "CQE #0");

        var e2 = assertThrows(IllegalStateException.class,
                () -> Descriptors.post(List.of(new Descriptor.Send(s0)), Descriptors.CPU));
        assertContains(e2.getMessage(), "already posted");

        // a list with a fresh send and the old wait changes nothing
        nics.postRecvs(1);
        SendRequest s1 = nics.prepareSend(1);
        assertThrows(IllegalStateException.class, () -> Descriptors.post(
                List.of(new Descriptor.Send(s1), new Descriptor.Wait(recvWait)), Descriptors.CPU));
        assertEquals(SendRequest.State.PREPARED, s1.state());
    }

    @Test
    void postOnCpuExecutesAtOnce() {
        startNics();
        nics.postRecvs(1);
        SendRequest s0 = nics.prepareSend(0);
        Completion c = new Completion();
        assertEquals(0, nics.receiver.recvCq().poll(c), "nothing before the post");
        assertFalse(s0.isExecuted());

        Descriptors.postOnCpu(List.of(new Descriptor.Send(s0)), POLICY);

        assertEquals(SendRequest.State.POSTED, s0.state());
        assertTrue(SenderReceiver.pollWithin(nics.receiver.recvCq(), c, 5_000));
        assertTrue(c.isSuccess(), c::toString);
        assertEquals(0, c.wrId());
        assertEquals(8, c.byteLength());
        assertEquals(SenderReceiver.payload(0), nics.received(0));
        assertTrue(SenderReceiver.within(s0::isExecuted, 5_000));
        assertTrue(SenderReceiver.pollWithin(nics.sender.sendCq(), c, 5_000));
        assertEquals(1000, c.wrId());
        assertEquals(CompletionOpcode.SEND, c.opcode());
    }

    @Test
    void aPreparedWaitHoldsItsCqeUntilItsDescriptorRuns() {
        startNics();
        nics.postRecvs(1);
        WaitRequest recvWait = nics.receiver.prepareWaitCq(nics.receiver.recvCq());
        Descriptors.postOnCpu(List.of(new Descriptor.Send(nics.prepareSend(0))), POLICY);
        Completion c = new Completion();
        assertTrue(SenderReceiver.within(recvWait::isSatisfied, 5_000), "the receive CQE arrived");
        assertEquals(0, nics.receiver.recvCq().poll(c), "held by the unreleased wait");

        Descriptors.postOnCpu(List.of(new Descriptor.Wait(recvWait)), POLICY);

        assertEquals(1, nics.receiver.recvCq().poll(c));
        assertEquals(0, c.wrId());
        assertEquals(SenderReceiver.payload(0), nics.received(0));
    }
}
