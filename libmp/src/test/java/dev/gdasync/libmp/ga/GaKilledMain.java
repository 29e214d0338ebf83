package dev.gdasync.libmp.ga;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.testutil.KilledMidCall;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The rank main of {@link GaKilledMidCallTest}: the blocking collective calls of global arrays (sync, create, zero,
 * fill, destroy, duplicate), made by ranks 0 and 2 while rank 1 is killed (see {@link KilledMidCall}).
 */
public final class GaKilledMain {
    /** The cases by name; each makes a runtime and a LONG array of 3000 elements over the three ranks. */
    public static final Map<String, KilledMidCall.Setup> CASES = new LinkedHashMap<>();

    static {
        CASES.put("sync", mp -> {
            GlobalArrays ga = new GlobalArrays(mp);
            ga.create("a", GaType.LONG, Distribution.even(KilledMidCall.RANKS, 3000));
            ga.sync();
            return ga::sync;
        });
        CASES.put("create", mp -> {
            GlobalArray a = array(mp);
            return () -> a.duplicate("b");
        });
        CASES.put("zero", mp -> {
            GlobalArray a = array(mp);
            return a::zero;
        });
        CASES.put("fill", mp -> {
            GlobalArray a = array(mp);
            return () -> a.fill(7L);
        });
        CASES.put("destroy", mp -> {
            GlobalArray a = array(mp);
            return a::destroy;
        });
    }

    private GaKilledMain() {
    }

    private static GlobalArray array(Mp mp) {
        GlobalArrays ga = new GlobalArrays(mp);
        GlobalArray a = ga.create("a", GaType.LONG, Distribution.even(KilledMidCall.RANKS, 3000));
        ga.sync();
        return a;
    }

    /**
     * @param args see {@link KilledMidCall#rankMain}
     * @throws InterruptedException if interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        KilledMidCall.rankMain(args, CASES);
    }
}
