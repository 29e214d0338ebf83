package dev.gdasync.libmp.ga;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * A rank of the launcher-driven global-array tests: {@code exercise} runs the distribution, patch, accumulate and
 * readInc checks between processes and prints "OK"; {@code victim K} has rank K killed while the others keep getting
 * patches that include its block, and they report how their operations failed.
 */
public final class GaExerciseMain {
    private GaExerciseMain() {
    }

    /**
     * @param args {@code exercise} or {@code victim K}
     * @throws Exception a failure, which makes the rank exit non-zero
     */
    public static void main(String[] args) throws Exception {
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(Duration.ofSeconds(30));
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot, cfg); GlobalArrays ga = new GlobalArrays(mp)) {
            if (args[0].equals("victim")) {
                victim(ga, Integer.parseInt(args[1]));
                return;
            }
            GaExercise.locateMatchesData(ga);
            int moved = GaExercise.randomPatches(ga, 10_000 / ga.size(), 11);
            for (GaType t : GaType.values()) {
                GaExercise.accumulate(ga, t, 8);
            }
            GaExercise.readInc(ga, GaType.INT, 200);
            GaExercise.readInc(ga, GaType.LONG, 200);
            System.out.println("OK rank " + ga.rank() + " of " + ga.size() + ": " + moved + " patches");
        }
    }

    private static void victim(GlobalArrays ga, int victim) throws InterruptedException {
        int n = ga.size();
        GlobalArray a = ga.create("victim", GaType.DOUBLE, Distribution.even(n, 64 * n));
        ga.sync();
        System.out.println("ready " + ProcessHandle.current().pid());
        if (ga.rank() == victim) {
            Thread.sleep(60_000);
            return;
        }
        MemorySegment buf = MemorySegment.ofArray(new double[64 * n]);
        long start = 0;
        try {
            for (long i = 0; ; i++) {
                GaHandle h = a.nbGet(new int[] {0}, new int[] {64 * n - 1}, buf, null);
                start = System.nanoTime();
                ga.nbWait(h);
                if (i % 64 == 0) {
                    // Accumulates take the victim's lock word too: they must fail as clearly.
                    a.acc(new int[] {0}, new int[] {64 * n - 1}, buf, null, 0.0);
                }
            }
        } catch (RuntimeException e) {
            System.out.println("failed clearly after " + (System.nanoTime() - start) / 1_000_000 + " ms: "
                    + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        System.exit(1);
    }
}
