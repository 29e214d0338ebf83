package dev.gdasync.apps.hpgmg;

/**
 * Reductions over the ranks active on a level (upstream's sub-communicator): a gather to the lowest of them
 * and a broadcast back, as messages of the running model. Dot products sum upstream's tile partials in
 * global box order, so a sum has the same bits on any number of ranks (and matches the serial C code's
 * order); the max norm needs no order.
 */
final class Reduction {
    private final Level level;
    private final Operators ops;
    private final int root;
    private final boolean alone;
    private final CommPlan gatherDot;
    private final CommPlan gatherMax;
    private final CommPlan bcast;
    private final double[] localPartials;
    private final double[][] gathered;
    private final double[] one = new double[1];

    Reduction(Level level, Operators ops) {
        this.level = level;
        this.ops = ops;
        int[] p = level.participants;
        this.root = p.length > 0 ? p[0] : 0;
        this.alone = p.length <= 1;
        this.localPartials = new double[level.boxes.length * level.tilesPerBox()];
        this.gathered = new double[level.rankOfBox.length == 0 ? 1 : maxRank(p) + 1][];
        CommPlan.Builder gd = new CommPlan.Builder("dot gather level " + level.index);
        CommPlan.Builder gm = new CommPlan.Builder("max gather level " + level.index);
        CommPlan.Builder bc = new CommPlan.Builder("broadcast level " + level.index);
        for (int r : p) {
            gathered[r] = new double[level.boxesOf(r) * level.tilesPerBox()];
            if (r == root) {
                continue;
            }
            int n = gathered[r].length;
            if (level.rank == root) {
                if (n > 0) {
                    gd.recv(r, n, (buf, off) -> new Block(n, 1, 1, -1, buf, off, 0, 0, r, null, 0, 0, 0));
                }
                gm.recv(r, 1, (buf, off) -> new Block(1, 1, 1, -1, buf, off, 0, 0, r, null, 0, 0, 0));
                bc.send(r, 1, (buf, off) -> new Block(1, 1, 1, -1, null, 0, 0, 0, -1, buf, off, 0, 0));
            } else if (level.rank == r) {
                if (n > 0) {
                    gd.send(root, n, (buf, off) -> new Block(n, 1, 1, -1, null, 0, 0, 0, -1, buf, off, 0, 0));
                }
                gm.send(root, 1, (buf, off) -> new Block(1, 1, 1, -1, null, 0, 0, 0, -1, buf, off, 0, 0));
                bc.recv(root, 1, (buf, off) -> new Block(1, 1, 1, -1, buf, off, 0, 0, -1, null, 0, 0, 0));
            }
        }
        this.gatherDot = gd.build();
        this.gatherMax = gm.build();
        this.bcast = bc.build();
    }

    private static int maxRank(int[] p) {
        int m = 0;
        for (int r : p) {
            m = Math.max(m, r);
        }
        return m;
    }

    /** dot(a, b) over the level (collective among its active ranks). */
    double dot(Transport t, int a, int b) {
        t.sync();
        ops.dotPartials(level, a, b, localPartials);
        if (alone) {
            return fold(new double[][]{localPartials}, true);
        }
        double start = LevelTimers.now();
        t.runNow(gatherDot, blk -> System.arraycopy(localPartials, 0, blk.writeBuf, blk.writeI, blk.dimI),
                blk -> { }, blk -> System.arraycopy(blk.readBuf, blk.readI, gathered[blk.writeBox], 0, blk.dimI));
        if (level.rank == root) {
            System.arraycopy(localPartials, 0, gathered[root], 0, localPartials.length);
            one[0] = fold(gathered, false);
        }
        t.runNow(bcast, blk -> blk.writeBuf[blk.writeI] = one[0], blk -> { }, blk -> one[0] = blk.readBuf[blk.readI]);
        level.timers.collectives += LevelTimers.now() - start;
        return one[0];
    }

    /** The max norm over the level (collective among its active ranks). */
    double norm(Transport t, int id) {
        t.sync();
        double mine = ops.normLocal(level, id);
        if (alone || !level.active) {
            return mine;
        }
        double start = LevelTimers.now();
        one[0] = mine;
        double[] max = {mine};
        t.runNow(gatherMax, blk -> blk.writeBuf[blk.writeI] = mine, blk -> { },
                blk -> max[0] = Math.max(max[0], blk.readBuf[blk.readI]));
        one[0] = max[0];
        t.runNow(bcast, blk -> blk.writeBuf[blk.writeI] = one[0], blk -> { }, blk -> one[0] = blk.readBuf[blk.readI]);
        level.timers.collectives += LevelTimers.now() - start;
        return one[0];
    }

    /** Sums the tile partials in global box order: upstream's serial order. */
    private double fold(double[][] byRank, boolean local) {
        int tiles = level.tilesPerBox();
        int[] next = new int[byRank.length];
        double sum = 0.0;
        for (int box = 0; box < level.rankOfBox.length; box++) {
            int owner = level.rankOfBox[box];
            int r = local ? 0 : owner;
            if (local && owner != level.rank) {
                continue;
            }
            double[] parts = byRank[r];
            for (int t = 0; t < tiles; t++) {
                sum += parts[next[r]++];
            }
        }
        return sum;
    }
}
