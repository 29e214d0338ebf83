package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.DescriptorFlags;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A PE's operations rung by streams (the SA model), built from Mp's prepared requests and stream descriptors: a put
 * is a prepared RDMA write from the symmetric heap, rung by the stream; a SET signal is a stream write of the value
 * into a per-stream slot followed by a put of that slot; an ADD signal is a prepared fetch-and-add; a quiet is a
 * stream wait for the completions of everything the stream rang since its last quiet.
 *
 * <p>Slot reuse is safe by the stream's own order: each stream has {@link #SLOTS} slots used round-robin, and after
 * {@link #AUTO_QUIET} requests without a quiet the stream is made to quiet (a wait for their completions; completing
 * early is always allowed), so a slot is rewritten only after the request that read it last completed.
 *
 * <p>The CPU reaps the requests a stream waited for as they complete (non-blocking, at every call on that stream);
 * when more than {@link #MAX_AWAITED} of a stream wait to be reaped it waits for the oldest (the Mp's request pool is
 * finite); at close ({@link #reapAll}) it waits for the streams to pass every wait; and a closed stream's slots are
 * freed when another stream is first used.
 */
final class StreamRma {
    /** Signal slots per stream. */
    static final int SLOTS = 1024;
    /** Requests a stream may ring before the runtime makes it wait for their completions. */
    static final int AUTO_QUIET = 128;
    /** Awaited requests the CPU lets wait for reaping before it blocks on the oldest. */
    static final int MAX_AWAITED = 1024;
    private static final VarHandle LONG = JAVA_LONG.varHandle();

    private final Mp mp;
    private final MpWindow window;
    private final MemorySegment heap;
    private final MpRegistration heapReg;
    private final Map<Stream, PerStream> streams = new IdentityHashMap<>();

    /** What one stream has: its signal slots and the requests it rang since its last quiet. */
    private static final class PerStream {
        final MemorySegment slots;
        final MpRegistration slotsReg;
        final List<MpRequest> rung = new ArrayList<>();
        /** Requests the stream waits for (it quieted them); the CPU reaps them in order. */
        final ArrayDeque<MpRequest> awaited = new ArrayDeque<>();
        int next;
        long barriers;

        PerStream(MemorySegment slots, MpRegistration slotsReg) {
            this.slots = slots;
            this.slotsReg = slotsReg;
        }

        MemorySegment nextSlot() {
            MemorySegment s = slots.asSlice(8L * next, 8);
            next = (next + 1) % SLOTS;
            return s;
        }
    }

    StreamRma(Mp mp, MpWindow window, MemorySegment heap) {
        this.mp = mp;
        this.window = window;
        this.heap = heap;
        this.heapReg = mp.register(heap);
    }

    /** A put from this PE's heap at {@code sourceOffset} to {@code pe}'s heap at {@code destOffset}, rung by the stream. */
    void put(long destOffset, long sourceOffset, long bytes, int pe, Stream stream) {
        PerStream s = of(stream);
        if (pe == mp.rank()) {
            stream.launch(() -> MemorySegment.copy(heap, sourceOffset, heap, destOffset, bytes));
            return;
        }
        MpRequest r = mp.putPrepare(heap.asSlice(sourceOffset, bytes), heapReg, pe, destOffset, window, 0);
        ring(s, r, stream);
    }

    /** A signal update rung by the stream after everything it rang before (to that PE: in queue order). */
    void signal(long sigOffset, long value, ShmemSignalOp op, int pe, Stream stream) {
        PerStream s = of(stream);
        if (pe == mp.rank()) {
            if (op == ShmemSignalOp.SET) {
                stream.post(List.of(new Descriptor.WriteMemory(heap, sigOffset, bytes(value),
                        DescriptorFlags.WRITE_MEMORY_PRE_BARRIER)));
            } else {
                stream.launch(() -> LONG.getAndAdd(heap, sigOffset, value));
            }
            return;
        }
        MemorySegment slot = s.nextSlot();
        MpRequest r;
        if (op == ShmemSignalOp.SET) {
            // Written by the stream, in its order, then read by the NIC when the stream rings the put.
            stream.post(List.of(new Descriptor.WriteMemory(slot, 0, bytes(value),
                    DescriptorFlags.WRITE_MEMORY_PRE_BARRIER | DescriptorFlags.WRITE_MEMORY_POST_BARRIER)));
            r = mp.putPrepare(slot, s.slotsReg, pe, sigOffset, window, 0);
        } else {
            r = mp.fetchAddPrepare(slot, s.slotsReg, pe, sigOffset, value, window);
        }
        ring(s, r, stream);
    }

    /** Makes the stream wait for the completions of everything it rang since its last quiet. */
    void quiet(Stream stream) {
        PerStream s = of(stream);
        if (!s.rung.isEmpty()) {
            mp.waitAllOnStream(s.rung, stream);
            s.awaited.addAll(s.rung);
            s.rung.clear();
        }
        reapCompleted(s);
    }

    /**
     * Makes the stream wait until the 64-bit signal word's low 32 bits satisfy a GE (wrap-aware: {@code (int)(x - v)
     * >= 0}) or EQ comparison: stream waits are 32-bit.
     */
    void waitWord(long offset, ShmemCmp cmp, long value, Stream stream) {
        boolean little = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
        MemoryWord low = MemoryWord.word32(heap, offset + (little ? 0 : 4), "shmem signal at heap offset " + offset);
        mp.wait32OnStream(low, (int) value, cmp == ShmemCmp.EQ ? WaitCondition.EQ : WaitCondition.GEQ, stream);
    }

    /**
     * A barrier of every PE on the stream: quiet, then an ADD of one to every other PE's barrier counter, then a wait
     * until this PE's counter reached (n - 1) times the stream's barrier count.
     */
    void barrierAll(long counterOffset, Stream stream) {
        quiet(stream);
        PerStream s = of(stream);
        int n = mp.size();
        for (int p = 0; p < n; p++) {
            if (p != mp.rank()) {
                signal(counterOffset, 1, ShmemSignalOp.ADD, p, stream);
            }
        }
        s.barriers++;
        waitWord(counterOffset, ShmemCmp.GE, s.barriers * (n - 1), stream);
    }

    /**
     * Has every stream wait for what it rang, and reaps everything on the CPU: returns once every stream passed those
     * waits. The first failure is thrown after all were reaped.
     */
    void reapAll() {
        for (Map.Entry<Stream, PerStream> e : streams.entrySet()) {
            if (!e.getValue().rung.isEmpty() && !e.getKey().isClosed()) {
                quiet(e.getKey());
            }
        }
        RuntimeException first = null;
        for (PerStream s : streams.values()) {
            while (!s.awaited.isEmpty()) {
                try {
                    mp.wait(s.awaited.poll());
                } catch (RuntimeException e) {
                    first = first == null ? e : first;
                }
            }
        }
        for (PerStream s : streams.values()) {
            // A closed stream never rang these: Mp takes them back when it closes; nothing here to wait for.
            s.rung.clear();
        }
        if (first != null) {
            throw first;
        }
    }

    /** Frees the slots and the heap's registration (the runtime is closing). */
    void close() {
        for (PerStream s : streams.values()) {
            mp.deregister(s.slotsReg);
            mp.free(s.slots);
        }
        streams.clear();
        mp.deregister(heapReg);
    }

    private void ring(PerStream s, MpRequest r, Stream stream) {
        mp.iputPostOnStream(r, stream);
        s.rung.add(r);
        if (s.rung.size() >= AUTO_QUIET) {
            quiet(stream);
        }
        reapCompleted(s);
    }

    /**
     * Reaps a stream's awaited requests that completed, oldest first; blocks only while too many wait to be reaped
     * (for the stream to pass its waits).
     */
    private void reapCompleted(PerStream s) {
        while (s.awaited.size() > MAX_AWAITED) {
            mp.wait(s.awaited.poll());
        }
        while (!s.awaited.isEmpty() && mp.test(s.awaited.peek())) {
            s.awaited.poll();
        }
    }

    /**
     * @return the stream's state, after checking that it can take work: a request prepared and then refused by a
     *         closed or failed stream would stay prepared in its queue pair and block the CPU's later posts
     */
    private PerStream of(Stream stream) {
        if (stream.isClosed()) {
            throw new IllegalStateException("stream '" + stream.name() + "' is closed");
        }
        if (stream.failure() != null) {
            throw new dev.gdasync.gdsync.stream.StreamFailedException(stream.name(), stream.failure());
        }
        PerStream s = streams.get(stream);
        if (s == null) {
            forgetClosedStreams();
            MemorySegment slots = mp.allocate(8L * SLOTS);
            MpRegistration reg;
            try {
                reg = mp.register(slots);
            } catch (RuntimeException e) {
                mp.free(slots);
                throw e;
            }
            s = new PerStream(slots, reg);
            streams.put(stream, s);
        }
        return s;
    }

    /**
     * Frees the slots of streams closed since they were last used (a program that makes a stream per phase would
     * otherwise keep a registration per stream): their awaited requests are reaped first, as the NIC may still
     * write a fetch-and-add's result into a slot until it completed.
     */
    private void forgetClosedStreams() {
        streams.entrySet().removeIf(e -> {
            PerStream s = e.getValue();
            if (!e.getKey().isClosed() || !s.rung.isEmpty()) {
                return false;
            }
            while (!s.awaited.isEmpty()) {
                mp.wait(s.awaited.poll());
            }
            mp.deregister(s.slotsReg);
            mp.free(e.getValue().slots);
            return true;
        });
    }

    private static byte[] bytes(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(value).array();
    }
}
