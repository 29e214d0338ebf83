package dev.gdasync.apps.hpgmg;

/**
 * The global grid of upstream's main: the largest cube of boxes, at most {@code boxesPerRank * ranks} of
 * them, whose dimension halves down to at most 11.
 *
 * @param log2BoxDim the box dimension's log2
 * @param boxesIn    boxes along each dimension
 */
record ProblemSize(int log2BoxDim, int boxesIn) {
    static final int MAX_COARSE_DIM = 11;

    int boxDim() {
        return 1 << log2BoxDim;
    }

    int boxes() {
        return boxesIn * boxesIn * boxesIn;
    }

    /**
     * @throws IllegalArgumentException with a one-line reason for sizes upstream refuses, and when there
     *                                  are more ranks than boxes
     */
    static ProblemSize of(int log2BoxDim, int boxesPerRank, int ranks) {
        if (log2BoxDim > 9) {
            throw new IllegalArgumentException("log2 box dimension must be less than 10, got " + log2BoxDim);
        }
        if (log2BoxDim < 4) {
            throw new IllegalArgumentException("log2 box dimension must be at least 4 (boxes of 16^3 cells), got " + log2BoxDim
                    + " (the box dimension is 2 to that power, so it is always a power of two)");
        }
        if (boxesPerRank < 1) {
            throw new IllegalArgumentException("boxes per rank must be at least 1, got " + boxesPerRank);
        }
        long target = (long) boxesPerRank * ranks;
        int boxDim = 1 << log2BoxDim;
        int best = -1;
        for (int bi = 1; bi < 1000; bi++) {
            if ((long) bi * bi * bi <= target) {
                long c = (long) boxDim * bi;
                while (c % 2 == 0) {
                    c /= 2;
                }
                if (c <= MAX_COARSE_DIM) {
                    best = bi;
                }
            }
        }
        if (best < 1) {
            throw new IllegalArgumentException("failed to find an acceptable problem size");
        }
        if ((long) best * best * best < ranks) {
            throw new IllegalArgumentException("more ranks (" + ranks + ") than boxes (" + best * best * best + " of "
                    + boxDim + "^3): give more boxes per rank or fewer ranks");
        }
        return new ProblemSize(log2BoxDim, best);
    }
}
