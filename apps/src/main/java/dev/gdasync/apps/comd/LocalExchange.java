package dev.gdasync.apps.comd;

import java.lang.foreign.MemorySegment;

/**
 * An axis along which this rank is its own neighbor (one rank along it): both faces pack, and each unpacks what the
 * other packed, as CoMD's serial build copies a buffer to itself.
 */
final class LocalExchange {
    private final MemorySegment bufM;
    private final MemorySegment bufP;

    LocalExchange(long capacity) {
        this.bufM = MemorySegment.ofArray(new long[(int) ((capacity + 7) / 8)]);
        this.bufP = MemorySegment.ofArray(new long[(int) ((capacity + 7) / 8)]);
    }

    /** @return the buffers a rank needs for the largest face of these halos */
    static LocalExchange forHalos(Iterable<Halo> halos) {
        long cap = 0;
        for (Halo h : halos) {
            for (int face = 0; face < 6; face++) {
                cap = Math.max(cap, h.capacity(face));
            }
        }
        return new LocalExchange(cap);
    }

    void exchange(Halo halo, int axis) {
        int faceM = 2 * axis;
        int faceP = faceM + 1;
        halo.load(faceM, bufM);
        halo.load(faceP, bufP);
        halo.unload(faceM, bufP);
        halo.unload(faceP, bufM);
    }
}
