package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.PutFlags;
import dev.gdasync.gdsync.stream.Stream;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The fragments between this rank and one peer: the peer's ring of {@code slots} receive slots of {@code slotBytes}
 * each in this rank's {@link SlotRings}, which the peer fills one-sided (a fragment, then its stamp), and this rank's
 * ring at the peer, which it fills the same way from a FIFO backlog of outbound messages: stores on one host, puts
 * from as many send slots here between hosts. The device posts no receives: the queue pair's two-sided messages are
 * the program's.
 *
 * <p>Credits: a fragment is written only into a slot of the peer's ring that the peer has emptied, so nothing is
 * overwritten before it was taken. This rank has sent {@code sent} fragments; the peer writes into this rank's
 * {@link DeviceWindow} how many it has taken out of its ring; at most {@code slots} are outstanding. The peer tells its
 * count once it took half its slots' worth since it last told (so a sender that used all its credits always hears).
 * Driven under the device's lock.
 */
final class PeerChannel {
    /** A send slot whose fragment is on the queue pair: free again once its stamp's put (after the fragment's) ran. */
    private record InFlight(int slot, MpRequest stamp) {
    }

    /**
     * A send prepared on the queue pair for a stream to ring ({@link MpjOnStream#isendOnStream}): the stream writes
     * {@code number} into this peer's rung word once it rang it.
     */
    record StreamSend(Stream stream, int number, DeviceRequest request) {
    }

    /** How long a link failure waits for the news of the job's failure that may explain it. */
    private static final long FAILURE_NEWS_WAIT_NANOS = 1_000_000_000L;

    /** How many of the progress calls that took nothing look at the link (a power of two). */
    private static final int LINK_LOOK_EVERY = 16;

    final int peer;
    private final Mp mp;
    private final int slotBytes;
    private final SlotRings rings;
    private final MemorySegment sendMemory;
    private final MpRegistration sendReg;
    private final MemorySegment[] sendSlots;
    /** Each send slot's stamp, the source of the put that follows its fragment's. */
    private final MemorySegment[] stampSources;
    private final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
    private final ArrayDeque<Integer> freeSendSlots = new ArrayDeque<>();
    private final ArrayDeque<Outbound> backlog = new ArrayDeque<>();
    /** Synchronous sends to this peer waiting for its acknowledgement, by sequence number. */
    private final Map<Long, DeviceRequest> awaitingAck = new HashMap<>();
    /** Rendezvous messages to this peer not yet read by it, by sequence number: their blocks of this rank's area. */
    private final Map<Long, FinWait> awaitingFin = new HashMap<>();
    private final DeviceWindow window;

    /**
     * A rendezvous message's block, freed when the peer read it.
     *
     * @param blocks   the area's (or an extent's) blocks
     * @param mpjOwned whether the block is MPJ's buffer (freed when both MPJ and the reader are done) rather than the
     *                 device's copy (freed when the reader is done)
     */
    private record FinWait(RendezvousPool blocks, long offset, long length, boolean mpjOwned) {
    }
    private final int slots;
    private final int tellEvery;
    private long nextSequence;
    /** Progress calls that took nothing, counted to look at the link every {@link #LINK_LOOK_EVERY}. */
    private int idleLooks;
    /**
     * Sends prepared for streams and not yet seen rung, oldest first. While one is there, no CPU send goes to this
     * peer: the queue pair rings in prepare order, and a CPU post would ring the stream's send early (the queue pair
     * refuses it), so this rank's later messages to the peer wait in the backlog until the stream rang.
     */
    private final ArrayDeque<StreamSend> streamSends = new ArrayDeque<>();
    private int streamNumber;
    private Inbound assembling;
    /** Fragments sent to the peer, and fragments of the peer's taken out of this rank's slots (and told so far). */
    private long sent;
    private long taken;
    private long told;

    PeerChannel(Mp mp, int peer, SlotRings rings, int slots, int slotBytes, DeviceWindow window) {
        this.mp = mp;
        this.peer = peer;
        this.rings = rings;
        this.slotBytes = slotBytes;
        this.slots = slots;
        this.tellEvery = Math.max(1, slots / 2);
        this.window = window;
        this.sendMemory = mp.allocate((long) slots * (slotBytes + 8));
        this.sendReg = mp.register(sendMemory);
        this.sendSlots = new MemorySegment[slots];
        this.stampSources = new MemorySegment[slots];
        for (int s = 0; s < slots; s++) {
            // The slices are made once: a fragment's path allocates no segment.
            sendSlots[s] = sendMemory.asSlice((long) s * slotBytes, slotBytes);
            stampSources[s] = sendMemory.asSlice((long) slots * slotBytes + 8L * s, 8);
        }
        for (int s = 0; s < slots; s++) {
            freeSendSlots.add(s);
        }
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

    /**
     * A rendezvous message waits in this rank's area (or an extent of it) until the peer has read it.
     *
     * @param blocks   the area's or the extent's blocks
     * @param offset   its block there
     * @param length   its length
     * @param mpjOwned whether the block is MPJ's buffer (freed when both MPJ and the reader are done) rather than the
     *                 device's copy (freed when the reader is done)
     */
    void awaitFin(long sequence, RendezvousPool blocks, long offset, long length, boolean mpjOwned) {
        awaitingFin.put(sequence, new FinWait(blocks, offset, length, mpjOwned));
    }

    /** @return whether nothing is waiting to be sent, in flight, or waiting in this rank's area for the peer to read */
    boolean idle() {
        return backlog.isEmpty() && inFlight.isEmpty() && awaitingFin.isEmpty() && streamSends.isEmpty();
    }

    /** @return whether nothing is waiting to be sent or in flight (rendezvous messages may still wait to be read) */
    boolean allSent() {
        return backlog.isEmpty() && inFlight.isEmpty() && streamSends.isEmpty();
    }

    /** @return whether fragments wait for the peer's credits and some have come */
    boolean creditsCame() {
        return !backlog.isEmpty() && streamSends.isEmpty() && sent - window.creditsFrom(peer) < slots
                && !heldByStreamSends();
    }

    /**
     * Reaps completed sends, fills free send slots from the backlog and sends them, takes arrived fragments out of
     * the peer's ring.
     *
     * @param started    takes every message when its header arrived, before its bytes: binds it to a receive or
     *                   makes it assemble itself
     * @param arrived    takes every message once its last fragment arrived
     * @param sendDone   takes every request whose message is entirely copied out (into send slots or the peer's ring)
     * @param ackArrived takes every synchronous send the peer acknowledged
     * @return how much happened (0: nothing)
     * @throws dev.gdasync.libmp.MpException if a request of the queue pair failed (the peer is gone, say)
     * @throws IllegalStateException         if nothing arrived and the link to the peer failed (its process is gone)
     */
    int progress(Consumer<Inbound> started, Consumer<Inbound> arrived, Consumer<DeviceRequest> sendDone,
                 Consumer<DeviceRequest> ackArrived) {
        int work = 0;
        while (!inFlight.isEmpty() && mp.test(inFlight.peek().stamp())) {
            freeSendSlots.add(inFlight.poll().slot());
            work++;
        }
        work += sendBacklog(sendDone);
        long before = taken;
        while (rings.arrived(peer, taken)) {
            // taken++ first: a take that throws (a malformed fragment) fails the device, and the slot is not read again.
            MemorySegment slot = rings.slot(peer, (int) (taken++ % slots));
            take(slot, started, arrived, ackArrived);
        }
        if (taken == before && (++idleLooks & LINK_LOOK_EVERY - 1) == 0) {
            // No receive of the queue pair fails when the peer dies (the device posts none): its link says so. A
            // waiting thread looks every few rounds, which keeps its loop short and still finds it within microseconds.
            String why = mp.linkFailure(peer);
            if (why != null) {
                throw new IllegalStateException(withFailureNews(why));
            }
        }
        work += (int) (taken - before);
        if (taken - told >= tellEvery && window.publishTaken(peer, taken)) {
            told = taken;
        }
        return work;
    }

    /**
     * A peer's queue pair in the error state is what this rank sees when a survivor of a failed job (one that aborted,
     * say) aborted its queue pairs before this rank heard of the failure: the news is on its way, and the error should
     * name the rank that failed and why. So unless the peer's own process is gone, this waits a bounded moment for it.
     */
    private String withFailureNews(String why) {
        if (why.contains(ErrorDetail.PEER_DEAD.text())) {
            return why;
        }
        long deadline = System.nanoTime() + FAILURE_NEWS_WAIT_NANOS;
        String failed = mp.failure();
        while (failed == null && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(200_000); // an error path: a bounded pause, in steps
            failed = mp.failure();
        }
        return failed != null ? "the job failed: " + failed + " (" + why + ")" : why;
    }

    /**
     * @return whether this rank's fragments to the peer wait for the program's stream sends to it: between hosts, while
     *         the queue pair holds such sends not rung yet (a put would be refused); never on one host, where the
     *         fragments are stores and take no queue pair
     */
    private boolean heldByStreamSends() {
        return !rings.mapsPeer(peer) && mp.sendsAwaitStream(peer);
    }

    /** @return whether the peer's next fragment is in this rank's ring, not yet taken */
    boolean fragmentWaiting() {
        return rings.arrived(peer, taken);
    }

    /**
     * Puts the backlog's next fragment, filled into send slot {@code s}, into the peer's ring (between hosts): the
     * fragment, then its stamp, on the queue pair in that order.
     *
     * @param o the message
     * @param s a free send slot
     * @return the stamp's put: once it ran, the fragment's did, and the send slot is free
     */
    private MpRequest putFragment(Outbound o, int s) {
        long index = sent;
        int there = (int) (index % slots);
        int me = mp.rank();
        int n = o.nextFragment(sendSlots[s]);
        mp.iput(sendSlots[s].asSlice(0, n), sendReg, peer, rings.slotAt(me, there), rings.window(), PutFlags.NOWAIT);
        stampSources[s].set(ValueLayout.JAVA_LONG, 0, index + 1);
        return mp.iput(stampSources[s], sendReg, peer, rings.stampAt(me, there), rings.window(), 0);
    }

    /**
     * Sends what the backlog holds while send slots and the peer's credits allow.
     *
     * @param sendDone takes every request whose message is entirely copied out (into send slots or the peer's ring)
     * @return how many fragments were sent
     */
    int sendBacklog(Consumer<DeviceRequest> sendDone) {
        int work = 0;
        if (!streamSends.isEmpty()) {
            return 0; // behind a stream's send: see streamSends
        }
        if (!backlog.isEmpty() && heldByStreamSends()) {
            return 0; // behind the program's own stream sends to the peer, which the queue pair rings first
        }
        // One host: the fragment goes straight into the peer's slot (mapped here, and free: the credits say so), then
        // its stamp, both stores; no send slot, no request. Between hosts: a send slot and two puts.
        boolean direct = rings.mapsPeer(peer);
        while (!backlog.isEmpty() && (direct || !freeSendSlots.isEmpty()) && sent - window.creditsFrom(peer) < slots) {
            Outbound o = backlog.peek();
            if (direct) {
                o.nextFragment(rings.peerSlot(peer, (int) (sent % slots)));
                rings.stampPeer(peer, sent);
            } else {
                int s = freeSendSlots.poll();
                inFlight.add(new InFlight(s, putFragment(o, s)));
            }
            sent++;
            if (o.isCopied()) {
                backlog.poll();
                if (o.request != null) {
                    sendDone.accept(o.request);
                }
            }
            work++;
        }
        if (direct && work > 0) {
            mp.wakePeer(peer); // a peer parked in its wait sees the stamps now, as a put's completion would tell it
        }
        return work;
    }

    /**
     * The lean path of a blocking send: on one host, with nothing of this rank's waiting to go to the peer before it
     * and a credit free, a message that fits one fragment goes straight into the peer's slot, as {@link #sendBacklog}
     * would write it, with no request and no backlog.
     *
     * @param memory the message's static section is there (the buffer's memory; null when it is empty), from
     *               {@code offset}, {@code n} bytes (it has no dynamic section)
     * @return whether it went (false: nothing changed, and the caller sends it the usual way)
     */
    boolean sendWhole(int context, int tag, int type, int elements, ByteBuffer memory, int offset, int n) {
        // (Past the buffer's limit, which MPJ may have set, the usual way reads it through a view of its capacity.)
        if (!backlog.isEmpty() || !streamSends.isEmpty() || !rings.mapsPeer(peer) || n > slotBytes - Frames.HEADER
                || n > 0 && offset + n > memory.limit() || sent - window.creditsFrom(peer) >= slots) {
            return false;
        }
        int s = (int) (sent % slots);
        Frames.header(rings.peerSlot(peer, s), Frames.DATA, context, tag, n, 0, type, elements, 0, nextSequence++);
        if (n > 0) {
            rings.peerSlotBuffer(peer, s).put(Frames.HEADER, memory, offset, n);
        }
        rings.stampPeer(peer, sent);
        sent++;
        mp.wakePeer(peer);
        return true;
    }

    /**
     * For the lean path of a blocking receive: the peer's next fragment, if it has arrived and is a whole message that
     * a receive of {@code tag} (or {@link xdev.Device#ANY_TAG}) and {@code context} takes, of one fragment, not
     * synchronous, without objects. The caller reads it, then calls {@link #takenWhole}.
     *
     * @return its slot, or null (nothing arrived, or it is to be taken the usual way)
     */
    MemorySegment wholeMessageWaiting(int tag, int context) {
        if (assembling != null || !rings.arrived(peer, taken)) {
            return null;
        }
        MemorySegment slot = rings.slot(peer, (int) (taken % slots));
        int length = Frames.getInt(slot, Frames.STATIC_LENGTH);
        boolean whole = Frames.getInt(slot, Frames.KIND) == Frames.DATA
                && Frames.getInt(slot, Frames.CONTEXT) == context
                && (tag == xdev.Device.ANY_TAG || Frames.getInt(slot, Frames.TAG) == tag)
                && Frames.getInt(slot, Frames.FLAGS) == 0 && Frames.getInt(slot, Frames.DYNAMIC_LENGTH) == 0
                && length >= 0 && length <= slotBytes - Frames.HEADER;
        return whole ? slot : null;
    }

    /** @return the slot {@link #wholeMessageWaiting} returned, as a buffer (absolute access only) */
    ByteBuffer waitingSlotBuffer() {
        return rings.slotBuffer(peer, (int) (taken % slots));
    }

    /** The fragment {@link #wholeMessageWaiting} returned was read: its slot goes back to the peer. */
    void takenWhole() {
        taken++;
        if (taken - told >= tellEvery && window.publishTaken(peer, taken)) {
            told = taken;
        }
    }

    private void take(MemorySegment slot, Consumer<Inbound> started, Consumer<Inbound> arrived,
                      Consumer<DeviceRequest> ackArrived) {
        if (assembling == null) {
            int kind = Frames.getInt(slot, Frames.KIND);
            long sequence = Frames.getLong(slot, Frames.SEQUENCE);
            if (kind == Frames.FIN) {
                FinWait block = awaitingFin.remove(sequence);
                if (block == null) {
                    throw new IllegalStateException("rank " + peer + " finished reading rendezvous message #" + sequence
                            + ", which this rank did not send");
                }
                if (block.mpjOwned()) {
                    block.blocks().readerDone(block.offset());
                } else {
                    block.blocks().release(block.offset(), block.length());
                }
                DeviceRequest r = awaitingAck.remove(sequence);
                if (r != null) {
                    ackArrived.accept(r);
                }
                return;
            }
            if (kind == Frames.RTS) {
                Inbound m = new Inbound(peer, Frames.getInt(slot, Frames.CONTEXT), Frames.getInt(slot, Frames.TAG),
                        Frames.getInt(slot, Frames.TYPE), Frames.getInt(slot, Frames.ELEMENTS),
                        (Frames.getInt(slot, Frames.FLAGS) & Frames.FLAG_SYNC) != 0, sequence,
                        Frames.getInt(slot, Frames.STATIC_LENGTH), 0, null);
                m.rdvOffset = Frames.getLong(slot, Frames.RTS_OFFSET);
                m.extentAddress = Frames.getLong(slot, Frames.RTS_EXTENT_ADDRESS);
                m.extentKey = Frames.getLong(slot, Frames.RTS_EXTENT_KEY);
                m.writtenAt = Frames.getLong(slot, Frames.RTS_WRITTEN);
                if (m.rdvOffset < 0 || m.staticLength < 0) {
                    throw new IllegalStateException("rank " + peer + " announced a rendezvous message of "
                            + m.staticLength + " bytes at offset " + m.rdvOffset);
                }
                started.accept(m);
                arrived.accept(m);
                return;
            }
            if (kind == Frames.ACK) {
                DeviceRequest r = awaitingAck.remove(sequence);
                if (r == null && !awaitingFin.containsKey(sequence)) {
                    // (A rendezvous message's ACK tells it was matched, read in place; for a send complete already
                    // (its bytes were copied into the area) it says nothing new.)
                    throw new IllegalStateException("rank " + peer + " acknowledged synchronous send #" + sequence
                            + ", which this rank is not waiting for");
                }
                if (r != null) {
                    ackArrived.accept(r);
                }
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

    // ---- sends rung by streams ----

    /**
     * @return whether a stream send to this peer may be prepared now: no earlier message waits in the backlog (it
     *         must reach the queue pair first, in order), a send slot is free, and the stream sends not yet rung are
     *         on the same stream (the queue pair rings one executor's sends at a time)
     */
    boolean readyForStreamSend(Stream stream) {
        if (!backlog.isEmpty() || freeSendSlots.isEmpty()) {
            return false;
        }
        for (StreamSend s : streamSends) {
            if (s.stream() != stream) {
                return false;
            }
        }
        return true;
    }

    /** @return a free send slot's index, taken ({@link #readyForStreamSend} said one is free) */
    int takeSendSlot() {
        return freeSendSlots.poll();
    }

    /** Gives back a slot {@link #takeSendSlot} returned that carries nothing (the stream refused the send). */
    void returnSendSlot(int s) {
        freeSendSlots.addFirst(s);
    }

    /** @return send slot {@code s}'s memory */
    MemorySegment sendSlot(int s) {
        return sendSlots[s];
    }

    /**
     * Puts a filled send slot into the peer's ring when a stream rings it: the fragment's put, then its stamp's, each
     * prepared now and rung by the stream in that order.
     *
     * @param s      the send slot, taken ({@link #takeSendSlot})
     * @param n      the fragment's length
     * @param stream the stream
     * @return the stamp's put
     * @throws PartlyOnStream   if the stream took the fragment's put and refused the stamp's
     * @throws RuntimeException as the stream refuses the fragment's put (nothing is on the stream then)
     */
    MpRequest putFragmentOnStream(int s, int n, Stream stream) {
        long index = sent;
        int there = (int) (index % slots);
        stampSources[s].set(ValueLayout.JAVA_LONG, 0, index + 1);
        int me = mp.rank();
        mp.iputOnStream(sendSlots[s].asSlice(0, n), sendReg, peer, rings.slotAt(me, there), rings.window(),
                PutFlags.NOWAIT, stream);
        try {
            return mp.iputOnStream(stampSources[s], sendReg, peer, rings.stampAt(me, there), rings.window(), 0, stream);
        } catch (RuntimeException e) {
            throw new PartlyOnStream(e);
        }
    }

    /**
     * A stream took a fragment's put and refused its stamp's (it failed or closed in between): the fragment's put
     * stays prepared on the queue pair, ahead of any later post, so nothing more can go to the peer.
     */
    static final class PartlyOnStream extends RuntimeException {
        PartlyOnStream(RuntimeException cause) {
            super(cause.getMessage(), cause);
        }
    }

    /** @return the slots of the peer's ring for this rank (and send slots here) */
    int slots() {
        return slots;
    }

    /** @return the index of the next fragment sent to the peer: it may go once the peer took {@code index - slots + 1} */
    long nextFragment() {
        return sent;
    }

    /**
     * A stream send to the peer is on its stream: it takes the next sequence number (taken by the caller), fragment
     * and stream number, and its slot is in flight behind the fragments sent before it.
     */
    void streamSendPosted(int slot, MpRequest send, StreamSend s) {
        sent++;
        inFlight.add(new InFlight(slot, send));
        streamSends.add(s);
    }

    /** A sequence number {@link #nextSequence} returned is not used after all (its send was refused). */
    void unuseSequence(long sequence) {
        if (sequence != nextSequence - 1) {
            throw new IllegalStateException("sequence " + sequence + " is not the last one taken");
        }
        nextSequence--;
    }

    /** @return the number the stream will write into the rung word for the next stream send to this peer */
    int nextStreamNumber() {
        return streamNumber + 1;
    }

    /** The stream send numbered {@link #nextStreamNumber} was posted. */
    void streamNumberUsed() {
        streamNumber++;
    }

    /** @return whether the oldest stream send not yet seen rung was rung (its number is in the rung word) */
    boolean streamSendRung(int rungNumber) {
        StreamSend head = streamSends.peek();
        return head != null && rungNumber - head.number() >= 0;
    }

    /** @return whether sends prepared for streams wait to be seen rung ({@link #reapRung} has work) */
    boolean hasStreamSends() {
        return !streamSends.isEmpty();
    }

    /**
     * Completes the stream sends the streams rang (their number is in the rung word).
     *
     * @param rungNumber the rung word's value
     * @param rung       takes every request of a send rung
     * @return how many were rung
     * @throws IllegalStateException if the stream that is to ring the oldest send left failed or was closed first:
     *                               this rank's later messages to the peer could never leave
     */
    int reapRung(int rungNumber, Consumer<DeviceRequest> rung) {
        int work = 0;
        while (!streamSends.isEmpty() && rungNumber - streamSends.peek().number() >= 0) {
            rung.accept(streamSends.poll().request());
            work++;
        }
        StreamSend head = streamSends.peek();
        if (head != null && (head.stream().failure() != null || head.stream().isClosed())) {
            Throwable f = head.stream().failure();
            throw new IllegalStateException("stream '" + head.stream().name() + "' " + (f != null ? "failed (" + f + ")"
                    : "was closed") + " before it rang " + head.request() + ": this rank's later messages to rank "
                    + peer + " can never leave");
        }
        return work;
    }
}
