package dev.gdasync.apps.hpgmg;

import java.util.Arrays;

/** Upstream's Z-Morton decomposition of a level's boxes over ranks (over the valid domain, odd bases allowed). */
final class Decomposition {
    private Decomposition() {
    }

    /**
     * @param boxesIn boxes along each dimension
     * @param ranks   ranks the level runs on (0 .. ranks-1)
     * @return the rank of every box, box id {@code i + j*n + k*n*n}
     */
    static int[] zMorton(int boxesIn, int ranks) {
        int[] rankOfBox = new int[boxesIn * boxesIn * boxesIn];
        Arrays.fill(rankOfBox, -1);
        zmort(rankOfBox, boxesIn, 0, 0, 0, boxesIn, boxesIn, boxesIn, ranks, 0, rankOfBox.length);
        return rankOfBox;
    }

    private static int zmort(int[] rob, int n, int ilo, int jlo, int klo, int idim, int jdim, int kdim, int ranks,
                             int offset, int max) {
        if (idim < 1 || jdim < 1 || kdim < 1 || ilo < 0 || jlo < 0 || klo < 0) {
            return offset;
        }
        if (idim == 1 && jdim == 1 && kdim == 1) {
            if (ilo < n && jlo < n && klo < n) {
                rob[ilo + jlo * n + klo * n * n] = (int) ((long) ranks * offset / max);
                return offset + 1;
            }
            return offset;
        }
        int imid = ilo + idim / 2;
        int jmid = jlo + jdim / 2;
        int kmid = klo + kdim / 2;
        offset = zmort(rob, n, ilo, jlo, klo, idim / 2, jdim / 2, kdim / 2, ranks, offset, max);
        offset = zmort(rob, n, imid, jlo, klo, idim - idim / 2, jdim / 2, kdim / 2, ranks, offset, max);
        offset = zmort(rob, n, ilo, jmid, klo, idim / 2, jdim - jdim / 2, kdim / 2, ranks, offset, max);
        offset = zmort(rob, n, imid, jmid, klo, idim - idim / 2, jdim - jdim / 2, kdim / 2, ranks, offset, max);
        offset = zmort(rob, n, ilo, jlo, kmid, idim / 2, jdim / 2, kdim - kdim / 2, ranks, offset, max);
        offset = zmort(rob, n, imid, jlo, kmid, idim - idim / 2, jdim / 2, kdim - kdim / 2, ranks, offset, max);
        offset = zmort(rob, n, ilo, jmid, kmid, idim / 2, jdim - jdim / 2, kdim - kdim / 2, ranks, offset, max);
        offset = zmort(rob, n, imid, jmid, kmid, idim - idim / 2, jdim - jdim / 2, kdim - kdim / 2, ranks, offset, max);
        return offset;
    }
}
