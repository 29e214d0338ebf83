package dev.gdasync.apps.comd;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Atoms crossing rank boundaries in every direction, and one rank against several: the lattice drifts as a whole
 * along a diagonal (so atoms leave every rank through faces, edges and corners) on 2 x 2 x 2 ranks, and the energies
 * must equal the one-rank run of the same drift; EAM's dfEmbed exchange too; every model gives the same bits.
 */
class ComdDecompositionTest {
    @TempDir
    Path shm;

    /** Gives every atom the same extra velocity, and counts the atoms that end on another rank than they started. */
    private static final class Drift implements ComdRun.Hooks {
        final double[] v;
        final Set<Integer>[] start;
        final AtomicLong moved = new AtomicLong();
        final AtomicLong outside = new AtomicLong();

        @SuppressWarnings("unchecked")
        Drift(int ranks, double... v) {
            this.v = v;
            this.start = new Set[ranks];
        }

        @Override
        public void afterSetup(Simulation sim, Collectives coll) {
            sim.setVcm(v, coll);
            start[coll.rank()] = localIds(sim);
        }

        @Override
        public void atEnd(Simulation sim) {
            Set<Integer> end = localIds(sim);
            int rank = sim.domain.processorNum(0, 0, 0);
            long m = end.stream().filter(id -> !start[rank].contains(id)).count();
            moved.addAndGet(m);
            // Every local atom lies inside this rank's brick.
            for (int b = 0; b < sim.boxes.nLocalBoxes; b++) {
                for (int i = 0; i < sim.boxes.nAtoms[b]; i++) {
                    int off = b * LinkCells.MAXATOMS + i;
                    for (int a = 0; a < 3; a++) {
                        double x = sim.atoms.r[3 * off + a];
                        if (x < sim.domain.localMin[a] || x >= sim.domain.localMax[a]) {
                            outside.incrementAndGet();
                        }
                    }
                }
            }
        }

        private static Set<Integer> localIds(Simulation sim) {
            Set<Integer> ids = new HashSet<>();
            for (int b = 0; b < sim.boxes.nLocalBoxes; b++) {
                for (int i = 0; i < sim.boxes.nAtoms[b]; i++) {
                    ids.add(sim.atoms.gid[b * LinkCells.MAXATOMS + i]);
                }
            }
            return ids;
        }
    }

    private static void assertSameEnergies(RunResult expected, RunResult got, double tolerance, String what) {
        assertEquals(expected.energies().size(), got.energies().size(), what);
        for (int i = 0; i < expected.energies().size(); i++) {
            RunResult.EnergyLine e = expected.energies().get(i);
            RunResult.EnergyLine g = got.energies().get(i);
            assertEquals(e.total(), g.total(), tolerance, what + ", total energy at step " + e.step());
            assertEquals(e.potential(), g.potential(), tolerance, what + ", potential energy at step " + e.step());
            assertEquals(e.kinetic(), g.kinetic(), tolerance, what + ", kinetic energy at step " + e.step());
            assertEquals(e.atoms(), g.atoms(), what + ", atoms at step " + e.step());
        }
    }

    @Test
    void atomsCrossRankBoundariesInEveryDirectionAndAgreeWithOneRank() throws Exception {
        // 0.08 A/fs along a diagonal for 60 steps: 4.8 A per axis, most of a link cell (7.2 A): atoms leave each of the
        // 2 x 2 x 2 bricks (14.5 A) through its faces, edges and corners, and the periodic box wraps them around.
        for (double sign : new double[]{+1, -1}) {
            double[] v = {sign * 0.08, sign * 0.07, sign * 0.06};
            String line = "-x 8 -y 8 -z 8 -N 60 -n 10 -T 300";
            Drift one = new Drift(1, v);
            RunResult serial = ComdRanks.run(shm, ComdRanks.options(ComdRanks.with(line, "-i", "1")), Mode.HOST, one);
            Drift eight = new Drift(8, v);
            RunResult split = ComdRanks.run(shm, ComdRanks.options(ComdRanks.with(line, "-i", "2", "-j", "2", "-k", "2")),
                    Mode.HOST, eight);
            String what = "drift " + (sign > 0 ? "+" : "-") + " on 2 x 2 x 2 ranks against 1";
            assertSameEnergies(serial, split, 1e-9, what);
            assertEquals(split.atoms0(), split.atomsFinal(), what + ": atoms lost");
            assertTrue(eight.moved.get() > 500, what + ": only " + eight.moved.get() + " of 2048 atoms changed ranks");
            assertEquals(0, eight.outside.get(), what + ": atoms outside their rank's brick");
        }
    }

    @Test
    void everyModeGivesTheSameBitsWithTheEamForceExchange() throws Exception {
        ComdOptions o = ComdRanks.options("-e -x 8 -y 8 -z 8 -N 20 -n 5 -T 1200 -r 0.05 -i 2");
        RunResult host = ComdRanks.run(shm, o, Mode.HOST, ComdRun.Hooks.NONE);
        for (Mode m : List.of(Mode.SA, Mode.KI)) {
            RunResult r = ComdRanks.run(shm, o, m, ComdRun.Hooks.NONE);
            assertEquals(host.energies(), r.energies(), m.label() + " against host");
            assertEquals(host.eFinal(), r.eFinal(), 0.0, m.label() + " against host");
        }
        RunResult serial = ComdRanks.run(shm, ComdRanks.options("-e -x 8 -y 8 -z 8 -N 20 -n 5 -T 1200 -r 0.05 -i 1"), Mode.HOST,
                ComdRun.Hooks.NONE);
        assertSameEnergies(serial, host, 1e-9, "EAM on 2 ranks against 1");
    }

    @Test
    void ranksAlongEachAxisAgreeWithOneRank() throws Exception {
        String line = "-x 8 -y 8 -z 8 -N 20 -n 10 -T 900 -r 0.05";
        RunResult serial = ComdRanks.run(shm, ComdRanks.options(ComdRanks.with(line)), Mode.HOST, ComdRun.Hooks.NONE);
        ConcurrentHashMap<String, RunResult> runs = new ConcurrentHashMap<>();
        for (String d : List.of("-j 2", "-k 2", "-i 2 -k 2")) {
            RunResult r = ComdRanks.run(shm, ComdRanks.options(ComdRanks.with(line + " " + d)), Mode.SA, ComdRun.Hooks.NONE);
            runs.put(d, r);
            assertSameEnergies(serial, r, 1e-9, d + " in sa against 1 rank");
        }
    }
}
