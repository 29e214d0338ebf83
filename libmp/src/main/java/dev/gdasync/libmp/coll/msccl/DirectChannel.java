package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import dev.gdasync.libmp.coll.reduce.ReducingCollectives;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The connections of blocking runs on one communicator whose members all map one another's memory (one host, the
 * software NIC over shared memory): every member's {@link HostArea}, mapped here, and the number of the
 * communicator's current call. A sender writes a message straight into the receiver's slot (or its buffer) and
 * stores the slot's flag with release semantics; the receiver loads the flag with acquire semantics and, when done
 * with the slot, stores its consumed count in its own region, which the sender reads before it reuses the slot. No
 * message, request or thread of the Mp is involved.
 *
 * <p>Calls are numbered per communicator ({@code seq}); flags and consumed counts carry the number in their upper
 * 32 bits, so whatever an earlier call left in a region is below every value this call waits for. Calls alternate
 * between the two halves of a region, and a half is reused by call s only when its owner has finished call s − 2
 * (its done word), so no barrier is needed between calls and in the steady state no sender waits for it. Every
 * call of the runtime on the communicator, whatever runs it, publishes its record and number in the caller's
 * header, so a rank that waits for a peer can tell that the peer called something else.
 *
 * <p>Driven by the thread that calls the runtime (and, with {@link MscclConfig#threads}, by the block threads
 * through their links, each of which touches only its own connection).
 */
final class DirectChannel implements AutoCloseable {
    private final Mp mp;
    private final Communicator comm;
    private final MemorySegment memory;
    private final MpRegistration reg;
    private final HostArea own;
    private final HostArea[] areas;
    private final int slots;
    /** The communicator as messages name it. */
    private final String name;
    /**
     * Per member: the last call in which a message from it arrived here. It sent that message after it finished
     * the call before, so a sender that heard from its receiver in call s − 1 knows that the receiver finished call
     * s − 2 without reading its done word. Written and read with opaque access (blocks may have threads).
     */
    private final long[] heard;
    private static final VarHandle HEARD = MethodHandles.arrayElementVarHandle(long[].class);
    private long seq;
    private CallRecord call;

    private DirectChannel(Mp mp, Communicator comm, MemorySegment memory, MpRegistration reg, HostArea[] areas,
                          int slots) {
        this.mp = mp;
        this.comm = comm;
        this.memory = memory;
        this.reg = reg;
        this.areas = areas;
        this.own = areas[comm.rank()];
        this.slots = slots;
        this.name = "communicator " + comm.context();
        this.heard = new long[comm.size()];
    }

    /**
     * Sets the channel up with the other members (collective over the communicator): each allocates its area and
     * publishes where it is, each maps the others', and all agree whether every member could.
     *
     * @param regions   thread-block regions per area (the most any program for this communicator needs)
     * @param builtin   the communicator's built-in collectives, for the exchange
     * @return the channel, or null when some member cannot map some other's memory (then none uses one)
     */
    static DirectChannel open(Mp mp, Communicator comm, ReducingCollectives builtin, int regions, int slots,
                              long slotBytes) {
        int n = comm.size();
        MemorySegment area = mp.allocate(HostArea.bytes(slots, slotBytes, regions));
        MpRegistration areaReg = mp.register(area);
        MemorySegment rec = mp.allocate(24L * (n + 1));
        MpRegistration recReg = mp.register(rec);
        boolean usable = false;
        try {
            MemorySegment mine = rec.asSlice(0, 24);
            MemorySegment all = rec.asSlice(24, 24L * n);
            mine.set(ValueLayout.JAVA_LONG, 0, area.address());
            mine.set(ValueLayout.JAVA_LONG, 8, areaReg.rkey());
            mine.set(ValueLayout.JAVA_LONG, 16, area.byteSize());
            builtin.allgather(mine, recReg, all, recReg, 3, DataType.INT64);
            HostArea[] areas = new HostArea[n];
            boolean mapped = true;
            for (int m = 0; m < n && mapped; m++) {
                if (m == comm.rank()) {
                    areas[m] = new HostArea(area, slots, slotBytes);
                    continue;
                }
                MemorySegment there = mp.peerMemory(comm.worldRank(m), all.get(ValueLayout.JAVA_LONG, 24L * m),
                        all.get(ValueLayout.JAVA_LONG, 24L * m + 8), all.get(ValueLayout.JAVA_LONG, 24L * m + 16));
                mapped = there != null;
                areas[m] = mapped ? new HostArea(there, slots, slotBytes) : null;
            }
            // Every member must take the same path: agree on whether all of them mapped all the others.
            mine.set(ValueLayout.JAVA_LONG, 0, mapped ? 1 : 0);
            builtin.allreduce(mine, recReg, mine, recReg, 1, DataType.INT64, ReduceOp.MIN);
            usable = mine.get(ValueLayout.JAVA_LONG, 0) == 1;
            return usable ? new DirectChannel(mp, comm, area, areaReg, areas, slots) : null;
        } finally {
            mp.deregister(recReg);
            mp.free(rec);
            if (!usable) {
                mp.deregister(areaReg);
                mp.free(area);
            }
        }
    }

    Communicator comm() {
        return comm;
    }

    /** @return the number of the communicator's current call */
    long seq() {
        return seq;
    }

    /**
     * Starts the communicator's next call: publishes its number, its record and the buffers its direct messages may
     * land in (in and out null: none).
     */
    void begin(CallRecord record, MemorySegment in, MpRegistration inReg, MemorySegment out,
               MpRegistration outReg) {
        seq++;
        boolean buffers = in != null;
        own.publishCall(seq, record == call ? null : record, buffers, buffers ? in.address() : 0,
                buffers ? inReg.rkey() : 0, buffers ? in.byteSize() : 0, buffers ? out.address() : 0,
                buffers ? outReg.rkey() : 0, buffers ? out.byteSize() : 0);
        call = record;
    }

    /** Ends the current call: this rank's regions are free for the next one. */
    void end() {
        own.setDone(seq);
    }

    /** Ends the current call as failed: the peers that wait for this rank fail too instead of timing out. */
    void fail() {
        own.setFailed(seq);
    }

    /**
     * Looks at a peer this rank waits for.
     *
     * @param peer     a member
     * @param stillWaiting re-checks the wait after the peer's header was read: true while it is not satisfied
     * @return why the call cannot finish (the peer failed, is unreachable or called something else), or null
     */
    String trouble(int peer, BooleanSupplier stillWaiting, List<MscclProgram> programs) {
        HostArea a = areas[peer];
        String link = mp.linkFailure(comm.worldRank(peer));
        if (link != null) {
            return who(peer) + " is unreachable: " + link;
        }
        long failed = a.failed();
        if (failed != 0) {
            return who(peer) + " failed its call #" + failed + " on " + name + " and takes no further part";
        }
        long h = a.epoch();
        if (h == seq && !a.callIs(call)) {
            return disagreement(peer, a.call(), seq, programs);
        }
        if (h > seq && stillWaiting.getAsBoolean()) {
            return who(peer) + " has moved on to its call #" + h + " on " + name + " (" + a.call().describe(programs)
                    + ") without doing its part of this rank's call #" + seq + " (" + call.describe(programs)
                    + "): the ranks disagree";
        }
        return null;
    }

    /** @return what a peer this rank waits for is doing, for a timeout's message */
    String state(int peer, List<MscclProgram> programs) {
        long h = areas[peer].epoch();
        if (h < seq) {
            return who(peer) + " has not called it yet (its latest call on " + name + " is #" + h + ")";
        }
        return who(peer) + " is in its call #" + h + " (" + areas[peer].call().describe(programs) + ")";
    }

    String disagreement(int peer, CallRecord theirs, long theirSeq, List<MscclProgram> programs) {
        return who(peer) + " called " + theirs.describe(programs) + " as its call #" + theirSeq + " on " + name
                + ", this rank " + call.describe(programs) + " as its #" + seq + ": the ranks disagree";
    }

    private String who(int m) {
        return "rank " + m + (comm.worldRank(m) != m ? " (world rank " + comm.worldRank(m) + ")" : "");
    }

    /**
     * @param tb     this rank's sending block
     * @param peer   the receiving member
     * @param peerTb its receiving block
     * @param chan   the channel, for messages
     * @param inline whether every message of the run travels in its flag's line
     * @param programs the runtime's programs, for messages
     */
    SendLink sender(int tb, int peer, int peerTb, int chan, boolean inline, List<MscclProgram> programs) {
        return new Send(peer, peerTb, chan, inline, programs);
    }

    /** @param inline whether every message of the run travels in its flag's line */
    RecvLink receiver(int tb, int peer, int chan, boolean inline, List<MscclProgram> programs) {
        return new Recv(tb, peer, chan, inline, programs);
    }

    /** Frees this rank's area (the runtime's close is collective: no peer reads it any more). */
    @Override
    public void close() {
        mp.deregister(reg);
        mp.free(memory);
    }

    /** Writes into the receiver's slots, or its buffer, mapped here. */
    private final class Send extends SendLink {
        private final HostArea peerArea;
        private final int chan;
        private final boolean inline;
        private final List<MscclProgram> programs;
        /** The receiver finished the previous call: its slots are free (checked once per run). */
        private boolean free;
        /** The receiver is in this call and exposes its buffers (checked once per run, before a direct message). */
        private boolean entered;
        /** The receiver's done word as last read. */
        private long peerDone;
        /** The receiver's consumed count as last read in this call. */
        private long peerConsumed;
        private final long[][] mappedKeys = new long[2][3];
        private final MemorySegment[] mapped = new MemorySegment[2];

        Send(int peer, int peerTb, int chan, boolean inline, List<MscclProgram> programs) {
            super(peer, peerTb);
            this.peerArea = areas[peer];
            this.chan = chan;
            this.inline = inline;
            this.programs = programs;
        }

        @Override
        void begin(boolean receiverFree) {
            free = receiverFree;
            entered = false;
            peerConsumed = 0;
        }

        @Override
        boolean ready(long q, boolean direct) {
            if (direct && !entered && !enter()) {
                return false;
            }
            // Inline messages use only flag lines, of which there are more than slots.
            int limit = inline ? peerArea.flags() : slots;
            if (q <= limit) {
                if (!free) {
                    // The receiver's done word only grows: a value seen in an earlier call often answers already.
                    if (peerDone < seq - 2 && (long) HEARD.getOpaque(heard, peer) < seq - 1) {
                        peerDone = peerArea.done();
                        if (peerDone < seq - 2) {
                            return false;
                        }
                        // The same line: a receiver already past this call cannot be waiting for its message.
                        if (peerArea.epoch() > seq) {
                            throw new MscclRunException(who(peer) + " is already in its call #" + peerArea.epoch()
                                    + " on " + name + " (" + peerArea.call().describe(programs) + ") while this rank "
                                    + "sends to it in its call #" + seq + " (" + call.describe(programs)
                                    + "): the ranks disagree");
                        }
                    }
                    free = true;
                }
                return true;
            }
            // The receiver's count only grows during a call: a value read for an earlier message often answers.
            long need = (seq << 32) + q - limit;
            if (peerConsumed < need) {
                peerConsumed = peerArea.getAcquire(peerArea.consumedOffset(peerTb, seq));
            }
            return peerConsumed >= need;
        }

        /** @return whether the receiver has started this call (its buffers are published) */
        private boolean enter() {
            long h = peerArea.epoch();
            if (h < seq) {
                return false;
            }
            if (h > seq || !peerArea.callIs(call)) {
                throw new MscclRunException(disagreement(peer, peerArea.call(), h, programs));
            }
            entered = true;
            free = true;
            return true;
        }

        @Override
        MemorySegment slots() {
            return peerArea.segment();
        }

        @Override
        long slotOffset(long q) {
            return inline ? peerArea.inlineOffset(peerTb, seq, q) : peerArea.slotOffset(peerTb, seq, q);
        }

        @Override
        MemorySegment peerBuffer(boolean output) {
            int k = output ? 1 : 0;
            long address = peerArea.bufferWord(output, 0);
            long key = peerArea.bufferWord(output, 1);
            long bytes = peerArea.bufferWord(output, 2);
            long[] had = mappedKeys[k];
            if (mapped[k] == null || had[0] != address || had[1] != key || had[2] != bytes) {
                MemorySegment m = bytes == 0 ? null : mp.peerMemory(comm.worldRank(peer), address, key, bytes);
                if (m == null) {
                    throw new MscclRunException(who(peer) + "'s " + (output ? "output" : "input") + " buffer ("
                            + bytes + " bytes at 0x" + Long.toHexString(address) + ") cannot be mapped here");
                }
                mapped[k] = m;
                had[0] = address;
                had[1] = key;
                had[2] = bytes;
            }
            return mapped[k];
        }

        @Override
        void publish(long q, long bytes) {
            if (q == 1) {
                peerArea.writeCallLine(peerTb, seq, call);
            }
            peerArea.setRelease(peerArea.flagOffset(peerTb, seq, q), (seq << 32) + q);
        }

        @Override
        boolean drained() {
            return true;
        }

        @Override
        String waitingFor(long q, boolean direct) {
            if (direct && !entered) {
                return "rank " + peer + " to start this call, so that its message lands in its buffer ("
                        + state(peer, programs) + ")";
            }
            if (q <= (inline ? peerArea.flags() : slots)) {
                return "rank " + peer + " to finish its call #" + (seq - 2) + " on " + name + ", which frees the "
                        + "slots this call uses (" + state(peer, programs) + ")";
            }
            return "a free slot to rank " + peer + " on channel " + chan + " (message " + (q - (inline
                    ? peerArea.flags() : slots)) + " not yet consumed)";
        }
    }

    /** Reads this rank's own region: flags, slots; stores its consumed count there. */
    private final class Recv extends RecvLink {
        private final int tb;
        private final int chan;
        private final boolean inline;
        private final List<MscclProgram> programs;

        Recv(int tb, int peer, int chan, boolean inline, List<MscclProgram> programs) {
            super(peer);
            this.tb = tb;
            this.chan = chan;
            this.inline = inline;
            this.programs = programs;
        }

        @Override
        void begin() {
            // nothing: the flags carry the call's number
        }

        @Override
        boolean arrived(long q) {
            long flag = own.getAcquire(own.flagOffset(tb, seq, q));
            if (flag < (seq << 32) + q) {
                return false;
            }
            if (q == 1) {
                if (!own.callLineIs(tb, seq, call) || flag >>> 32 != seq) {
                    throw new MscclRunException(disagreement(peer, own.callLine(tb, seq), flag >>> 32, programs));
                }
                HEARD.setOpaque(heard, peer, seq);
            }
            return true;
        }

        @Override
        MemorySegment slots() {
            return own.segment();
        }

        @Override
        long slotOffset(long q) {
            return inline ? own.inlineOffset(tb, seq, q) : own.slotOffset(tb, seq, q);
        }

        @Override
        void consumed(long q) {
            own.setRelease(own.consumedOffset(tb, seq), (seq << 32) + q);
        }

        @Override
        String waitingFor(long q) {
            return "message " + q + " from rank " + peer + " on channel " + chan;
        }
    }
}
