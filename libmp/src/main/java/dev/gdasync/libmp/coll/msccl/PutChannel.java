package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;
import dev.gdasync.libmp.PutFlags;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The connections of blocking runs where the peers' memory cannot be mapped (ranks on several hosts, the UCX
 * transport): one-sided puts through the runtime's window, the protocol the stream form shares. The receiver's
 * slots and flags lie in the window, a region per thread block; the sender's block fills a staging slot and the
 * caller's thread (the only one that drives the Mp, as NCCL's proxy drives the network) puts the data and then the
 * flag on the same queue pair, so in order; the receiver's consumed count is put back into the sender's
 * acknowledgement word. Flags and acknowledgements carry the run's number (the runtime's epoch) in their upper 32
 * bits, and a run ends only when every message it sent was acknowledged, so the next run needs no barrier.
 */
final class PutChannel {
    /** Puts in flight at most: the Mp's request pool is shared with the caller. */
    private static final int MAX_PENDING_PUTS = 48;

    private final Mp mp;
    private final MscclConfig config;
    private final MemorySegment arena;
    private final MpWindow window;
    private final MemorySegment stage;
    private final MpRegistration stageReg;
    private final ArrayDeque<MpRequest> pending = new ArrayDeque<>();
    private final List<Send> senders = new ArrayList<>();
    private final List<Recv> receivers = new ArrayList<>();
    private long base;

    PutChannel(Mp mp, MscclConfig config, MemorySegment arena, MpWindow window, MemorySegment stage,
               MpRegistration stageReg) {
        this.mp = mp;
        this.config = config;
        this.arena = arena;
        this.window = window;
        this.stage = stage;
        this.stageReg = stageReg;
    }

    /** Starts a run numbered {@code epoch} with these connections (the run's blocks' links). */
    void begin(long epoch, List<SendLink> sends, List<RecvLink> recvs) {
        base = epoch << 32;
        senders.clear();
        receivers.clear();
        for (SendLink s : sends) {
            senders.add((Send) s);
        }
        for (RecvLink r : recvs) {
            receivers.add((Recv) r);
        }
    }

    /**
     * @param tb        this rank's sending block
     * @param peer      the receiving member (communicator rank)
     * @param worldPeer its rank in the Mp
     * @param peerTb    its receiving block
     */
    SendLink sender(int tb, int peer, int worldPeer, int peerTb, int chan) {
        return new Send(tb, peer, worldPeer, peerTb, chan);
    }

    RecvLink receiver(int tb, int peer, int worldPeer, int senderTb, int chan) {
        return new Recv(tb, peer, worldPeer, senderTb, chan);
    }

    /**
     * The caller's thread's part of a run: puts every message a block made ready and acknowledges every message a
     * block consumed, and reaps finished puts.
     *
     * @return whether it did anything
     */
    boolean move() {
        boolean progress = false;
        long region = config.regionBytes();
        for (Send s : senders) {
            long ready = s.ready.getAcquire();
            while (s.posted < ready && pending.size() < MAX_PENDING_PUTS) {
                long seq = ++s.posted;
                int slot = (int) ((seq - 1) % config.slots());
                long at = region * s.tb;
                long into = region * s.peerTb;
                pending.add(mp.iput(stage.asSlice(at + (long) slot * config.slotBytes(), s.messageBytes[slot]),
                        stageReg, s.worldPeer, into + (long) slot * config.slotBytes(), window, 0));
                MemorySegment flag = stage.asSlice(at + config.flagsOffset() + 8L * slot, 8);
                flag.set(ValueLayout.JAVA_LONG, 0, base + seq);
                pending.add(mp.iput(flag, stageReg, s.worldPeer, into + config.flagsOffset() + 8L * slot, window,
                        PutFlags.INLINE));
                progress = true;
            }
        }
        for (Recv r : receivers) {
            long consumed = r.consumed.getAcquire();
            if (consumed > r.acked && pending.size() < MAX_PENDING_PUTS) {
                r.acked = consumed;
                MemorySegment word = stage.asSlice(region * r.tb + config.ackOffset(), 8);
                word.set(ValueLayout.JAVA_LONG, 0, base + consumed);
                pending.add(mp.iput(word, stageReg, r.worldPeer, region * r.senderTb + config.ackOffset(), window,
                        PutFlags.INLINE));
                progress = true;
            }
        }
        while (!pending.isEmpty() && mp.test(pending.peek())) {
            pending.poll();
            progress = true;
        }
        return progress;
    }

    /** Waits for every put of the run to complete (the run's last step). */
    void finish() {
        while (!pending.isEmpty()) {
            mp.wait(pending.poll());
        }
    }

    /** A staging slot filled by the block, put by the caller's thread. */
    private final class Send extends SendLink {
        private static final VarHandle ACK = ValueLayout.JAVA_LONG.varHandle();
        final int tb;
        final int worldPeer;
        final int chan;
        final long[] messageBytes = new long[config.slots()];
        /** Messages filled and ready to put (written by the block, read by the caller's thread). */
        final AtomicLong ready = new AtomicLong();
        /** Messages put (the caller's thread only). */
        long posted;
        private long sent;

        Send(int tb, int peer, int worldPeer, int peerTb, int chan) {
            super(peer, peerTb);
            this.tb = tb;
            this.worldPeer = worldPeer;
            this.chan = chan;
        }

        @Override
        void begin(boolean receiverFree) {
            ready.set(0);
            posted = 0;
            sent = 0;
        }

        private long ack() {
            return (long) ACK.getAcquire(arena, config.regionBytes() * tb + config.ackOffset());
        }

        @Override
        boolean ready(long q, boolean direct) {
            return q <= config.slots() || ack() >= base + q - config.slots();
        }

        @Override
        MemorySegment slots() {
            return stage;
        }

        @Override
        long slotOffset(long q) {
            return config.regionBytes() * tb + ((q - 1) % config.slots()) * config.slotBytes();
        }

        @Override
        void publish(long q, long bytes) {
            messageBytes[(int) ((q - 1) % config.slots())] = bytes;
            sent = q;
            ready.setRelease(q);
        }

        @Override
        boolean drained() {
            return sent == 0 || posted == sent && ack() >= base + sent;
        }

        @Override
        String waitingFor(long q, boolean direct) {
            if (q > sent) {
                return "a free slot to rank " + peer + " on channel " + chan + " (message " + (q - config.slots())
                        + " not yet acknowledged)";
            }
            return "rank " + peer + " to acknowledge message " + sent;
        }
    }

    /** The block's region of the window: the sender's puts land there. */
    private final class Recv extends RecvLink {
        private static final VarHandle FLAG = ValueLayout.JAVA_LONG.varHandle();
        final int tb;
        final int worldPeer;
        final int senderTb;
        final int chan;
        /** Messages consumed (written by the block, read by the caller's thread). */
        final AtomicLong consumed = new AtomicLong();
        /** Messages acknowledged (the caller's thread only). */
        long acked;

        Recv(int tb, int peer, int worldPeer, int senderTb, int chan) {
            super(peer);
            this.tb = tb;
            this.worldPeer = worldPeer;
            this.senderTb = senderTb;
            this.chan = chan;
        }

        @Override
        void begin() {
            consumed.set(0);
            acked = 0;
        }

        @Override
        boolean arrived(long q) {
            long at = config.regionBytes() * tb + config.flagsOffset() + 8L * ((q - 1) % config.slots());
            return (long) FLAG.getAcquire(arena, at) >= base + q;
        }

        @Override
        MemorySegment slots() {
            return arena;
        }

        @Override
        long slotOffset(long q) {
            return config.regionBytes() * tb + ((q - 1) % config.slots()) * config.slotBytes();
        }

        @Override
        void consumed(long q) {
            consumed.setRelease(q);
        }

        @Override
        boolean drained() {
            return acked == consumed.get();
        }

        @Override
        String waitingFor(long q) {
            return "message " + q + " from rank " + peer + " on channel " + chan;
        }
    }
}
