package dev.gdasync.apps.hpgmg;

/**
 * Everything the solver computes on a level's boxes, behind one interface so that another backend (CUDA
 * kernels on device-resident boxes) can replace the host one: BLAS1 on vectors, the fv4 operator
 * (apply, residual, one GSRB sweep, the exact diagonal), boundary conditions, and the block kernels of the
 * communicator programs (copy, restriction, interpolation). Vectors are named by upstream's ids
 * ({@link Level#VECTOR_U} ...). Every method works on this rank's boxes only; reductions return partial
 * results that {@link Reduction} combines across ranks.
 */
interface Operators {
    /** zero_vector: the vector, ghosts included. */
    void zero(Level l, int id);

    /** c = scale * a. */
    void scale(Level l, int c, double scale, int a);

    /** c = scale * a * b. */
    void mul(Level l, int c, double scale, int a, int b);

    /** c = sa * a + sb * b. */
    void add(Level l, int c, double sa, int a, double sb, int b);

    /** color_vector: 1 on the cells of one color of a {@code colors}^3 coloring, 0 elsewhere. */
    void color(Level l, int id, int colors, int ic, int jc, int kc);

    /** @param out per local box, per tile (upstream's my_blocks), the tile's partial sum of a*b, in box order */
    void dotPartials(Level l, int a, int b, double[] out);

    /** @return the max norm of the vector over this rank's boxes */
    double normLocal(Level l, int id);

    /** Ax = A x (ghost zones of x already exchanged and bounded). */
    void applyOp(Level l, int ax, int x, double a, double b);

    /** res = rhs - A x. */
    void residual(Level l, int res, int x, int rhs, double a, double b);

    /** One out-of-place GSRB sweep {@code s}: xnp1 = xn, then the sweep's color relaxes from xn. */
    void gsrbSweep(Level l, int xn, int xnp1, int rhs, int sweep, double a, double b);

    /** rebuild_operator_blackbox inner step: Aii and sumAbsAij from A applied to a coloring in {@code x}. */
    void diagonalAccumulate(Level l, int x, double a, double b);

    /** rebuild_operator_blackbox end: D^{-1} (and the L1 inverse in VECTOR_E). */
    void diagonalInvert(Level l, double a, double b);

    /** apply_BCs_v2 / apply_BCs_v4 (v4 falls back to v2 on boxes under 4^3), Dirichlet. */
    void applyBcs(Level l, int id, Shape shape, int order);

    /** extrapolate_betas: the face coefficients in ghost zones outside the domain. */
    void extrapolateBetas(Level l);

    /** CopyBlock. */
    void copy(Level l, int id, Block b);

    /** IncrementBlock: write = prescale * write + read. */
    void increment(Level l, int id, double prescale, Block b);

    /** restriction_pc_block: fine box to coarse box or buffer. */
    void restrict(Level coarse, int idc, Level fine, int idf, int type, Block b);

    /** interpolation_v2_block / interpolation_v4_block: coarse box to fine box or buffer. */
    void interpolate(Level fine, int idf, double prescale, Level coarse, int idc, Block b, int order);
}
