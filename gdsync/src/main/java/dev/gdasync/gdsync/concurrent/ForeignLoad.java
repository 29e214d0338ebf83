package dev.gdasync.gdsync.concurrent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How many of this process's CPUs processes other than the host's gdasync ranks keep busy: a build, a test suite,
 * another user's job. They compete for the CPUs as much as another rank does, but do not register in the
 * {@link CpuRegistry}; Linux's {@code /proc} tells: the busy time of the allowed CPUs ({@code /proc/stat}'s
 * {@code cpuN} lines: user, nice, system, irq, softirq, and steal, the time the hypervisor gave the CPU to another
 * guest) less the user and system time of the registered gdasync processes ({@code /proc/<pid>/stat}), as a share
 * of the time that passed, averaged over the last {@value #WINDOW} samples (a second at the watcher's pace).
 *
 * <p>Where {@code /proc} cannot be read (not Linux, another PID namespace) it counts nothing: the registry alone
 * decides, as before. One instance belongs to the CPU share's watcher (not thread-safe).
 */
final class ForeignLoad {
    /** Samples averaged. */
    static final int WINDOW = 10;
    /** The least time between two samples, in clock ticks per CPU (five: 50 ms at Linux's 100 ticks a second). */
    static final int MIN_TICKS_PER_CPU = 5;

    private final List<Integer> cpus;
    private final Map<Long, Long> lastTicks = new HashMap<>();
    private final double[] window = new double[WINDOW];
    private int samples;
    private int next;
    private long lastBusy = -1;
    private long lastTotal;
    private double average;

    /**
     * @param cpus the CPUs to watch (this process's allowed CPUs); empty watches every CPU
     */
    ForeignLoad(List<Integer> cpus) {
        this.cpus = List.copyOf(cpus);
    }

    /**
     * Takes a sample.
     *
     * @param gdasyncPids the registered gdasync processes (this one included): their time is not foreign
     * @return the CPUs other processes kept busy, averaged over the last samples; 0 before the second sample
     */
    double sample(Collection<Long> gdasyncPids) {
        long[] cpu;
        try {
            cpu = cpuTicks(Files.readAllLines(Path.of("/proc/stat")), cpus);
        } catch (IOException | RuntimeException e) {
            return average;
        }
        if (lastBusy >= 0 && cpu[1] - lastTotal < MIN_TICKS_PER_CPU * cpu[2]) {
            return average; // too soon after the last sample for ticks of 10 ms to say anything
        }
        long own = 0;
        Map<Long, Long> seen = new HashMap<>();
        for (long pid : gdasyncPids) {
            try {
                long t = processTicks(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
                seen.put(pid, t);
                Long before = lastTicks.get(pid);
                own += before == null ? 0 : Math.max(0, t - before);
            } catch (IOException | RuntimeException e) {
                // gone since it was listed: its time is no longer read either way
            }
        }
        lastTicks.clear();
        lastTicks.putAll(seen);
        long busy = cpu[0];
        long total = cpu[1];
        int n = (int) cpu[2];
        if (lastBusy >= 0 && total > lastTotal && n > 0) {
            // Ticks per CPU that passed: the share of one CPU a tick of busy time is.
            double elapsedPerCpu = (double) (total - lastTotal) / n;
            double others = Math.max(0, (busy - lastBusy) - own) / elapsedPerCpu;
            window[next] = Math.min(n, others);
            next = (next + 1) % WINDOW;
            samples = Math.min(samples + 1, WINDOW);
            double sum = 0;
            for (int i = 0; i < samples; i++) {
                sum += window[i];
            }
            average = sum / samples;
        }
        lastBusy = busy;
        lastTotal = total;
        return average;
    }

    /**
     * @param procStat the lines of {@code /proc/stat}
     * @param cpus     the CPUs to count; empty counts every {@code cpuN} line
     * @return the busy ticks of those CPUs (user, nice, system, irq, softirq, steal), all their ticks, and how many
     *         CPUs were counted
     * @throws IllegalArgumentException if no such CPU line is there
     */
    static long[] cpuTicks(List<String> procStat, List<Integer> cpus) {
        long busy = 0;
        long total = 0;
        int n = 0;
        for (String line : procStat) {
            if (!line.startsWith("cpu") || line.startsWith("cpu ")) {
                continue;
            }
            String[] f = line.trim().split("\\s+");
            int id = Integer.parseInt(f[0].substring(3));
            if (!cpus.isEmpty() && !cpus.contains(id)) {
                continue;
            }
            // user nice system idle iowait irq softirq steal (guest time is already in user and nice)
            long[] t = new long[8];
            for (int i = 0; i < t.length && i + 1 < f.length; i++) {
                t[i] = Long.parseLong(f[i + 1]);
            }
            busy += t[0] + t[1] + t[2] + t[5] + t[6] + t[7];
            total += t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
            n++;
        }
        if (n == 0) {
            throw new IllegalArgumentException("no line of CPUs " + cpus + " in /proc/stat");
        }
        return new long[]{busy, total, n};
    }

    /**
     * @param pidStat the text of {@code /proc/<pid>/stat}
     * @return the process's user plus system time (fields 14 and 15), in ticks
     */
    static long processTicks(String pidStat) {
        // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
        String[] f = pidStat.substring(pidStat.lastIndexOf(')') + 2).trim().split("\\s+");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
}
