package dev.gdasync.apps.collectives;

import dev.gdasync.apps.common.Medians;

import java.util.Arrays;
import java.util.Locale;

/**
 * One measured combination: a collective, a method ({@code msccl}, {@code msccl-sa}, {@code built-in},
 * {@code allpairs-sa}, {@code mpj}, {@code ompi}, ...), the ranks and the bytes per rank, with the slowest rank's
 * microseconds per collective of each rep.
 *
 * @param collective allreduce, alltoall, allgather, bcast or barrier
 * @param method     what ran it
 * @param ranks      the job's ranks
 * @param bytes      bytes per rank ({@link BenchCollective}; 0 for the barrier)
 * @param iters      collectives per rep
 * @param repMicros  microseconds per collective, one per rep
 */
record BenchRow(String collective, String method, int ranks, long bytes, int iters, double[] repMicros) {
    /** The CSV's header: {@link #csv()}'s columns and the ratio to Open MPI's median. */
    static final String CSV_HEADER = "collective,method,ranks,bytes,iters,median_us,min_us,max_us,MBps,x_ompi";

    BenchRow {
        repMicros = repMicros.clone();
    }

    double medianMicros() {
        return Medians.of(repMicros);
    }

    /** @return megabytes per second of the bytes a rank puts in (0 for the barrier) */
    double megabytesPerSecond() {
        return bytes / medianMicros();
    }

    /** @return the CSV columns but the last ({@link #CSV_HEADER}) */
    String csv() {
        return String.format(Locale.ROOT, "%s,%s,%d,%d,%d,%.3f,%.3f,%.3f,%.2f", collective, method, ranks, bytes, iters,
                medianMicros(), Arrays.stream(repMicros).min().orElseThrow(),
                Arrays.stream(repMicros).max().orElseThrow(), megabytesPerSecond());
    }

    /**
     * Reads a result line of a child job (MPJ Express, Open MPI): {@code COLL BYTES ITERS US...}, the slowest rank's
     * microseconds per collective of each rep.
     *
     * @param method the baseline's method
     * @param ranks  the ranks it ran on
     * @param line   the line, without its tag
     * @return the row
     * @throws IllegalArgumentException if the line is not one
     */
    static BenchRow fromChild(String method, int ranks, String line) {
        String[] f = line.strip().split("\\s+");
        if (f.length < 4) {
            throw new IllegalArgumentException(method + ": not a result line (COLL BYTES ITERS US...): " + line);
        }
        double[] us = new double[f.length - 3];
        for (int i = 0; i < us.length; i++) {
            us[i] = Double.parseDouble(f[3 + i]);
        }
        return new BenchRow(BenchCollective.of(f[0]).label(), method, ranks, Long.parseLong(f[1]),
                Integer.parseInt(f[2]), us);
    }

    /**
     * @param c   the case
     * @param us  the slowest rank's microseconds per collective of each rep
     * @return the child's result line ({@link #fromChild}'s input)
     */
    static String childLine(BenchCase c, double[] us) {
        StringBuilder s = new StringBuilder(c.collective().label()).append(' ').append(c.bytes()).append(' ')
                .append(c.iters());
        for (double u : us) {
            s.append(' ').append(String.format(Locale.ROOT, "%.4f", u));
        }
        return s.toString();
    }
}
