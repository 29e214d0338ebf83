package dev.gdasync.apps.comd;

/**
 * The reductions CoMD needs across ranks. Sums add the ranks' values in rank order on every rank, so every
 * communication model gets the same bits.
 */
interface Collectives {
    /** @return this rank */
    int rank();

    /** @return the number of ranks */
    int size();

    /** @return every rank's values, {@code [rank][i]} */
    double[][] allGather(double[] mine);

    /** @return the element-wise sum over ranks, in rank order */
    default double[] sum(double... mine) {
        double[][] all = allGather(mine);
        double[] s = all[0].clone();
        for (int r = 1; r < all.length; r++) {
            for (int i = 0; i < s.length; i++) {
                s[i] += all[r][i];
            }
        }
        return s;
    }

    /** Returns once every rank is here. */
    void barrier();
}
