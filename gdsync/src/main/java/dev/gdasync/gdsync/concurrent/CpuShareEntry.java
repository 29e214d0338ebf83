package dev.gdasync.gdsync.concurrent;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One process's line in the {@link CpuRegistry}: which ranks of which jobs it hosts, the CPUs it may run on, and
 * the CPUs it pinned threads to.
 *
 * @param pid         the process
 * @param startMillis when it started (epoch milliseconds; with the pid, it tells a live process from a reused pid)
 * @param ranks       the ranks it hosts, as {@link Rank}s
 * @param allowed     the CPUs it may run on
 * @param pinned      the CPUs it pinned threads to
 */
public record CpuShareEntry(long pid, long startMillis, List<Rank> ranks, List<Integer> allowed, List<Integer> pinned) {

    /**
     * A rank of a job: every rank has one hot thread at a time (its CPU thread in the MPI model, its stream's thread
     * in SA, its kernel thread in KI), so ranks are what compete for CPUs.
     *
     * @param job  the job's id
     * @param rank the rank
     */
    public record Rank(String job, int rank) {
        /** @return {@code job:rank} */
        @Override
        public String toString() {
            return job + ":" + rank;
        }
    }

    /** Copies the lists. */
    public CpuShareEntry {
        ranks = List.copyOf(ranks);
        allowed = List.copyOf(allowed);
        pinned = List.copyOf(pinned);
    }

    /** @return the entry as one line: {@code pid=.. start=.. ranks=job:0,job:1 allowed=0-1 pinned=0} */
    public String format() {
        return "pid=" + pid + " start=" + startMillis + " ranks=" + String.join(",", ranks.stream().map(Rank::toString).toList())
                + " allowed=" + CpuList.format(allowed) + " pinned=" + CpuList.format(pinned);
    }

    /**
     * @param line a line of {@link #format()}
     * @return the entry
     * @throws IllegalArgumentException if the line is not one
     */
    public static CpuShareEntry parse(String line) {
        Map<String, String> f = new HashMap<>();
        for (String field : line.strip().split(" ")) {
            int eq = field.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("not a CPU share entry: '" + line + "'");
            }
            f.put(field.substring(0, eq), field.substring(eq + 1));
        }
        try {
            List<Rank> ranks = new ArrayList<>();
            String r = f.getOrDefault("ranks", "");
            if (!r.isEmpty()) {
                for (String s : r.split(",")) {
                    int colon = s.lastIndexOf(':');
                    ranks.add(new Rank(s.substring(0, colon), Integer.parseInt(s.substring(colon + 1))));
                }
            }
            return new CpuShareEntry(Long.parseLong(f.get("pid")), Long.parseLong(f.get("start")), ranks,
                    CpuList.parse(f.getOrDefault("allowed", "")), CpuList.parse(f.getOrDefault("pinned", "")));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a CPU share entry: '" + line + "'", e);
        }
    }
}
