package dev.gdasync.apps.pingpong;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What else ran on the machine while a measurement ran, from two {@link LoadSample}s: how many CPUs other
 * processes kept busy on average, the share of CPU time the hypervisor stole, and the highest one-minute load
 * average seen. With the spread of the timed runs ({@link RunSpread}) it says whether a figure can be trusted
 * ({@link #noise}): a target is reported "NOT met" only on a quiet run.
 *
 * @param othersCpus   CPUs kept busy by processes other than the job's, on average (NaN when unknown)
 * @param stealPercent CPU time stolen by the hypervisor, percent of all CPU time (NaN when unknown)
 * @param loadAverage  the higher one-minute load average of the two samples (the job's own threads included)
 * @param cpus         the machine's CPUs
 */
public record LoadSeen(double othersCpus, double stealPercent, double loadAverage, int cpus) {
    /** Runs further apart than this, relative to their median, make a figure untrustworthy. */
    static final double MAX_SPREAD_PERCENT = 20;
    /** Other processes busier than this, in CPUs on average, make a figure untrustworthy. */
    static final double MAX_OTHERS_CPUS = 0.25;
    /** More stolen time than this, in percent, makes a figure untrustworthy. */
    static final double MAX_STEAL_PERCENT = 2;

    /** When nothing could be read. */
    static final LoadSeen UNKNOWN = new LoadSeen(Double.NaN, Double.NaN, Double.NaN, 0);

    /**
     * @param before the sample before the measurement
     * @param after  the sample after it
     * @return what ran meanwhile
     */
    static LoadSeen between(LoadSample before, LoadSample after) {
        if (!before.isKnown() || !after.isKnown() || after.total() <= before.total()) {
            return UNKNOWN;
        }
        double total = after.total() - before.total();
        double others = Math.max(0, (after.busy() - before.busy()) - (after.own() - before.own()));
        int cpus = Math.max(1, after.cpus());
        return new LoadSeen(others / total * cpus, (after.steal() - before.steal()) / total * 100,
                Math.max(before.loadAverage(), after.loadAverage()), cpus);
    }

    /** @return whether the figures were read */
    boolean isKnown() {
        return !Double.isNaN(othersCpus);
    }

    /**
     * Why a figure measured with these runs on this machine cannot be trusted.
     *
     * @param runs the timed runs' spread
     * @return the reasons, empty for a quiet run
     */
    List<String> noise(RunSpread runs) {
        boolean known = runs.isKnown() && runs.runs() > 1;
        return noise(known ? runs.percent() : 0, known ? String.format(Locale.ROOT, "its runs spread %.0f %% (%.3f to %.3f us)",
                runs.percent(), runs.min(), runs.max()) : "");
    }

    /**
     * Why a figure whose runs spread so far cannot be trusted on this machine.
     *
     * @param spreadPercent how far the runs spread, relative to their median
     * @param spreadWords   the spread in words, for the reason
     * @return the reasons, empty for a quiet run
     */
    List<String> noise(double spreadPercent, String spreadWords) {
        List<String> why = new ArrayList<>();
        if (spreadPercent > MAX_SPREAD_PERCENT) {
            why.add(spreadWords);
        }
        if (isKnown() && othersCpus > MAX_OTHERS_CPUS) {
            why.add(String.format(Locale.ROOT, "other processes kept %.2f of %d CPUs busy (load average %.2f)", othersCpus,
                    cpus, loadAverage));
        }
        if (isKnown() && stealPercent > MAX_STEAL_PERCENT) {
            why.add(String.format(Locale.ROOT, "the hypervisor stole %.1f %% of the CPU time", stealPercent));
        }
        return why;
    }

    /** @return the line the report prints about the machine's other load */
    String describe() {
        if (!isKnown()) {
            return "other load: unknown (no /proc here)";
        }
        return String.format(Locale.ROOT, "other load during the measurement: %.2f of %d CPUs busy with other processes,"
                + " %.1f %% stolen by the hypervisor, load average up to %.2f (the job's own threads included)",
                othersCpus, cpus, stealPercent, loadAverage);
    }
}
