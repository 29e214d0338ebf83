package dev.gdasync.apps.hpgmg;

import java.util.ArrayList;
import java.util.List;

/**
 * One multigrid level as upstream builds it: a cube of {@code boxesIn}^3 boxes of {@code boxDim}^3 cells
 * spread over ranks 0 .. nProcs-1 by Z-Morton order, this rank's boxes, its boundary-condition regions and
 * its ghost-zone exchanges, and (filled by {@link MultiGrid}) the restriction to and interpolation from
 * the next coarser level.
 */
final class Level {
    static final int VECTOR_TEMP = 0;
    static final int VECTOR_U = 1;
    static final int VECTOR_F = 2;
    static final int VECTOR_E = 3;
    static final int VECTOR_R = 4;
    static final int VECTOR_DINV = 5;
    static final int VECTOR_BETA_I = 6;
    static final int VECTOR_BETA_J = 7;
    static final int VECTOR_BETA_K = 8;
    static final int VECTORS_RESERVED = 9;
    /** Upstream's my_blocks tiles (BLOCKCOPY_TILE_J, _K): the grain of dot-product partial sums. */
    static final int TILE = 8;

    final int index;
    double h;
    final int boxDim;
    final int ghosts;
    final int boxesIn;
    final int dim;
    final int nProcs;
    final int rank;
    final int[] rankOfBox;
    final Box[] boxes;
    final int[] localOfBox;
    final List<List<BcRegion>> bc = new ArrayList<>();
    final CommPlan[] exchange = new CommPlan[Shape.values().length];
    /** Restriction from this level to the next coarser one, per {@link Restriction} type. */
    final CommPlan[] restriction = new CommPlan[4];
    /** Interpolation from the next coarser level to this one. */
    CommPlan interpolation;
    /** Whether this rank has boxes on this level or a coarser one. */
    boolean active;
    /** The ranks active on this level, ascending: the reductions' participants. */
    int[] participants;
    Reduction reduction;
    final LevelTimers timers = new LevelTimers();
    int krylovIterations;
    int vcycles;

    Level(int index, int boxesIn, int boxDim, int ghosts, int vectors, int rank, int nProcs) {
        this.index = index;
        this.boxesIn = boxesIn;
        this.boxDim = boxDim;
        this.ghosts = ghosts;
        this.dim = boxesIn * boxDim;
        this.rank = rank;
        this.nProcs = nProcs;
        this.rankOfBox = Decomposition.zMorton(boxesIn, nProcs);
        this.localOfBox = new int[rankOfBox.length];
        List<Box> mine = new ArrayList<>();
        for (int b = 0; b < rankOfBox.length; b++) {
            localOfBox[b] = -1;
            if (rankOfBox[b] == rank) {
                localOfBox[b] = mine.size();
                int i = b % boxesIn;
                int j = (b / boxesIn) % boxesIn;
                int k = b / (boxesIn * boxesIn);
                mine.add(new Box(b, i * boxDim, j * boxDim, k * boxDim, boxDim, ghosts, vectors));
            }
        }
        this.boxes = mine.toArray(Box[]::new);
        for (Shape s : Shape.values()) {
            bc.add(boundaryRegions(s));
            exchange[s.ordinal()] = exchangePlan(s);
        }
    }

    int boxId(int bi, int bj, int bk) {
        if (bi < 0 || bj < 0 || bk < 0 || bi >= boxesIn || bj >= boxesIn || bk >= boxesIn) {
            return -1;
        }
        return bi + bj * boxesIn + bk * boxesIn * boxesIn;
    }

    /** @return the number of dot-product tiles of one box */
    int tilesPerBox() {
        int t = (boxDim + TILE - 1) / TILE;
        return t * t;
    }

    /** @return how many boxes {@code r} owns on this level */
    int boxesOf(int r) {
        int n = 0;
        for (int owner : rankOfBox) {
            if (owner == r) {
                n++;
            }
        }
        return n;
    }

    private List<BcRegion> boundaryRegions(Shape shape) {
        List<BcRegion> out = new ArrayList<>();
        for (int box = 0; box < boxes.length; box++) {
            Box bx = boxes[box];
            for (int dk = -1; dk <= 1; dk++) {
                for (int dj = -1; dj <= 1; dj++) {
                    for (int di = -1; di <= 1; di++) {
                        int dir = 13 + di + 3 * dj + 9 * dk;
                        boolean outside = false;
                        int normal = 13;
                        int ni = bx.lowI / boxDim + di;
                        int nj = bx.lowJ / boxDim + dj;
                        int nk = bx.lowK / boxDim + dk;
                        if (ni < 0) { outside = true; normal -= 1; }
                        if (nj < 0) { outside = true; normal -= 3; }
                        if (nk < 0) { outside = true; normal -= 9; }
                        if (ni >= boxesIn) { outside = true; normal += 1; }
                        if (nj >= boxesIn) { outside = true; normal += 3; }
                        if (nk >= boxesIn) { outside = true; normal += 9; }
                        if (shape == Shape.STAR && (Shape.EDGES[dir] + Shape.CORNERS[dir] > 0)) {
                            outside = false;
                        }
                        if (shape == Shape.NO_CORNERS && Shape.CORNERS[dir] > 0) {
                            outside = false;
                        }
                        if (outside) {
                            out.add(new BcRegion(box, normal, lo(di), lo(dj), lo(dk), len(di), len(dj), len(dk)));
                        }
                    }
                }
            }
        }
        return out;
    }

    private int lo(int d) {
        return d < 0 ? -ghosts : d == 0 ? 0 : boxDim;
    }

    private int len(int d) {
        return d == 0 ? boxDim : ghosts;
    }

    /** The cells of a neighbor that fill this box's ghost region in direction d: the neighbor's coordinates. */
    private int src(int d) {
        return d < 0 ? boxDim - ghosts : 0;
    }

    private CommPlan exchangePlan(Shape shape) {
        CommPlan.Builder b = new CommPlan.Builder("exchange " + shape + " level " + index);
        // Receives and local copies: walk my boxes (receivers) in global order, directions in dk, dj, di order.
        for (int box = 0; box < boxes.length; box++) {
            Box bx = boxes[box];
            int bi = bx.lowI / boxDim, bj = bx.lowJ / boxDim, bk = bx.lowK / boxDim;
            for (int dk = -1; dk <= 1; dk++) {
                for (int dj = -1; dj <= 1; dj++) {
                    for (int di = -1; di <= 1; di++) {
                        int dir = 13 + di + 3 * dj + 9 * dk;
                        int nb = boxId(bi + di, bj + dj, bk + dk);
                        if (!shape.communicates(dir) || nb < 0) {
                            continue;
                        }
                        int owner = rankOfBox[nb];
                        int wi = lo(di), wj = lo(dj), wk = lo(dk);
                        int ri = src(di), rj = src(dj), rk = src(dk);
                        int ni = len(di), nj = len(dj), nk = len(dk);
                        int me = box;
                        if (owner == rank) {
                            b.local(new Block(ni, nj, nk, localOfBox[nb], null, ri, rj, rk, me, null, wi, wj, wk));
                        } else {
                            b.recv(owner, ni * nj * nk,
                                    (buf, off) -> new Block(ni, nj, nk, -1, buf, off, 0, 0, me, null, wi, wj, wk));
                        }
                    }
                }
            }
        }
        // Sends: the same walk over every receiving box of another rank whose neighbor is mine, in global order.
        for (int rb = 0; rb < rankOfBox.length; rb++) {
            int owner = rankOfBox[rb];
            if (owner == rank || owner < 0) {
                continue;
            }
            int bi = rb % boxesIn, bj = (rb / boxesIn) % boxesIn, bk = rb / (boxesIn * boxesIn);
            for (int dk = -1; dk <= 1; dk++) {
                for (int dj = -1; dj <= 1; dj++) {
                    for (int di = -1; di <= 1; di++) {
                        int dir = 13 + di + 3 * dj + 9 * dk;
                        int nb = boxId(bi + di, bj + dj, bk + dk);
                        if (!shape.communicates(dir) || nb < 0 || rankOfBox[nb] != rank) {
                            continue;
                        }
                        int ri = src(di), rj = src(dj), rk = src(dk);
                        int ni = len(di), nj = len(dj), nk = len(dk);
                        int from = localOfBox[nb];
                        b.send(owner, ni * nj * nk,
                                (buf, off) -> new Block(ni, nj, nk, from, null, ri, rj, rk, -1, buf, off, 0, 0));
                    }
                }
            }
        }
        return b.build();
    }
}
