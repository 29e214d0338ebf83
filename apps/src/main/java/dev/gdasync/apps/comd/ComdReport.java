package dev.gdasync.apps.comd;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/** Rank 0's summary after every mode ran: times per step side by side, gains over mpj, and whether the energies agree. */
final class ComdReport {
    private ComdReport() {
    }

    /** @return per mode, in the order run, the run with the median step time */
    static List<RunResult> medians(ComdOptions o, List<RunResult> results) {
        List<RunResult> out = new ArrayList<>();
        for (Mode m : o.modes()) {
            List<RunResult> runs = new ArrayList<>(results.stream().filter(r -> r.mode().equals(m.label())).toList());
            runs.sort(Comparator.comparingDouble(RunResult::stepMs));
            out.add(runs.get((runs.size() - 1) / 2));
        }
        return out;
    }

    /** @return the gain of {@code r} over {@code base} in percent of base's time per step */
    static double gain(RunResult base, RunResult r) {
        return 100.0 * (base.stepMs() - r.stepMs()) / base.stepMs();
    }

    static void print(ComdOptions o, List<RunResult> results, PrintStream out) {
        List<RunResult> med = medians(o, results);
        RunResult mpj = med.stream().filter(r -> r.mode().equals("mpj")).findFirst().orElse(null);
        out.println();
        out.println(String.format(Locale.ROOT, "comd: %s %dx%dx%d (%d atoms), %d ranks (-i %d -j %d -k %d); time per step over steps"
                        + " %d..%d, %s", o.potentialLabel().toUpperCase(Locale.ROOT), o.nx(), o.ny(), o.nz(), 4L * o.nx() * o.ny() * o.nz(),
                o.ranks(), o.xproc(), o.yproc(), o.zproc(), o.stepsRun() - med.getFirst().timedSteps(), o.stepsRun(),
                o.reps() > 1 ? "median of " + o.reps() + " runs of each mode, interleaved" : "one run of each mode"));
        out.println(String.format(Locale.ROOT, "%-5s %10s %10s %14s %11s %14s %15s", "mode", "step ms", "force ms", "redistrib. ms",
                "exchange ms", "gain vs mpj", "exchange/mpj"));
        for (RunResult r : med) {
            String gain = mpj == null ? "-" : String.format(Locale.ROOT, "%+.1f %%", gain(mpj, r));
            String ex = mpj == null || mpj.exchangeMs() == 0 ? "-" : String.format(Locale.ROOT, "%.2f x", r.exchangeMs() / mpj.exchangeMs());
            out.println(String.format(Locale.ROOT, "%-5s %10.3f %10.3f %14.3f %11.3f %14s %15s", r.mode(), r.stepMs(), r.forceMs(),
                    r.redistributeMs(), r.exchangeMs(), gain, ex));
        }
        out.println(agreement(results));
    }

    /** @return a line saying whether every run printed the same energies and kept every atom */
    static String agreement(List<RunResult> results) {
        RunResult first = results.getFirst();
        List<String> differ = new ArrayList<>();
        for (RunResult r : results) {
            if (!r.energies().equals(first.energies()) || r.eFinal() != first.eFinal()) {
                differ.add(r.mode());
            }
        }
        boolean kept = results.stream().allMatch(r -> r.atomsFinal() == r.atoms0());
        String atoms = kept ? "every atom kept" : "ATOMS LOST";
        if (differ.isEmpty()) {
            return "energies: the same bits at every printed step in every mode and run; " + atoms;
        }
        return "energies: DIFFER from " + first.mode() + "'s in " + String.join(", ", differ.stream().distinct().toList()) + "; " + atoms;
    }
}
