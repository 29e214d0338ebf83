package dev.gdasync.apps.gabench;

import dev.gdasync.apps.common.Medians;

import java.util.Arrays;

/**
 * One measured combination: a method ({@code ga}, {@code ga-reg}, {@code raw}, {@code mpj}), a layout ({@code contig},
 * {@code strided}), an operation ({@code put}, {@code get}) and a patch size, with the time per operation of each rep.
 *
 * @param method    how the bytes moved
 * @param layout    contig or strided
 * @param op        put or get
 * @param bytes     the patch size
 * @param runs      the row runs the patch is cut into (1 for contiguous)
 * @param iters     operations per rep
 * @param repMicros microseconds per operation, one per rep
 */
record Row(String method, String layout, String op, int bytes, int runs, int iters, double[] repMicros) {
    Row {
        if (repMicros.length == 0) {
            throw new IllegalArgumentException("a row needs at least one rep");
        }
        repMicros = repMicros.clone();
    }

    /** @return the median of the reps' microseconds per operation */
    double medianMicros() {
        return Medians.of(repMicros);
    }

    double minMicros() {
        return Arrays.stream(repMicros).min().orElseThrow();
    }

    double maxMicros() {
        return Arrays.stream(repMicros).max().orElseThrow();
    }

    /** @return MB/s (10^6 bytes) at the median */
    double megabytesPerSecond() {
        return bytes / medianMicros();
    }

    /** @return what the plot and the table group by: "put contig" */
    String panel() {
        return op + " " + layout;
    }
}
