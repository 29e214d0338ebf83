package dev.gdasync.apps.gabench;

import java.util.List;

/**
 * Where the benchmark's patches lie. Elements are 8 bytes. The contiguous array is 1-D, {@code 2 * maxElements} long,
 * rank 1 owning the second half; a patch of {@code b} bytes is the first {@code b / 8} elements of rank 1's half. The
 * strided array is 2-D with rows of {@code 2 * runBytes}, rank 1 owning the lower half of the rows; a patch of {@code b}
 * bytes takes {@code min(b, runBytes)} bytes from the middle of each of {@code b / min(b, runBytes)} consecutive rows,
 * so it moves as that many separate row runs. Rank 1's raw window holds both layouts at offset 0, the strided one
 * with the same row length as the array.
 *
 * @param maxBytes the largest patch
 * @param runBytes the longest row run of a strided patch
 */
record Geometry(int maxBytes, int runBytes) {
    static final int ELEMENT = 8;

    Geometry {
        if (runBytes < ELEMENT || runBytes % ELEMENT != 0) {
            throw new IllegalArgumentException("--run-bytes must be a positive multiple of 8, got " + runBytes);
        }
    }

    /**
     * @param sizes the patch sizes
     * @param runBytes the longest row run
     * @return the geometry for them
     * @throws IllegalArgumentException if a size cannot be cut into whole elements and whole runs
     */
    static Geometry of(List<Integer> sizes, int runBytes) {
        int max = 0;
        for (int b : sizes) {
            if (b < ELEMENT || b % ELEMENT != 0) {
                throw new IllegalArgumentException("sizes must be positive multiples of 8 bytes, got " + b);
            }
            if (b > runBytes && b % runBytes != 0) {
                throw new IllegalArgumentException("a size above --run-bytes (" + runBytes + ") must be a multiple of it, got " + b);
            }
            max = Math.max(max, b);
        }
        return new Geometry(max, runBytes);
    }

    /** @return elements in each rank's block of the contiguous array */
    int blockElements() {
        return maxBytes / ELEMENT;
    }

    /** @return bytes of one row of the strided array */
    int rowBytes() {
        return 2 * runBytes;
    }

    /** @return rows in each rank's block of the strided array */
    int blockRows() {
        return Math.max(1, maxBytes / runBytes);
    }

    /** @return the bytes each rank's raw window needs */
    long windowBytes() {
        return Math.max(maxBytes, (long) blockRows() * rowBytes());
    }

    /** @return the bytes of one row run of a strided patch of {@code bytes} */
    int run(int bytes) {
        return Math.min(bytes, runBytes);
    }

    /** @return the row runs of a strided patch of {@code bytes} */
    int runs(int bytes) {
        return bytes / run(bytes);
    }

    /** @return the byte offset of a strided patch's first run inside its row (a quarter row in) */
    int columnOffset() {
        return runBytes / 2 / ELEMENT * ELEMENT;
    }

    /** @return the byte offset in rank 1's block (and raw window) of run {@code i} of a strided patch */
    long runOffset(int i) {
        return (long) i * rowBytes() + columnOffset();
    }
}
