package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.SenderReceiver;
import dev.gdasync.gdsync.memop.BarrierScope;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.mlx5.CqWaitMode;
import dev.gdasync.gdsync.mlx5.Mlx5Nic;
import dev.gdasync.gdsync.mlx5.soft.SoftMlx5Device;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.stream.StreamFailedException;
import dev.gdasync.gdsync.swnic.SwNicConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * End-to-end scenarios of {@link CudaStream}, run by {@link CudaStreamMain} in a child JVM on the fake driver
 * and by {@link CudaStreamGpuTest} on a real GPU. Each throws an {@link IllegalStateException} naming what went
 * wrong, and reports facts worth checking (messages, capabilities) through {@code out}.
 */
final class CudaStreamScenarios {
    /** Waits that must succeed: long enough that only a hang fails them. */
    static final WaitPolicy PATIENT = WaitPolicy.lowLatency(Duration.ofSeconds(30));
    private static final Duration NO_HANG = Duration.ofSeconds(30);

    private final CudaContext context;
    private final Consumer<String> out;

    CudaStreamScenarios(CudaContext context, Consumer<String> out) {
        this.context = context;
        this.out = out;
    }

    private static void expect(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what);
        }
    }

    private static void synced(Event e, String what) {
        expect(e.synchronize(NO_HANG), what + " did not complete within " + NO_HANG);
    }

    /** Gives a stream that is wrong a chance to run past a wait; a correct one cannot, however long this is. */
    private static void settle() {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
    }

    /**
     * Copies between host and device memory run in stream order: held by a wait before them, seen by a host
     * task after them; bad copies and launches are refused before anything is queued.
     */
    void copies() {
        try (Arena arena = Arena.ofShared(); CudaAddressMap map = new CudaAddressMap(context);
             CudaStream s = CudaStream.create("copies", context, map, PATIENT);
             DeviceRegion device = DeviceRegion.allocate(context, 1, 8192)) {
            MemorySegment page = arena.allocate(4096, 4096);
            MemoryWord gate = MemoryWord.word32(page, 0, "gate");
            MemorySegment src = arena.allocate(4096, 4096);
            MemorySegment back = arena.allocate(4096, 4096);
            map.register(src);
            map.register(back);
            byte[] data = bytes(4096, 0x33);
            MemorySegment.copy(data, 0, src, ValueLayout.JAVA_BYTE, 0, data.length);
            s.post(MemopBatch.of(new Memop.Wait32(gate, 1, WaitCondition.GEQ)));
            s.copyHostToDevice(device.address() + 4096, src);
            s.copyDeviceToHost(back, device.address() + 4096);
            AtomicReference<String> seen = new AtomicReference<>();
            s.launch(() -> seen.set(hex(back, 0, 16)));
            Event done = s.record();
            settle();
            byte[] now = new byte[4096];
            MemorySegment probe = arena.allocate(4096);
            device.copyToHost(4096, probe);
            MemorySegment.copy(probe, ValueLayout.JAVA_BYTE, 0, now, 0, now.length);
            expect(java.util.Arrays.equals(now, new byte[4096]), "a copy ran before the wait ahead of it was released");
            expect(seen.get() == null, "the host task ran before the copies");
            gate.set32(1, true);
            synced(done, "the event after the copies");
            expect(HexFormat.of().formatHex(data, 0, 16).equals(seen.get()), "the host task after the copies saw "
                    + seen.get());
            expect(back.mismatch(src) == -1, "the bytes copied back differ");
            device.copyToHost(0, probe);
            expect(probe.mismatch(arena.allocate(4096)) == -1, "the copy wrote outside its range");
            out.accept("pointer: " + (device.pointer(4096, 100).address() == device.address() + 4096)
                    + " " + device.pointer(4096, 100).byteSize());
            try {
                device.pointer(8100, 100);
                expect(false, "a pointer past the region's end was made");
            } catch (IndexOutOfBoundsException e) {
                out.accept("pointer out of range: " + e.getMessage());
            }
            try {
                s.copyHostToDevice(device.address(), MemorySegment.ofArray(new byte[8]));
                expect(false, "a heap segment was accepted");
            } catch (IllegalArgumentException e) {
                out.accept("heap copy: " + e.getMessage());
            }
            try {
                s.launchKernel(new jcuda.driver.CUfunction(), 0, 1, 0, jcuda.Pointer.to(new int[1]), "nothing");
                expect(false, "a launch of grid 0 was accepted");
            } catch (IllegalArgumentException e) {
                out.accept("grid 0: " + e.getMessage());
            }
            s.synchronize();
        }
    }

    /** Every memop kind reaches host memory in order, and each wait holds later work until the host writes. */
    void memops() {
        try (Arena arena = Arena.ofShared(); CudaAddressMap map = new CudaAddressMap(context);
             CudaStream s = CudaStream.create("memops", context, map, PATIENT)) {
            CudaCapabilities caps = s.capabilities();
            out.accept("caps: " + caps);
            MemorySegment seg = arena.allocate(4096, 4096);
            MemoryWord w32 = MemoryWord.word32(seg, 0, "w32");
            MemoryWord w64 = MemoryWord.word64(seg, 8, "w64");
            byte[] aligned = bytes(16, 0x10);
            byte[] unaligned = bytes(7, 0x70);
            MemoryWord gate = MemoryWord.word32(seg, 256, "gate");
            MemoryWord eq = MemoryWord.word32(seg, 260, "eq");
            MemoryWord and = MemoryWord.word32(seg, 264, "and");
            MemoryWord nor = MemoryWord.word32(seg, 268, "nor");
            MemoryWord gate64 = MemoryWord.word64(seg, 272, "gate64");
            MemoryWord after = MemoryWord.word32(seg, 280, "after");
            nor.set32(0xF, true);

            s.post(MemopBatch.of(new Memop.Write32(w32, 0x11111111, false),
                    new Memop.Write64(w64, 0x2222222233333333L, true),
                    new Memop.WriteMemory(seg, 64, aligned, false),
                    new Memop.WriteMemory(seg, 129, unaligned, true),
                    new Memop.Barrier(BarrierScope.SYSTEM),
                    new Memop.Barrier(BarrierScope.DEVICE)));
            AtomicReference<String> seen = new AtomicReference<>();
            s.launch(() -> seen.set(Integer.toHexString(w32.getAcquire32()) + " " + Long.toHexString(w64.getAcquire64())
                    + " " + hex(seg, 64, 16) + " " + hex(seg, 129, 7)));
            Event e0 = s.record();
            s.post(MemopBatch.of(new Memop.Wait32(gate, 1, WaitCondition.GEQ), new Memop.Write32(after, 1, true)));
            Event e1 = s.record();
            s.post(MemopBatch.of(new Memop.Wait32(eq, 5, WaitCondition.EQ), new Memop.Write32(after, 2, true)));
            Event e2 = s.record();
            s.post(MemopBatch.of(new Memop.Wait32(and, 0x4, WaitCondition.AND), new Memop.Write32(after, 3, true)));
            Event e3 = s.record();

            synced(e0, "the event after the writes");
            String want = "11111111 2222222233333333 " + HexFormat.of().formatHex(aligned) + " "
                    + HexFormat.of().formatHex(unaligned);
            expect(want.equals(seen.get()), "the host task saw '" + seen.get() + "', want '" + want + "'");
            expect(want.equals(Integer.toHexString(w32.getAcquire32()) + " " + Long.toHexString(w64.getAcquire64())
                    + " " + hex(seg, 64, 16) + " " + hex(seg, 129, 7)), "memory after the writes");
            expect(seg.get(ValueLayout.JAVA_BYTE, 128) == 0 && seg.get(ValueLayout.JAVA_BYTE, 136) == 0,
                    "the unaligned copy wrote outside its bytes");

            settle();
            expect(!e1.isDone() && after.getAcquire32() == 0, "the stream ran past WAIT32 GEQ before the host wrote");
            gate.set32(1, true);
            synced(e1, "the event after the GEQ wait");
            expect(after.getAcquire32() == 1, "after the GEQ wait: " + after.getAcquire32());
            eq.set32(5, true);
            synced(e2, "the event after the EQ wait");
            expect(after.getAcquire32() == 2, "after the EQ wait: " + after.getAcquire32());
            and.set32(0x6, true);
            synced(e3, "the event after the AND wait");
            expect(after.getAcquire32() == 3, "after the AND wait: " + after.getAcquire32());

            int last = 3;
            Memop.Wait32 norWait = new Memop.Wait32(nor, 0xFFFFFFF0, WaitCondition.NOR);
            if (caps.waitNor()) {
                s.post(MemopBatch.of(norWait, new Memop.Write32(after, 4, true)));
                Event e4 = s.record();
                nor.set32(0x7, true);
                synced(e4, "the event after the NOR wait");
                expect(after.getAcquire32() == 4, "after the NOR wait: " + after.getAcquire32());
                last = 4;
            } else {
                out.accept("nor: " + refusal(() -> s.post(MemopBatch.of(norWait))));
            }
            Memop.Wait64 wait64 = new Memop.Wait64(gate64, 1L << 40, WaitCondition.GEQ, true);
            if (caps.memops64()) {
                s.post(MemopBatch.of(wait64, new Memop.Write32(after, 5, true)));
                Event e5 = s.record();
                gate64.set64(1L << 40, true);
                synced(e5, "the event after the 64-bit wait");
                expect(after.getAcquire32() == 5, "after the 64-bit wait: " + after.getAcquire32());
                last = 5;
            } else {
                out.accept("wait64: " + refusal(() -> s.post(MemopBatch.of(wait64))));
            }
            AtomicLong finalSeen = new AtomicLong(-1);
            s.launch(() -> finalSeen.set(after.getAcquire32()));
            s.synchronize();
            expect(finalSeen.get() == last, "the last host task saw " + finalSeen.get() + ", want " + last);
            expect(s.failure() == null, "the stream failed: " + s.failure());
        }
    }

    /** Waits for events of other streams: a host stream's (a pinned word) and a CUDA stream's (cuStreamWaitEvent). */
    void events() {
        try (Arena arena = Arena.ofShared(); CudaAddressMap map = new CudaAddressMap(context);
             CudaStream a = CudaStream.create("a", context, map, PATIENT);
             CudaStream b = CudaStream.create("b", context, map, PATIENT);
             HostStream h = HostStream.create("h", PATIENT)) {
            MemorySegment seg = arena.allocate(4096, 4096);
            MemoryWord x = MemoryWord.word32(seg, 0, "x");
            MemoryWord y = MemoryWord.word32(seg, 4, "y");
            CountDownLatch open = new CountDownLatch(1);
            h.launch(() -> {
                try {
                    open.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            Event he = h.record();
            a.waitEvent(he);
            a.post(MemopBatch.of(new Memop.Write32(x, 1, true)));
            Event ae = a.record();
            b.waitEvent(ae);
            b.post(MemopBatch.of(new Memop.Write32(y, 2, true)));
            Event be = b.record();
            HostStream h2 = HostStream.create("h2", PATIENT);
            try (h2) {
                h2.waitEvent(be);
                Event he2 = h2.record();
                settle();
                expect(x.getAcquire32() == 0 && y.getAcquire32() == 0 && !ae.isDone() && !be.isDone(),
                        "a CUDA stream ran past a wait for another stream's event");
                open.countDown();
                synced(he2, "the host stream waiting on CUDA stream b");
            }
            expect(x.getAcquire32() == 1 && y.getAcquire32() == 2, "x=" + x.getAcquire32() + " y=" + y.getAcquire32());
            a.synchronize();
            b.synchronize();

            // An event whose stream failed fails the CUDA stream that waits for it.
            try (HostStream bad = HostStream.create("bad", PATIENT); CudaStream c = CudaStream.create("c", context, map,
                    PATIENT)) {
                bad.launch(() -> {
                    throw new IllegalStateException("bad task");
                });
                Event failed = bad.record();
                c.waitEvent(failed);
                try {
                    c.synchronize();
                    throw new IllegalStateException("c did not fail after waiting for a failed event");
                } catch (StreamFailedException e) {
                    out.accept("failed event: " + e.getCause().getMessage());
                }
            }
        }
    }

    /**
     * The software NIC: a CUDA stream rings a prepared send by plain stores, the NIC's agent executes it, the stream
     * waits for the receive CQE, and a host task after the wait sees the payload.
     */
    void swnic(Path base) {
        nicRing(new SenderReceiver(base, "cuda"));
    }

    /**
     * The mlx5 provider on the software mlx5 device: the stream rings the send with LibGDSync's stores (the
     * big-endian send counter to the doorbell record, the control segment to the BlueFlame page, both in registered
     * host memory), the device's engine executes it, and the stream waits on the receive CQE's owner bit (NOR in the
     * first pass; needs CAN_USE_STREAM_WAIT_VALUE_NOR).
     */
    void mlx5(Path base) {
        SwNicConfig sw = SwNicConfig.defaults().withShmBase(base).withJobId("cuda-mlx5");
        nicRing(new SenderReceiver(() -> Mlx5Nic.open(SoftMlx5Device.open(sw), CqWaitMode.OWNER)));
    }

    private void nicRing(SenderReceiver pair) {
        try (SenderReceiver nics = pair; CudaAddressMap map = new CudaAddressMap(context);
             CudaStream s = CudaStream.create("swnic", context, map, PATIENT)) {
            nics.postRecvs(2);
            WaitRequest recv = nics.receiver.prepareWaitCq(nics.receiver.recvCq());
            SendRequest send = nics.prepareSend(0);
            AtomicLong seen = new AtomicLong();
            s.post(List.of(new Descriptor.Send(send), new Descriptor.Wait(recv)));
            s.launch(() -> seen.set(nics.received(0)));
            s.synchronize();
            expect(seen.get() == SenderReceiver.payload(0), "the host task after the wait saw 0x"
                    + Long.toHexString(seen.get()) + ", want 0x" + Long.toHexString(SenderReceiver.payload(0)));
            Completion c = new Completion();
            expect(SenderReceiver.pollWithin(nics.receiver.recvCq(), c, 30_000) && c.isSuccess(),
                    "the receive CQE after the stream released it: " + c);
            expect(SenderReceiver.pollWithin(nics.sender.sendCq(), c, 30_000) && c.isSuccess(), "the send CQE: " + c);
            // Known executed once its CQE is reaped (the software NIC knows sooner; an mlx5 NIC tells only by the CQE).
            expect(send.state() == SendRequest.State.POSTED && send.isExecuted(), "the send is " + send);

            // Out of prepare order: refused, and nothing is posted.
            SendRequest first = nics.prepareSend(1);
            SendRequest second = nics.prepareSend(2);
            out.accept("out of order: " + refusal(() -> s.post(List.of(new Descriptor.Send(second)))));
            expect(first.state() == SendRequest.State.PREPARED && second.state() == SendRequest.State.PREPARED,
                    "a refused list posted something");
            WaitRequest recv2 = nics.receiver.prepareWaitCq(nics.receiver.recvCq());
            s.post(List.of(new Descriptor.Send(first), new Descriptor.Wait(recv2)));
            s.synchronize();
            expect(nics.received(1) == SenderReceiver.payload(1), "the second message: 0x" + Long.toHexString(nics.received(1)));
        }
    }

    /** A host task that throws fails the stream; later work is refused with the original cause. */
    void hostTaskThrows() {
        try (Arena arena = Arena.ofShared(); CudaAddressMap map = new CudaAddressMap(context);
             CudaStream s = CudaStream.create("throws", context, map, PATIENT)) {
            MemoryWord gate = MemoryWord.word32(arena.allocate(4096, 4096), 0, "gate");
            // Everything is queued behind a gate, so the failure cannot overtake the submissions.
            s.post(MemopBatch.of(new Memop.Wait32(gate, 1, WaitCondition.GEQ)));
            AtomicLong ran = new AtomicLong();
            s.launch(ran::incrementAndGet);
            s.launch(() -> {
                throw new IllegalStateException("task failed on purpose");
            });
            Event after = s.record();
            s.launch(ran::incrementAndGet);
            gate.set32(1, true);
            try {
                s.synchronize();
                throw new IllegalStateException("synchronize did not report the task's exception");
            } catch (StreamFailedException e) {
                out.accept("synchronize: " + e.getMessage());
            }
            try {
                after.synchronize(NO_HANG);
                throw new IllegalStateException("the event after the failed task completed");
            } catch (StreamFailedException e) {
                out.accept("event: " + e.getCause().getMessage());
            }
            try {
                s.record();
                throw new IllegalStateException("a failed stream took new work");
            } catch (StreamFailedException e) {
                out.accept("record: " + e.getCause().getMessage());
            }
            expect(ran.get() == 1, "tasks run: " + ran.get() + ", want 1 (the one after the failure is skipped)");
        }
    }

    /** A wait that never completes: synchronize fails the stream after the policy's timeout, naming the wait. */
    void timeout() {
        // The GPU may still read the word after the stream is closed: its memory and registration stay.
        CudaAddressMap map = new CudaAddressMap(context);
        try (CudaStream s = CudaStream.create("stuck", context, map, WaitPolicy.lowLatency(Duration.ofMillis(300)))) {
            MemorySegment seg = Arena.global().allocate(4096, 4096);
            MemoryWord never = MemoryWord.word32(seg, 0, "never written");
            s.post(MemopBatch.of(new Memop.Wait32(never, 7, WaitCondition.GEQ)));
            Event e = s.record();
            try {
                s.synchronize();
                throw new IllegalStateException("synchronize returned although the stream waits forever");
            } catch (StreamFailedException ex) {
                expect(ex.getCause() instanceof CudaStreamTimeoutException, "cause " + ex.getCause());
                out.accept("timeout: " + ex.getCause().getMessage());
            }
            try {
                e.synchronize(NO_HANG);
                throw new IllegalStateException("the event after the stuck wait completed");
            } catch (StreamFailedException ex) {
                expect(ex.getCause() instanceof CudaStreamTimeoutException, "event cause " + ex.getCause());
            }
            try {
                s.post(MemopBatch.of(new Memop.Write32(never, 7, true)));
                throw new IllegalStateException("a timed-out stream took new work");
            } catch (StreamFailedException ex) {
                out.accept("post: " + ex.getCause().getClass().getSimpleName());
            }
            never.set32(7, true);
        }
    }

    /** Closing fails pending events and drops host work; a closed stream refuses work. */
    void close() {
        // The GPU may still read the word after the stream is closed: its memory and registration stay.
        CudaAddressMap map = new CudaAddressMap(context);
        CudaStream s = CudaStream.create("closing", context, map, PATIENT);
        MemorySegment seg = Arena.global().allocate(4096, 4096);
        MemoryWord never = MemoryWord.word32(seg, 0, "never written");
        int before = StreamCalls.registered();
        s.post(MemopBatch.of(new Memop.Wait32(never, 1, WaitCondition.GEQ)));
        AtomicLong ran = new AtomicLong();
        s.launch(ran::incrementAndGet);
        Event e = s.record();
        s.close();
        expect(e.isDone() && e.failure() != null, "the pending event after close: " + e);
        out.accept("closed event: " + e.failure().getMessage());
        expect(StreamCalls.registered() == before, "host tasks left registered: " + (StreamCalls.registered() - before));
        out.accept("post after close: " + refusal(() -> s.post(MemopBatch.of(new Memop.Write32(never, 1, true)))));
        never.set32(1, true);
        expect(ran.get() == 0, "a dropped host task ran");
        s.close();
    }

    /**
     * Every public call refuses a null argument with a message naming the parameter before anything is queued, and
     * a closed stream refuses work; the stream stays usable after the refusals.
     */
    void arguments() {
        try (Arena arena = Arena.ofShared(); CudaAddressMap map = new CudaAddressMap(context);
             CudaStream s = CudaStream.create("arguments", context, map, PATIENT)) {
            MemorySegment page = arena.allocate(4096, 4096);
            MemoryWord word = MemoryWord.word32(page, 0, "word");
            jcuda.Pointer params = jcuda.Pointer.to(new int[1]);
            jcuda.driver.CUfunction function = new jcuda.driver.CUfunction();
            refused(() -> CudaStream.create(null, context), "name");
            refused(() -> CudaStream.create("x", null), "context");
            refused(() -> CudaStream.create(null, context, map, PATIENT), "name");
            refused(() -> CudaStream.create("x", null, map, PATIENT), "context");
            refused(() -> CudaStream.create("x", context, null, PATIENT), "map");
            refused(() -> CudaStream.create("x", context, map, null), "policy");
            refused(() -> s.post((MemopBatch) null), "batch");
            refused(() -> s.post((List<Descriptor>) null), "descriptors");
            refused(() -> s.post(java.util.Arrays.asList(new Descriptor.WriteValue32(word, 1, 0), null)), "descriptors[1]");
            refused(() -> s.launch(null), "task");
            refused(() -> s.launchKernel(null, 1, 1, 0, params, "k"), "function");
            refused(() -> s.launchKernel(function, 1, 1, 0, null, "k"), "params");
            refused(() -> s.launchKernel(function, 1, 1, 0, params, null), "what");
            refused(() -> s.copyHostToDevice(0x1000, null), "src");
            refused(() -> s.copyDeviceToHost(null, 0x1000), "dst");
            refused(() -> s.waitEvent(null), "event");
            expect(!s.isClosed() && s.failure() == null, "a refused call changed the stream: " + s);
            s.post(List.of(new Descriptor.WriteValue32(word, 7, 0)));
            s.synchronize();
            expect(word.getAcquire32() == 7, "the stream no longer works after the refused calls");
            s.close();
            expect(s.isClosed(), "a closed stream says it is open");
            try {
                s.post(MemopBatch.of(new Memop.Write32(word, 8, false)));
                expect(false, "a closed stream took a batch");
            } catch (IllegalStateException e) {
                out.accept("closed post: " + e.getMessage());
            }
            expect(word.getAcquire32() == 7, "a closed stream wrote a word");
        }
        out.accept("arguments: " + refusals + " null arguments refused");
    }

    private int refusals;

    /** Expects a call to refuse a null argument, naming it. */
    private void refused(Runnable call, String parameter) {
        try {
            call.run();
            expect(false, "a null " + parameter + " was accepted");
        } catch (NullPointerException e) {
            expect((parameter + " must not be null").equals(e.getMessage()), "a null " + parameter + " was refused with '"
                    + e.getMessage() + "'");
            refusals++;
        }
    }

    /** Memops this GPU cannot execute are refused at post, and the stream stays usable. */
    void unsupported() {
        try (Arena arena = Arena.ofShared(); CudaAddressMap map = new CudaAddressMap(context);
             CudaStream s = CudaStream.create("unsupported", context, map, PATIENT)) {
            MemorySegment seg = arena.allocate(4096, 4096);
            MemoryWord w = MemoryWord.word32(seg, 0, "w");
            MemoryWord d = MemoryWord.word64(seg, 8, "d");
            out.accept("nor: " + refusal(() -> s.post(MemopBatch.of(new Memop.Wait32(w, 1, WaitCondition.NOR)))));
            out.accept("wait64: " + refusal(() -> s.post(MemopBatch.of(new Memop.Wait64(d, 1, WaitCondition.EQ)))));
            expect(map.rangeCount() == 0, "a refused batch registered memory");
            s.post(MemopBatch.of(new Memop.Write64(d, 0x0123456789ABCDEFL, true)));
            s.synchronize();
            expect(d.getAcquire64() == 0x0123456789ABCDEFL, "the 64-bit write: " + Long.toHexString(d.getAcquire64()));
        }
    }

    private static String refusal(Runnable r) {
        try {
            r.run();
            return "accepted";
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

    private static byte[] bytes(int n, int first) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (first + i);
        }
        return b;
    }

    private static String hex(MemorySegment seg, long offset, int n) {
        return HexFormat.of().formatHex(seg.asSlice(offset, n).toArray(ValueLayout.JAVA_BYTE));
    }
}
