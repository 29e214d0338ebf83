package dev.gdasync.gdsync.concurrent;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a rank makes of the CPUs it shares with the other gdasync ranks of this host: whether their hot threads
 * outnumber its CPUs (then its waits yield, as MPI libraries do when oversubscribed), and which CPU, if any, it may
 * pin its stream or kernel thread to (never one another job pinned, and none at all when oversubscribed: the
 * scheduler balances floating threads better than pins that stack up).
 *
 * <p>Ranks are counted, not threads: each rank has one hot thread at a time (its CPU thread in the MPI model, its
 * stream's thread in SA, its kernel thread in KI). A process whose allowed CPUs do not overlap this one's does
 * not compete and is not counted. Processes that are not gdasync ranks (a build, another user's job) compete too:
 * every half CPU they keep busy ({@link ForeignLoad}) counts as one more competitor.
 *
 * @param allowed        the CPUs this process may run on
 * @param ranks          the ranks competing for them, this job's included
 * @param jobs           how many jobs those ranks belong to
 * @param oversubscribed whether the ranks outnumber the CPUs
 * @param pinnedByOthers the CPUs other jobs pinned threads to
 * @param jobRanks       this job's ranks on this host, by rank
 * @param othersBusy     the CPUs other processes kept busy lately (not gdasync ranks), 0 where unknown
 */
public record CpuShareDecision(List<Integer> allowed, int ranks, int jobs, boolean oversubscribed,
                               List<Integer> pinnedByOthers, List<CpuShareEntry.Rank> jobRanks, double othersBusy) {
    /** The CPU time other processes take that counts as one more competitor, in CPUs. */
    public static final double OTHERS_THRESHOLD = 0.5;

    /** Copies the lists. */
    public CpuShareDecision {
        allowed = List.copyOf(allowed);
        pinnedByOthers = List.copyOf(pinnedByOthers);
        jobRanks = List.copyOf(jobRanks);
    }

    /**
     * Decides from the registry's live entries.
     *
     * @param allowed this process's allowed CPUs (its affinity mask)
     * @param entries the live registry entries, this process's included
     * @param job     this process's job
     * @return the decision
     */
    public static CpuShareDecision decide(List<Integer> allowed, List<CpuShareEntry> entries, String job) {
        return decide(allowed, entries, job, 0);
    }

    /**
     * Decides from the registry's live entries and the load of other processes.
     *
     * @param allowed    this process's allowed CPUs (its affinity mask)
     * @param entries    the live registry entries, this process's included
     * @param job        this process's job
     * @param othersBusy the CPUs processes that are not gdasync ranks kept busy lately ({@link ForeignLoad})
     * @return the decision
     */
    public static CpuShareDecision decide(List<Integer> allowed, List<CpuShareEntry> entries, String job, double othersBusy) {
        Set<CpuShareEntry.Rank> ranks = new LinkedHashSet<>();
        Set<String> jobs = new TreeSet<>();
        TreeSet<Integer> pinnedByOthers = new TreeSet<>();
        TreeSet<Integer> mine = new TreeSet<>();
        List<CpuShareEntry.Rank> jobRanks = new ArrayList<>();
        for (CpuShareEntry e : entries) {
            if (!overlaps(allowed, e.allowed())) {
                continue;
            }
            boolean ofThisJob = false;
            for (CpuShareEntry.Rank r : e.ranks()) {
                if (ranks.add(r)) {
                    jobs.add(r.job());
                    if (r.job().equals(job)) {
                        jobRanks.add(r);
                    }
                }
                ofThisJob |= r.job().equals(job);
            }
            (ofThisJob ? mine : pinnedByOthers).addAll(e.pinned());
        }
        jobRanks.sort((a, b) -> Integer.compare(a.rank(), b.rank()));
        int cpus = Math.max(1, allowed.size());
        // Half a CPU kept busy by other processes is one more competitor; 1.6 CPUs are two.
        int others = othersBusy < OTHERS_THRESHOLD ? 0 : (int) Math.max(1, Math.round(othersBusy));
        return new CpuShareDecision(allowed, ranks.size(), jobs.size(), ranks.size() + others > cpus,
                List.copyOf(pinnedByOthers), jobRanks, othersBusy);
    }

    private static boolean overlaps(List<Integer> a, List<Integer> b) {
        if (a.isEmpty() || b.isEmpty()) {
            return true; // unknown masks: assume they compete
        }
        for (int c : b) {
            if (a.contains(c)) {
                return true;
            }
        }
        return false;
    }

    /** @return the allowed CPUs no other job pinned a thread to */
    public List<Integer> free() {
        List<Integer> free = new ArrayList<>(allowed);
        free.removeAll(pinnedByOthers);
        return free;
    }

    /**
     * The CPU a rank of this job may pin its hot thread to: the k-th free CPU for the job's k-th rank on this host,
     * or none when oversubscribed or when the free CPUs run out.
     *
     * @param rank the rank, of this decision's job
     * @return the CPU, or -1 not to pin
     */
    public int cpuFor(int rank) {
        if (oversubscribed) {
            return -1;
        }
        int k = -1;
        for (int i = 0; i < jobRanks.size(); i++) {
            if (jobRanks.get(i).rank() == rank) {
                k = i;
            }
        }
        List<Integer> free = free();
        return k >= 0 && k < free.size() ? free.get(k) : -1;
    }

    /** @return the decision in words, for a benchmark's header */
    public String describe() {
        return String.format(Locale.ROOT, "%d rank%s of %d gdasync job%s on %d allowed CPU%s (%s)%s%s%s", ranks, ranks == 1 ? "" : "s",
                jobs, jobs == 1 ? "" : "s", allowed.size(), allowed.size() == 1 ? "" : "s", CpuList.format(allowed),
                othersBusy >= 0.05 ? String.format(Locale.ROOT, ", other processes keeping %.1f CPUs busy", othersBusy) : "",
                oversubscribed ? ": oversubscribed, waits yield and no thread is pinned" : ": not oversubscribed",
                pinnedByOthers.isEmpty() ? "" : "; CPUs " + CpuList.format(pinnedByOthers) + " pinned by other jobs");
    }
}
