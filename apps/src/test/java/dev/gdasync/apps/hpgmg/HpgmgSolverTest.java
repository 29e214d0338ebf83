package dev.gdasync.apps.hpgmg;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The solver on one rank, in-process, against upstream's printed norm; and the problem-size rules. */
class HpgmgSolverTest {
    /** Upstream hpgmg-fv 4 8, one process (the reference CSV's HU row). */
    static final double UPSTREAM_32 = 8.412949740641551e-04;

    /** One rank, no messages: every plan is local. */
    static final class Serial implements Transport {
        public String mode() { return "serial"; }
        public int rank() { return 0; }
        public int size() { return 1; }
        public void compute(Runnable work) { work.run(); }
        public void run(CommPlan plan, Kernel pack, Kernel local, Kernel unpack) { Transport.runLocal(plan, local); }
        public void runNow(CommPlan plan, Kernel pack, Kernel local, Kernel unpack) { Transport.runLocal(plan, local); }
        public void sync() { }
        public void barrier() { }
        public void close() { }
    }

    @Test
    void fCycleOn32CubedGivesUpstreamsNorm() {
        MultiGrid mg = new MultiGrid(new Serial(), new HostOperators(), null);
        ProblemSize size = ProblemSize.of(4, 8, 1);
        mg.build(size.boxesIn(), size.boxDim());
        double[] norm = mg.fmgSolve(0, Level.VECTOR_U, Level.VECTOR_F);
        assertEquals(UPSTREAM_32, norm[0], 1e-9 * UPSTREAM_32);
        // a second solve from zero gives the same bits
        mg.t.compute(() -> mg.ops.zero(mg.levels.getFirst(), Level.VECTOR_U));
        assertEquals(norm[0], mg.fmgSolve(0, Level.VECTOR_U, Level.VECTOR_F)[0]);
    }

    @Test
    void problemSizeAsUpstream() {
        assertEquals(2, ProblemSize.of(4, 8, 1).boxesIn());
        assertEquals(2, ProblemSize.of(4, 8, 2).boxesIn());
        assertEquals(3, ProblemSize.of(4, 7, 4).boxesIn());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ProblemSize.of(4, 1, 9));
        assertTrue(e.getMessage().contains("more ranks (9) than boxes (8"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ProblemSize.of(3, 8, 1));
    }

    @Test
    void boxSizeNotAPowerOfTwoIsRefused() {
        HpgmgCommand c = new HpgmgCommand();
        c.log2Box = 24;
        c.boxesPerRank = 8;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, c::check);
        assertTrue(e.getMessage().contains("not a power of two"), e.getMessage());
    }
}
