package dev.gdasync.apps.collectives;

import dev.gdasync.apps.bench.Medians;

import java.util.Arrays;
import java.util.Locale;

/**
 * One measured combination: a collective, a method ({@code msccl}, {@code msccl-sa}, {@code built-in},
 * {@code allpairs-sa}, {@code mpj}), the ranks and
 * the bytes per rank, with the slowest rank's microseconds per collective of each rep.
 *
 * @param collective allreduce or alltoall
 * @param method     what ran it
 * @param ranks      the job's ranks
 * @param bytes      bytes per rank (allreduce: the vector; alltoall: the whole send buffer)
 * @param iters      collectives per rep
 * @param repMicros  microseconds per collective, one per rep
 */
record BenchRow(String collective, String method, int ranks, long bytes, int iters, double[] repMicros) {
    static final String CSV_HEADER = "collective,method,ranks,bytes,iters,median_us,min_us,max_us,MBps";

    BenchRow {
        repMicros = repMicros.clone();
    }

    double medianMicros() {
        return Medians.of(repMicros);
    }

    String csv() {
        return String.format(Locale.ROOT, "%s,%s,%d,%d,%d,%.3f,%.3f,%.3f,%.2f", collective, method, ranks, bytes, iters,
                medianMicros(), Arrays.stream(repMicros).min().orElseThrow(),
                Arrays.stream(repMicros).max().orElseThrow(), bytes / medianMicros());
    }

    /**
     * @param line a line of {@link #csv()}
     * @return the row (its reps: the median alone)
     */
    static BenchRow parse(String line) {
        String[] f = line.split(",");
        return new BenchRow(f[0], f[1], Integer.parseInt(f[2]), Long.parseLong(f[3]), Integer.parseInt(f[4]),
                new double[] {Double.parseDouble(f[5])});
    }
}
