package dev.gdasync.apps.pingpong;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The ping-pong's table and its performance targets (DESIGN.md §7, issue 3). */
final class Report {
    /** 8 B one-way target of {@code host}, in microseconds. */
    static final double HOST_TARGET_US = 0.3;
    /** 8 B one-way target of {@code sa}, in microseconds. */
    static final double SA_TARGET_US = 1.2;

    private Report() {
    }

    /** @return the line printed as soon as a row is measured */
    static String progressLine(Result r) {
        String line = String.format(Locale.ROOT, "%-5s %9d B  %7d iters  %11.3f us  %11.1f MB/s", r.mode(), r.bytes(), r.iters(),
                r.oneWayMicros(), r.megabytesPerSecond());
        Latencies l = r.latencies();
        return l.isKnown() ? line + "  (p50 " + micros(l.p50()) + ", p99 " + micros(l.p99()) + ", max " + micros(l.max()) + " us)"
                : line;
    }

    static void print(List<Result> rows, PingPongOptions o, String machine, PrintStream out) {
        print(rows, o, machine, LoadSeen.UNKNOWN, out);
    }

    static void print(List<Result> rows, PingPongOptions o, String machine, LoadSeen load, PrintStream out) {
        out.println();
        out.println(header(o));
        out.println("(one-way = round trip / 2: oneway_us the median of "
                + o.reps() + " runs of " + o.iters() + " round trips; min..max the distribution of every timed round trip"
                + " (HdrHistogram); runs the fastest and slowest run and their spread"
                + (o.computeMicros() > 0 ? String.format(Locale.ROOT, "; %.1f us compute task per receive", o.computeMicros()) : "")
                + (o.validate() ? "; payloads validated" : "") + ")");
        out.println(machine);
        out.println(load.describe());
        if (o.modes().stream().anyMatch(Report::overTheSoftwareNic)) {
            out.println("software NIC transport: " + transport() + (o.nics().contains("mlx5")
                    ? " (the software mlx5 device moves its bytes over it too)" : ""));
        }
        table(rows, out);
        Ratios.print(rows, out);
        out.println();
        for (Result r : rows) {
            if (r.bytes() != 8) {
                continue;
            }
            String mode = r.mode().contains("/") ? r.mode().substring(0, r.mode().indexOf('/')) : r.mode();
            switch (mode) {
                case "host" -> target(out, "8 B one-way, " + r.mode(), r, HOST_TARGET_US, o, load);
                case "sa" -> target(out, "8 B one-way, " + r.mode(), r, SA_TARGET_US, o, load);
                case "mpj", "mpj-niodev" -> out.printf(Locale.ROOT,
                        "8 B one-way, %s: %.3f us (the MPJ Express reference; no target)%n", r.mode(), r.oneWayMicros());
                case "jucx" -> out.printf(Locale.ROOT, "8 B one-way, jucx: %.3f us (the raw JUCX reference; no target)%n",
                        r.oneWayMicros());
                case "floor", "ompi", "ucx" -> out.printf(Locale.ROOT, "8 B one-way, %s: %.3f us (a C reference; no target)%n",
                        r.mode(), r.oneWayMicros());
                default -> {
                }
            }
        }
    }

    /**
     * Prints the table: per row the median, the distribution of every round trip and the spread of the runs (a
     * dash where a mode does not time its round trips one by one).
     *
     * @param rows the rows
     * @param out  where
     */
    static void table(List<Result> rows, PrintStream out) {
        int width = Math.max(5, rows.stream().mapToInt(r -> r.mode().length()).max().orElse(5));
        out.printf(Locale.ROOT, "%-" + width + "s %10s %8s %10s %11s | %8s %8s %8s %8s %9s | %8s %8s %6s%n", "mode", "bytes",
                "iters", "oneway_us", "MB/s", "min", "p50", "p99", "p99.9", "max", "run_min", "run_max", "spread");
        for (Result r : rows) {
            Latencies l = r.latencies();
            RunSpread s = r.runs();
            out.printf(Locale.ROOT, "%-" + width + "s %10d %8d %10.3f %11.1f | %8s %8s %8s %8s %9s | %8s %8s %6s%n", r.mode(),
                    r.bytes(), r.iters(), r.oneWayMicros(), r.megabytesPerSecond(), micros(l.min()), micros(l.p50()),
                    micros(l.p99()), micros(l.p999()), micros(l.max()), micros(s.min()), micros(s.max()),
                    Double.isNaN(s.percent()) ? "-" : String.format(Locale.ROOT, "%.0f%%", s.percent()));
        }
    }

    /** @return microseconds with three decimals, fewer for large values; a dash for unknown */
    static String micros(double us) {
        if (Double.isNaN(us)) {
            return "-";
        }
        return String.format(Locale.ROOT, us < 100 ? "%.3f" : us < 10_000 ? "%.1f" : "%.0f", us);
    }

    /**
     * Prints a target line: met, NOT met on a quiet run, or not judged when the run was too noisy to say.
     *
     * @param what  what is measured
     * @param r     the row
     * @param limit the target, microseconds
     * @param o     the options (targets apply to host buffers without compute)
     * @param load  what else ran meanwhile
     */
    static void target(PrintStream out, String what, Result r, double limit, PingPongOptions o, LoadSeen load) {
        double measured = r.oneWayMicros();
        String p50 = r.latencies().isKnown() ? String.format(Locale.ROOT, " (p50 %.3f us)", r.latencies().p50()) : "";
        if (o.computeMicros() > 0 || o.buffers() == PingPongOptions.Buffers.GPU) {
            out.printf(Locale.ROOT, "%s: %.3f us%s, target <= %.1f us: not applicable with %s%n", what, measured, p50, limit,
                    o.computeMicros() > 0 ? "--compute-us" : "--buffers gpu (the targets are for host buffers)");
            return;
        }
        String validated = o.validate() ? " (with --validate, which adds the checks)" : "";
        if (measured <= limit) {
            out.printf(Locale.ROOT, "%s: %.3f us%s, target <= %.1f us: met%s%n", what, measured, p50, limit, validated);
            return;
        }
        List<String> noise = load.noise(r.runs());
        if (noise.isEmpty()) {
            out.printf(Locale.ROOT, "%s: %.3f us%s, target <= %.1f us: NOT met%s%n", what, measured, p50, limit, validated);
        } else {
            out.printf(Locale.ROOT, "%s: %.3f us%s, target <= %.1f us: not judged, the run was too noisy: %s%n", what,
                    measured, p50, limit, String.join("; ", noise));
        }
    }

    /** @return the NIC providers the modes ran over, in words */
    static String nics(PingPongOptions o) {
        if (o.nics().isEmpty() || o.nics().equals(List.of("swnic"))) {
            return "the software NIC";
        }
        List<String> names = o.nics().stream().map(n -> n.equals("mlx5") ? "the mlx5 provider (mlx5 queues)"
                : n.equals("swnic") ? "the software NIC" : n).toList();
        return String.join(" and ", names) + (o.nics().size() > 1 ? ", side by side (rows mode/provider)" : "");
    }

    /** @return the table's title, naming the modes that ran and what each ran on */
    static String header(PingPongOptions o) {
        List<String> nic = o.modes().stream().filter(Report::overTheSoftwareNic).map(PingPongOptions.Mode::label).toList();
        List<String> parts = new ArrayList<>();
        if (!nic.isEmpty()) {
            parts.add(words(nic) + (o.buffers() == PingPongOptions.Buffers.GPU
                    ? " with GPU buffers over " + nics(o) + " (a compute kernel before each send"
                    + (nic.contains("host") ? "; host: cuStreamSynchronize, then the CPU sends" : "")
                    + (nic.contains("sa") ? "; sa: a CUDA stream rings and waits" : "") + ")"
                    : " over " + nics(o)));
        }
        if (o.modes().contains(PingPongOptions.Mode.MPJ)) {
            parts.add("mpj on MPJ Express's multicore device");
        }
        if (o.modes().contains(PingPongOptions.Mode.MPJ_NIODEV)) {
            parts.add("mpj-niodev on MPJ Express's niodev (a JVM per rank, TCP over the loopback)");
        }
        if (o.modes().contains(PingPongOptions.Mode.JUCX)) {
            parts.add("jucx on raw JUCX (" + JucxPeer.describe() + ")");
        }
        List<String> c = o.modes().stream().filter(CPeers::isCPeer).map(PingPongOptions.Mode::label).toList();
        if (!c.isEmpty()) {
            parts.add(words(c) + " in C beside them (separate processes on the same CPUs)");
        }
        return "pingpong, 2 ranks: " + String.join(", ", parts);
    }

    private static boolean overTheSoftwareNic(PingPongOptions.Mode m) {
        return m == PingPongOptions.Mode.HOST || m == PingPongOptions.Mode.SA || m == PingPongOptions.Mode.KI;
    }

    /** @return "host", "host and sa", "host, sa and ki" */
    private static String words(List<String> names) {
        return names.size() == 1 ? names.getFirst()
                : String.join(", ", names.subList(0, names.size() - 1)) + " and " + names.getLast();
    }

    /** @return the software NIC's transport as the ranks' settings choose it, in words */
    static String transport() {
        return switch (dev.gdasync.gdsync.swnic.SwNicConfig.defaults().transport()) {
            case AUTO -> "auto (shared memory between ranks of one host, UCX between hosts)";
            case SHM -> "shm (shared memory only)";
            case UCX -> "ucx (UCX between every pair of ranks)";
        };
    }
}
