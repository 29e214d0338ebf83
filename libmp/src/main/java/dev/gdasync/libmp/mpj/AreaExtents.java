package dev.gdasync.libmp.mpj;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the rendezvous area grows when it is full: extents of registered memory of this rank, made on demand (each as
 * large as the area, or as the message if larger) up to a limit, kept until the Mp closes. A program that keeps many
 * large non-blocking sends in flight (a window of them, as OSU's bandwidth test does) would otherwise find the area
 * full and send the rest through the slots, a copy more on each side. Peers on this host read a message in an extent
 * in place, as in the area: its address and the extent's key travel in the request to send, and the NIC maps the
 * range ({@link Mp#peerMemory}); peers on other hosts cannot (a get needs a window, which is collective), so messages
 * to them never use an extent. Guarded by the device's lock.
 */
final class AreaExtents {
    /** One extent: its memory, the registration peers map it by, and its free blocks. */
    record Extent(MemorySegment memory, MpRegistration registration, RendezvousPool pool) {
    }

    /**
     * A block of an extent.
     *
     * @param extent the extent
     * @param offset the block's offset in it
     */
    record Place(Extent extent, long offset) {
        /** @return the key peers map the extent with (a request to send carries it, and the extent's address) */
        long rkey() {
            return extent.registration().rkey();
        }

        RendezvousPool pool() {
            return extent.pool();
        }
    }

    private final Mp mp;
    private final long extentBytes;
    private final long limit;
    private final List<Extent> extents = new ArrayList<>();
    private long grown;
    /** Why the last extent could not be made (the shared-memory file system full, say), or null. */
    private String refused;

    /**
     * @param extentBytes the smallest extent, bytes (the area's size)
     * @param limit       how many bytes the extents may hold in all (0: the area never grows)
     */
    AreaExtents(Mp mp, long extentBytes, long limit) {
        this.mp = mp;
        this.extentBytes = extentBytes;
        this.limit = limit;
    }

    /**
     * @param bytes a buffer's length, &gt; 0
     * @return a block of that length in an extent (a new one if none has room and the limit allows), or null
     */
    Place allocate(long bytes) {
        for (Extent e : extents) {
            long at = e.pool().allocate(bytes);
            if (at >= 0) {
                return new Place(e, at);
            }
        }
        long n = Math.max(extentBytes, (bytes + 63) & -64L);
        if (refused != null || grown + n > limit) {
            return null;
        }
        Extent e;
        try {
            MemorySegment memory = mp.allocate(n);
            e = new Extent(memory, mp.register(memory), new RendezvousPool(n));
        } catch (RuntimeException ex) {
            // Not a failure of the program's call: its buffer comes from MPJ's allocator and goes through the slots.
            refused = ex.getMessage();
            System.err.println("MPJ over gdasync, rank " + mp.rank() + ": the rendezvous area could not grow by " + n
                    + " bytes (" + refused + "); larger messages beyond it travel through the slots");
            return null;
        }
        extents.add(e);
        grown += n;
        return new Place(e, e.pool().allocate(bytes));
    }

    /**
     * @param bytes memory of a buffer
     * @return where it lies in an extent, or null when it is not an extent's
     */
    Place placeOf(MemorySegment bytes) {
        if (!bytes.isNative()) {
            return null;
        }
        for (Extent e : extents) {
            long at = bytes.address() - e.memory().address();
            if (at >= 0 && bytes.byteSize() <= e.memory().byteSize() - at) {
                return new Place(e, at);
            }
        }
        return null;
    }

    /** @return the bytes the extents hold in all */
    long grown() {
        return grown;
    }
}
