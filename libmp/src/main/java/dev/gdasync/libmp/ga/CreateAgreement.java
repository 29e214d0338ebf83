package dev.gdasync.libmp.ga;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;
import dev.gdasync.libmp.WindowRefusedException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Checks, before anything is allocated, that every rank calls {@link GlobalArrays#create} with the same name, type and
 * distribution as the same collective call (the check {@code Shmem.malloc} makes of its sizes): every rank puts a
 * record of its call into every rank's agreement area, waits for its puts, passes a barrier and compares the records.
 * Every rank reads the same records, so all of them pass or all of them throw, and their call counts stay in step.
 *
 * <p>Two areas alternate, as Shmem's do: a rank may put call {@code k + 1}'s record while a slower one still reads
 * call {@code k}'s, never call {@code k + 2}'s before every rank passed call {@code k + 1}'s barrier. The window over
 * the areas is made by the first create (collective, like every create).
 */
final class CreateAgreement {
    /** One rank's record: 16 longs, see {@link #describe}. */
    static final int RECORD = 128;
    private static final int LONGS = RECORD / 8;
    private static final long KIND_CREATE = 1;

    private final Mp mp;
    private final MemorySegment record;
    private final MemorySegment areas;
    private final MpRegistration reg;
    private final int maxInFlight;
    private MpWindow window;
    private long calls;

    /**
     * @param mp          the runtime's Mp
     * @param record      registered memory of {@link #RECORD} bytes for this rank's record
     * @param areas       registered memory of {@link #areaBytes} bytes, the agreement areas (zero-filled)
     * @param reg         the registration of record
     * @param maxInFlight the most puts in flight at once
     */
    CreateAgreement(Mp mp, MemorySegment record, MemorySegment areas, MpRegistration reg, int maxInFlight) {
        this.mp = mp;
        this.record = record;
        this.areas = areas;
        this.reg = reg;
        this.maxInFlight = maxInFlight;
    }

    /** @return the bytes of both agreement areas for a job of {@code ranks} ranks */
    static long areaBytes(int ranks) {
        return 2L * ranks * RECORD;
    }

    /**
     * Agrees on a create call; collective.
     *
     * @throws IllegalArgumentException on every rank, if a rank's call differs: the message names the first such rank,
     *                                  both calls and what differs; nothing was created
     * @throws dev.gdasync.libmp.MpException if a put failed or the job failed
     */
    void agree(String name, GaType type, Distribution distribution) {
        if (window == null) {
            try {
                window = mp.windowCreate(areas);
            } catch (WindowRefusedException e) {
                throw GlobalArrays.refusedWindow(name, e); // every rank failed alike: the next create tries again
            }
        }
        long call = ++calls;
        int me = mp.rank();
        int n = mp.size();
        long[] mine = describe(call, name, type, distribution);
        MemorySegment.copy(mine, 0, record, JAVA_LONG, 0, LONGS);
        long slot = ((call & 1) * n + me) * RECORD;
        MemorySegment.copy(record, 0, areas, slot, RECORD);
        putEverywhere(slot);
        mp.barrier();
        long area = (call & 1) * n * RECORD;
        for (int p = 0; p < n; p++) {
            long[] theirs = areas.asSlice(area + (long) p * RECORD, RECORD).toArray(JAVA_LONG);
            if (!Arrays.equals(theirs, mine)) {
                throw new IllegalArgumentException("GlobalArrays.create #" + call + " of array '" + name + "': rank " + p
                        + " called " + callOf(theirs) + ", rank " + me + " called " + callOf(mine) + ": the ranks disagree on "
                        + differences(theirs, mine) + "; every rank creates each array with the same name, type and "
                        + "distribution, in the same order. Nothing was created");
            }
        }
    }

    /** Puts this rank's record into every other rank's slot and waits for every put, even after one failed. */
    private void putEverywhere(long slot) {
        int me = mp.rank();
        List<MpRequest> batch = new ArrayList<>();
        RuntimeException first = null;
        for (int p = 0; p < mp.size(); p++) {
            if (p == me) {
                continue;
            }
            if (first == null) {
                try {
                    batch.add(mp.iput(record, reg, p, slot, window, 0));
                } catch (RuntimeException e) {
                    first = e;
                }
            }
            if (batch.size() == maxInFlight || p == mp.size() - 1 || first != null) {
                first = waitFor(batch, first);
            }
        }
        first = waitFor(batch, first);
        if (first != null) {
            throw first;
        }
    }

    private RuntimeException waitFor(List<MpRequest> batch, RuntimeException first) {
        for (MpRequest r : batch) {
            try {
                mp.wait(r);
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        batch.clear();
        return first;
    }

    /**
     * A call's record: call number, kind, type, ranks, dimensions, their extents (3), the grid (3), the digest of the
     * block starts, the name's hash; the rest zero.
     */
    private static long[] describe(long call, String name, GaType type, Distribution d) {
        long[] r = new long[LONGS];
        r[0] = call;
        r[1] = KIND_CREATE;
        r[2] = type.ordinal();
        r[3] = d.ranks();
        int[] dims = d.dims();
        int[] grid = d.grid();
        r[4] = dims.length;
        for (int k = 0; k < dims.length; k++) {
            r[5 + k] = dims[k];
            r[8 + k] = grid[k];
        }
        r[11] = d.startsDigest();
        r[12] = name.hashCode();
        return r;
    }

    /** What a record says, for messages; a record that is no create call (a rank that did not call it) says so. */
    private static String callOf(long[] r) {
        if (r[1] != KIND_CREATE) {
            return "nothing (its record is empty: it made fewer creates, or another collective call)";
        }
        int ndim = (int) Math.max(0, Math.min(Distribution.MAX_DIMS, r[4]));
        String type = r[2] >= 0 && r[2] < GaType.values().length ? GaType.values()[(int) r[2]].toString() : "type " + r[2];
        return "create #" + r[0] + " with " + type + " " + Arrays.toString(Arrays.copyOfRange(r, 5, 5 + ndim)) + " over "
                + r[3] + " ranks (grid " + Arrays.toString(Arrays.copyOfRange(r, 8, 8 + ndim)) + ")";
    }

    private static String differences(long[] theirs, long[] mine) {
        List<String> d = new ArrayList<>();
        if (theirs[0] != mine[0] || theirs[1] != mine[1]) {
            d.add("the call");
        } else {
            if (theirs[2] != mine[2]) {
                d.add("the type");
            }
            if (theirs[3] != mine[3]) {
                d.add("the ranks");
            }
            if (!Arrays.equals(theirs, 4, 8, mine, 4, 8)) {
                d.add("the dimensions"); // and so the block starts
            } else if (!Arrays.equals(theirs, 8, 12, mine, 8, 12)) {
                d.add("the block starts");
            }
            if (theirs[12] != mine[12]) {
                d.add("the name");
            }
        }
        return String.join(", ", d);
    }
}
