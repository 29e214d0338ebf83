package dev.gdasync.apps.comd;

/**
 * CoMD's random numbers: a 61-bit prime-modulus linear congruential generator seeded per atom from its global id
 * and a call site, so an atom's initial velocity and displacement do not depend on which rank creates it. The
 * state is a long holding CoMD's unsigned 64-bit seed.
 */
final class CoMDRandom {
    private static final long MULTIPLIER = 437799614237992725L;
    private static final long MODULUS = 2305843009213693951L; // 2^61 - 1
    private static final double TO_DOUBLE = 1.0 / (double) MODULUS;

    private long seed;

    /**
     * @param id       an atom's global id
     * @param callSite a number per place that draws numbers (123: velocities, 457: displacements)
     */
    CoMDRandom(int id, int callSite) {
        // Two 32-bit Knuth multiplicative hashes, then ten draws to pass the early low-bit correlations.
        long s1 = (id * 0x9E3779B1L) & 0xFFFFFFFFL;            // uint32 id * 2654435761
        long s2 = ((id + callSite) * 0x9E3779B1L) & 0xFFFFFFFFL;
        seed = (s1 << 32) + s2;
        for (int i = 0; i < 10; i++) {
            lcg61();
        }
    }

    /** @return a number in [0, 1] */
    double lcg61() {
        seed = Long.remainderUnsigned(seed * MULTIPLIER, MODULUS);
        return seed * TO_DOUBLE;
    }

    /** @return a Gaussian number of mean 0 and variance 1 (Box-Muller; the second number is not kept) */
    double gasdev() {
        double rsq;
        double v1;
        double v2;
        do {
            v1 = 2.0 * lcg61() - 1.0;
            v2 = 2.0 * lcg61() - 1.0;
            rsq = v1 * v1 + v2 * v2;
        } while (rsq >= 1.0 || rsq == 0.0);
        return v2 * Math.sqrt(-2.0 * Math.log(rsq) / rsq);
    }
}
