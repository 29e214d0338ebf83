package dev.gdasync.libmp.mpj;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpWindow;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * The device's receive slots, one libmp window over every rank's rings of the same layout:
 * <pre>
 *   [stamps: size x slots x 8][slots: size x slots x slotBytes]
 * </pre>
 * Ring {@code p} of a rank (its stamps and slots) is written by peer {@code p} only: the peer's fragment {@code i}
 * goes into slot {@code i mod slots}, then {@code i + 1} into that slot's stamp. On one host the peer stores both
 * straight into this memory, mapped in its process (the stamp with release semantics, then a wake of this rank's
 * parked threads, {@code Mp.wakePeer}); between hosts it puts both, and the queue pair executes a rank's puts to a
 * peer in order. Either way a stamp that reads {@code i + 1} says fragment {@code i} is all there.
 * The receiver finds its next fragment by that stamp, and the sender only writes into a slot the receiver has taken
 * the fragment out of (the credits of {@link DeviceWindow}).
 *
 * <p>Puts, not sends: the device posts no receives, so the queue pairs' two-sided messages stay the program's own
 * (libmp's {@code isend}/{@code irecv}, the collectives of {@code coll}, a global array's messages) beside MPJ's.
 */
final class SlotRings {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final int slots;
    private final int slotBytes;
    private final long slotsAt;
    private final MemorySegment memory;
    private final MemorySegment[][] received;
    /** The same slots as buffers, for the lean paths' copies from and into MPJ's buffers (no view made per copy). */
    private final ByteBuffer[][] receivedBuffers;
    private final MpWindow window;
    /** Each peer's rings mapped here, or null where the NIC does not map them (another host). */
    private final MemorySegment[] mappedRings;
    /** This rank's slots in each peer's ring for it, mapped here, or null where the NIC does not map them. */
    private final MemorySegment[][] mapped;
    private final ByteBuffer[][] mappedBuffers;
    private final int rank;

    /** Collective: every rank of the job makes its rings with the same settings. */
    SlotRings(Mp mp, int slots, int slotBytes) {
        int size = mp.size();
        this.slots = slots;
        this.slotBytes = slotBytes;
        this.slotsAt = 8L * size * slots;
        this.memory = mp.allocate(slotsAt + (long) size * slots * slotBytes);
        this.window = mp.windowCreate(memory);
        for (int p = 0; p < size; p++) {
            if (p != mp.rank() && window.size(p) != memory.byteSize()) {
                throw new IllegalStateException("rank " + p + "'s MPJ receive slots are " + window.size(p)
                        + " bytes, this rank's " + memory.byteSize() + ": every rank must run with the same "
                        + GdasyncDevice.SLOTS_PROPERTY + " and " + GdasyncDevice.SLOT_BYTES_PROPERTY);
            }
        }
        this.rank = mp.rank();
        this.mappedRings = new MemorySegment[size];
        this.mapped = new MemorySegment[size][];
        this.mappedBuffers = new ByteBuffer[size][];
        for (int p = 0; p < size; p++) {
            MemorySegment there = p == mp.rank() ? null : window.peerMemory(p);
            mappedRings[p] = there;
            if (there != null) {
                mapped[p] = new MemorySegment[slots];
                mappedBuffers[p] = new ByteBuffer[slots];
                for (int s = 0; s < slots; s++) {
                    mapped[p][s] = there.asSlice(slotAt(mp.rank(), s), slotBytes);
                    mappedBuffers[p][s] = mapped[p][s].asByteBuffer();
                }
            }
        }
        this.received = new MemorySegment[size][];
        this.receivedBuffers = new ByteBuffer[size][];
        for (int p = 0; p < size; p++) {
            received[p] = new MemorySegment[slots];
            receivedBuffers[p] = new ByteBuffer[slots];
            for (int s = 0; s < slots; s++) {
                // The slices are made once: a fragment's path allocates no segment.
                received[p][s] = memory.asSlice(slotAt(p, s), slotBytes);
                receivedBuffers[p][s] = received[p][s].asByteBuffer();
            }
        }
    }

    /** @return the window the peers put into */
    MpWindow window() {
        return window;
    }

    /** @return whether peer {@code p}'s rings are mapped here (one host): fragments are stored, not put */
    boolean mapsPeer(int p) {
        return mappedRings[p] != null;
    }

    /** @return this rank's slot {@code s} in peer {@code p}'s ring for it, mapped here ({@link #mapsPeer}) */
    MemorySegment peerSlot(int p, int s) {
        return mapped[p][s];
    }

    /**
     * Stamps fragment {@code index} of this rank's in peer {@code p}'s ring, mapped here ({@link #mapsPeer}): a release
     * store, after the fragment's stores.
     */
    void stampPeer(int p, long index) {
        LONG.setRelease(mappedRings[p], stampAt(rank, (int) (index % slots)), index + 1);
    }

    /** @return {@link #peerSlot} as a buffer (absolute access only: it is shared) */
    ByteBuffer peerSlotBuffer(int p, int s) {
        return mappedBuffers[p][s];
    }

    /** @return {@link #slot} as a buffer (absolute access only: it is shared) */
    ByteBuffer slotBuffer(int p, int s) {
        return receivedBuffers[p][s];
    }

    /** @return this rank's slot {@code s} of peer {@code p}'s ring */
    MemorySegment slot(int p, int s) {
        return received[p][s];
    }

    /** @return whether peer {@code p}'s fragment {@code index} is all there, in slot {@code index mod slots} */
    boolean arrived(int p, long index) {
        return (long) LONG.getAcquire(memory, stampAt(p, (int) (index % slots))) == index + 1;
    }

    /** @return where, in a peer's window, the writer {@code writer}'s slot {@code s} lies */
    long slotAt(int writer, int s) {
        return slotsAt + ((long) writer * slots + s) * slotBytes;
    }

    /** @return where, in a peer's window, the stamp of the writer {@code writer}'s slot {@code s} lies */
    long stampAt(int writer, int s) {
        return 8L * ((long) writer * slots + s);
    }
}
