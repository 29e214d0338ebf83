package dev.gdasync.libmp.ga;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * A non-blocking operation of a {@link GlobalArray} ({@code nbPut}, {@code nbGet}, {@code nbAcc}, GA's
 * {@code ga_nbhdl_t}); complete it with {@link GlobalArrays#nbWait}. Owned by the runtime's thread.
 */
public final class GaHandle {
    final GlobalArray array;
    final int[] lo;
    final int[] hi;
    /** Transfers of this handle posted and not yet waited for. */
    int pending;
    /** Whether it holds part of the runtime's staging memory until it finishes. */
    boolean holdsStaging;
    /** Gets that landed in staging memory: (staging offset, user offset, bytes) triples, unpacked at the end. */
    List<long[]> unpack;
    MemorySegment stage;
    MemorySegment user;
    RuntimeException failure;
    boolean done;

    GaHandle(GlobalArray array, int[] lo, int[] hi) {
        this.array = array;
        this.lo = lo;
        this.hi = hi;
    }

    void unpackLater(long stageOffset, long userOffset, long bytes) {
        if (unpack == null) {
            unpack = new ArrayList<>();
        }
        unpack.add(new long[] {stageOffset, userOffset, bytes});
    }

    /** @return whether {@link GlobalArrays#nbWait} has completed it (successfully or not) */
    public boolean isDone() {
        return done;
    }

    /** @return the array the operation works on */
    public GlobalArray array() {
        return array;
    }

    /** Whether the operation's patch and another overlap (a scatter or gather counts as its whole bounding box). */
    boolean overlaps(int[] otherLo, int[] otherHi) {
        for (int k = 0; k < lo.length; k++) {
            if (otherHi[k] < lo[k] || otherLo[k] > hi[k]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "GaHandle{" + array.name() + " " + java.util.Arrays.toString(lo) + ".." + java.util.Arrays.toString(hi)
                + (done ? ", done" : ", " + pending + " transfers pending") + "}";
    }
}
