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
        return String.format(Locale.ROOT, "%-5s %9d B  %7d iters  %11.3f us  %11.1f MB/s", r.mode(), r.bytes(), r.iters(),
                r.oneWayMicros(), r.megabytesPerSecond());
    }

    static void print(List<Result> rows, PingPongOptions o, String machine, PrintStream out) {
        out.println();
        out.println(header(o));
        out.println("(one-way = round trip / 2, median of "
                + o.reps() + " runs of " + o.iters() + " round trips"
                + (o.computeMicros() > 0 ? String.format(Locale.ROOT, "; %.1f us compute task per receive", o.computeMicros()) : "")
                + (o.validate() ? "; payloads validated" : "") + ")");
        out.println(machine);
        if (o.modes().stream().anyMatch(Report::overTheSoftwareNic)) {
            out.println("software NIC transport: " + transport() + (o.nics().contains("mlx5")
                    ? " (the software mlx5 device moves its bytes over it too)" : ""));
        }
        int width = Math.max(5, rows.stream().mapToInt(r -> r.mode().length()).max().orElse(5));
        out.printf(Locale.ROOT, "%-" + width + "s %10s %8s %12s %12s%n", "mode", "bytes", "iters", "oneway_us", "MB/s");
        for (Result r : rows) {
            out.printf(Locale.ROOT, "%-" + width + "s %10d %8d %12.3f %12.1f%n", r.mode(), r.bytes(), r.iters(),
                    r.oneWayMicros(), r.megabytesPerSecond());
        }
        out.println();
        for (Result r : rows) {
            if (r.bytes() != 8) {
                continue;
            }
            String mode = r.mode().contains("/") ? r.mode().substring(0, r.mode().indexOf('/')) : r.mode();
            switch (mode) {
                case "host" -> target(out, "8 B one-way, " + r.mode(), r.oneWayMicros(), HOST_TARGET_US, o);
                case "sa" -> target(out, "8 B one-way, " + r.mode(), r.oneWayMicros(), SA_TARGET_US, o);
                case "mpj" -> out.printf(Locale.ROOT, "8 B one-way, mpj: %.3f us (the MPJ Express reference; no target)%n",
                        r.oneWayMicros());
                case "jucx" -> out.printf(Locale.ROOT, "8 B one-way, jucx: %.3f us (the raw JUCX reference; no target)%n",
                        r.oneWayMicros());
                default -> {
                }
            }
        }
    }

    private static void target(PrintStream out, String what, double measured, double limit, PingPongOptions o) {
        if (o.computeMicros() > 0 || o.buffers() == PingPongOptions.Buffers.GPU) {
            out.printf(Locale.ROOT, "%s: %.3f us, target <= %.1f us: not applicable with %s%n", what, measured, limit,
                    o.computeMicros() > 0 ? "--compute-us" : "--buffers gpu (the targets are for host buffers)");
            return;
        }
        out.printf(Locale.ROOT, "%s: %.3f us, target <= %.1f us: %s%s%n", what, measured, limit,
                measured <= limit ? "met" : "NOT met", o.validate() ? " (with --validate, which adds the checks)" : "");
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
        if (o.modes().contains(PingPongOptions.Mode.JUCX)) {
            parts.add("jucx on raw JUCX (" + JucxPeer.describe() + ")");
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
