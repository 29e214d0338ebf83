package dev.gdasync.libmp.mpj;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The fragments between this rank and one peer, over libmp's queue pair to it: {@code slots} receive slots of
 * {@code slotBytes} each, always posted (each reposted as soon as its fragment is taken), and as many send slots,
 * filled from a FIFO backlog of outbound messages while slots are free. Driven under the device's lock.
 */
final class PeerChannel {
    private record Posted(int slot, MpRequest request) {
    }

    private record InFlight(int slot, MpRequest request) {
    }

    final int peer;
    private final Mp mp;
    private final int slotBytes;
    private final MemorySegment recvMemory;
    private final MemorySegment sendMemory;
    private final MpRegistration recvReg;
    private final MpRegistration sendReg;
    private final ArrayDeque<Posted> posted = new ArrayDeque<>();
    private final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
    private final ArrayDeque<Integer> freeSendSlots = new ArrayDeque<>();
    private final ArrayDeque<Outbound> backlog = new ArrayDeque<>();
    /** Synchronous sends to this peer waiting for its acknowledgement, by sequence number. */
    private final Map<Long, DeviceRequest> awaitingAck = new HashMap<>();
    private long nextSequence;
    private Inbound assembling;

    PeerChannel(Mp mp, int peer, int slots, int slotBytes) {
        this.mp = mp;
        this.peer = peer;
        this.slotBytes = slotBytes;
        this.recvMemory = mp.allocate((long) slots * slotBytes);
        this.sendMemory = mp.allocate((long) slots * slotBytes);
        this.recvReg = mp.register(recvMemory);
        this.sendReg = mp.register(sendMemory);
        for (int s = 0; s < slots; s++) {
            freeSendSlots.add(s);
        }
    }

    /** Posts every receive slot: called once every rank's channels exist. */
    void postAll(int slots) {
        for (int s = 0; s < slots; s++) {
            posted.add(new Posted(s, mp.irecv(slot(recvMemory, s), peer, recvReg)));
        }
    }

    private MemorySegment slot(MemorySegment memory, int s) {
        return memory.asSlice((long) s * slotBytes, slotBytes);
    }

    /** @return the next sequence number of a message to this peer */
    long nextSequence() {
        return nextSequence++;
    }

    /** Queues a message (or an acknowledgement) behind those already waiting. */
    void enqueue(Outbound o) {
        backlog.add(o);
    }

    /** A synchronous send waits for its acknowledgement. */
    void awaitAck(long sequence, DeviceRequest r) {
        awaitingAck.put(sequence, r);
    }

    /** @return whether nothing is waiting to be sent or in flight */
    boolean idle() {
        return backlog.isEmpty() && inFlight.isEmpty();
    }

    /**
     * Reaps completed sends, fills free send slots from the backlog and sends them, reaps arrived fragments and
     * reposts their slots.
     *
     * @param started    takes every message when its header arrived, before its bytes: binds it to a receive or
     *                   makes it assemble itself
     * @param arrived    takes every message once its last fragment arrived
     * @param sendDone   takes every request whose message is entirely copied into send slots
     * @param ackArrived takes every synchronous send the peer acknowledged
     * @return how much happened (0: nothing)
     * @throws dev.gdasync.libmp.MpException if a request of the queue pair failed (the peer is gone, say)
     */
    int progress(Consumer<Inbound> started, Consumer<Inbound> arrived, Consumer<DeviceRequest> sendDone,
                 Consumer<DeviceRequest> ackArrived) {
        int work = 0;
        while (!inFlight.isEmpty() && mp.test(inFlight.peek().request())) {
            freeSendSlots.add(inFlight.poll().slot());
            work++;
        }
        while (!backlog.isEmpty() && !freeSendSlots.isEmpty()) {
            Outbound o = backlog.peek();
            int s = freeSendSlots.poll();
            MemorySegment slot = slot(sendMemory, s);
            int n = o.nextFragment(slot);
            inFlight.add(new InFlight(s, mp.isend(slot.asSlice(0, n), peer, sendReg)));
            if (o.isCopied()) {
                backlog.poll();
                if (o.request != null) {
                    sendDone.accept(o.request);
                }
            }
            work++;
        }
        while (!posted.isEmpty() && mp.test(posted.peek().request())) {
            int s = posted.poll().slot();
            MemorySegment slot = slot(recvMemory, s);
            take(slot, started, arrived, ackArrived);
            posted.add(new Posted(s, mp.irecv(slot, peer, recvReg)));
            work++;
        }
        return work;
    }

    private void take(MemorySegment slot, Consumer<Inbound> started, Consumer<Inbound> arrived,
                      Consumer<DeviceRequest> ackArrived) {
        if (assembling == null) {
            int kind = Frames.getInt(slot, Frames.KIND);
            long sequence = Frames.getLong(slot, Frames.SEQUENCE);
            if (kind == Frames.ACK) {
                DeviceRequest r = awaitingAck.remove(sequence);
                if (r == null) {
                    throw new IllegalStateException("rank " + peer + " acknowledged synchronous send #" + sequence
                            + ", which this rank is not waiting for");
                }
                ackArrived.accept(r);
                return;
            }
            if (kind != Frames.DATA) {
                throw new IllegalStateException("a fragment from rank " + peer + " starts with 0x"
                        + Integer.toHexString(kind) + ", not a message header");
            }
            Inbound m = new Inbound(peer, Frames.getInt(slot, Frames.CONTEXT), Frames.getInt(slot, Frames.TAG),
                    Frames.getInt(slot, Frames.TYPE), Frames.getInt(slot, Frames.ELEMENTS),
                    (Frames.getInt(slot, Frames.FLAGS) & Frames.FLAG_SYNC) != 0, sequence,
                    Frames.getInt(slot, Frames.STATIC_LENGTH), Frames.getInt(slot, Frames.DYNAMIC_LENGTH), null);
            started.accept(m);
            m.append(slot, Frames.HEADER, (int) Math.min(slotBytes - Frames.HEADER, m.total()));
            if (m.isComplete()) {
                arrived.accept(m);
            } else {
                assembling = m;
            }
            return;
        }
        Inbound m = assembling;
        m.append(slot, 0, (int) Math.min(slotBytes, m.remaining()));
        if (m.isComplete()) {
            assembling = null;
            arrived.accept(m);
        }
    }

    /** @return the receives posted to the peer, for a wait that parks until one completes */
    MpRequest headReceive() {
        Posted p = posted.peek();
        return p == null ? null : p.request();
    }
}
