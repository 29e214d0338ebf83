package dev.gdasync.apps.pingpong;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The machine's CPU time at one moment, from Linux's {@code /proc}: all CPUs' busy, stolen and total time
 * ({@code /proc/stat}'s {@code cpu} line), the job's own processes' CPU time ({@code /proc/PID/stat}), and the
 * one-minute load average ({@code /proc/loadavg}). Two samples give what else ran meanwhile ({@link LoadSeen}).
 * Times are in clock ticks; elsewhere than Linux every figure is unknown (-1).
 *
 * @param total       all CPUs' time, every state
 * @param busy        all CPUs' time running something: user, nice, system, irq, softirq
 * @param steal       time the hypervisor ran something else on this guest's CPUs
 * @param own         the job's processes' user and system time
 * @param loadAverage the one-minute load average
 * @param cpus        the CPUs {@code /proc/stat} lists
 */
public record LoadSample(long total, long busy, long steal, long own, double loadAverage, int cpus) {
    /** Where nothing could be read. */
    static final LoadSample UNKNOWN = new LoadSample(-1, -1, -1, -1, Double.NaN, 0);

    /**
     * @param pids the job's processes (its ranks); those that cannot be read count nothing
     * @return the sample now, or {@link #UNKNOWN} where {@code /proc} cannot be read
     */
    static LoadSample take(List<Long> pids) {
        try {
            List<String> stat = Files.readAllLines(Path.of("/proc/stat"));
            long own = 0;
            for (long pid : pids) {
                try {
                    own += processTicks(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
                } catch (IOException | RuntimeException e) {
                    // gone, or another PID namespace: it counts as another process's load
                }
            }
            double load = loadAverage(Files.readString(Path.of("/proc/loadavg")));
            return of(stat, own, load);
        } catch (IOException | RuntimeException e) {
            return UNKNOWN;
        }
    }

    /**
     * @param procStat    the lines of {@code /proc/stat}
     * @param own         the job's ticks
     * @param loadAverage the one-minute load average
     * @return the sample those lines describe
     * @throws IllegalArgumentException if there is no {@code cpu} line
     */
    static LoadSample of(List<String> procStat, long own, double loadAverage) {
        long[] t = null;
        int cpus = 0;
        for (String line : procStat) {
            if (line.startsWith("cpu ")) {
                t = ticks(line);
            } else if (line.startsWith("cpu")) {
                cpus++;
            }
        }
        if (t == null) {
            throw new IllegalArgumentException("no cpu line in /proc/stat");
        }
        // user nice system idle iowait irq softirq steal (guest time is already in user and nice)
        long busy = t[0] + t[1] + t[2] + t[5] + t[6];
        long total = t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
        return new LoadSample(total, busy, t[7], own, loadAverage, cpus);
    }

    private static long[] ticks(String cpuLine) {
        String[] f = cpuLine.trim().split("\\s+");
        long[] t = new long[8];
        for (int i = 0; i < t.length && i + 1 < f.length; i++) {
            t[i] = Long.parseLong(f[i + 1]);
        }
        return t;
    }

    /**
     * @param pidStat the text of {@code /proc/PID/stat}
     * @return the process's user plus system time (fields 14 and 15) and that of the children it waited for (fields
     *         16 and 17: the C peers a rank starts and reaps are the job's own load, not another process's), in ticks
     */
    static long processTicks(String pidStat) {
        // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
        String[] f = pidStat.substring(pidStat.lastIndexOf(')') + 2).trim().split("\\s+");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]);
    }

    /**
     * @param loadavg the text of {@code /proc/loadavg}
     * @return its first figure
     */
    static double loadAverage(String loadavg) {
        return Double.parseDouble(loadavg.trim().split("\\s+")[0]);
    }

    /** @return whether the sample was read */
    boolean isKnown() {
        return total >= 0;
    }
}
