package dev.gdasync.apps.gdsyncpingpong;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Prints the ping-pong table with the performance targets, and writes the CSV. */
final class Report {
    static final String CSV_HEADER = "ring,bytes,iters,oneway_us,mbps";

    private Report() {
    }

    static void print(List<Result> results, PingPongPlan plan) {
        System.out.println();
        System.out.println("gdsync ping-pong over the shared-memory software NIC (one-way = round trip / 2, median of "
                + plan.repetitions() + " runs)");
        System.out.printf(Locale.ROOT, "%-8s %10s %8s %12s %12s%n", "ring", "bytes", "iters", "oneway_us", "MB/s");
        for (Result r : results) {
            System.out.printf(Locale.ROOT, "%-8s %10d %8d %12.3f %12.1f%n", r.ring(), r.bytes(), r.iters(),
                    r.oneWayMicros(), r.megabytesPerSecond());
        }
        System.out.println();
        for (Result r : results) {
            if (r.bytes() == 8 && r.ring().equals("cpu")) {
                target("8 B one-way, ring=cpu", r.oneWayMicros(), 0.25);
            }
            if (r.bytes() == 8 && r.ring().equals("stream")) {
                target("8 B one-way, ring=stream", r.oneWayMicros(), 1.0);
            }
        }
        Result copy = find(results, "memcpy", 1 << 20);
        for (String ring : List.of("cpu", "stream")) {
            Result r = find(results, ring, 1 << 20);
            if (r != null && copy != null) {
                double ratio = r.megabytesPerSecond() / copy.megabytesPerSecond();
                System.out.printf(Locale.ROOT, "1 MiB ring=%s: %.1f MB/s = %.1f %% of single-thread memcpy (%.1f MB/s), target >= 80 %%: %s%n",
                        ring, r.megabytesPerSecond(), 100 * ratio, copy.megabytesPerSecond(), ratio >= 0.8 ? "met" : "NOT met");
            }
        }
    }

    private static void target(String what, double measured, double limit) {
        System.out.printf(Locale.ROOT, "%s: %.3f us, target <= %.2f us: %s%n", what, measured, limit,
                measured <= limit ? "met" : "NOT met");
    }

    private static Result find(List<Result> results, String ring, int bytes) {
        for (Result r : results) {
            if (r.ring().equals(ring) && r.bytes() == bytes) {
                return r;
            }
        }
        return null;
    }

    static void writeCsv(List<Result> results, Path file) {
        List<String> lines = new ArrayList<>();
        lines.add(CSV_HEADER);
        for (Result r : results) {
            lines.add(String.format(Locale.ROOT, "%s,%d,%d,%.4f,%.1f", r.ring(), r.bytes(), r.iters(), r.oneWayMicros(),
                    r.megabytesPerSecond()));
        }
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.write(file, lines);
        } catch (IOException e) {
            throw new UncheckedIOException("could not write " + file, e);
        }
    }
}
