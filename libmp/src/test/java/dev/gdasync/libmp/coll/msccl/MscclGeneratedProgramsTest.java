package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.CollectiveException;
import dev.gdasync.libmp.coll.Communicator;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The test generator's programs run exactly (multi-channel ring, scratch buffer with nop chains, hierarchical),
 * programs outside their size range fall back and are still right, other operators and types run through the same
 * program, and a dependency cycle ends in a timeout error naming rank, thread block and step.
 */
class MscclGeneratedProgramsTest {
    @TempDir
    Path shm;
    @TempDir
    Path dir;

    @Test
    void generatedProgramsGiveTheExactSumAndFallBackOutsideTheirRange() throws Exception {
        MscclPrograms programs = MscclPrograms.load(List.of(
                IrGenerator.write(dir, "a.xml", IrGenerator.ringAllreduce(4, 2, " maxBytes=\"4096\"")),
                IrGenerator.write(dir, "b.xml", IrGenerator.hierarchicalAllreduce()),
                IrGenerator.write(dir, "c.xml", IrGenerator.scratchAllreduce(4))), MscclLimits.defaults());
        // Ring (2 channels, 8 chunks) up to 4 KiB; hierarchical (2 chunks) above when even; scratch (1 chunk) else.
        MscclRanks.run(4, shm, programs, MscclConfig.defaults().withSlotBytes(64), (coll, rt) -> {
            Mp mp = coll.mp();
            Communicator comm = coll.world();
            MemorySegment a = mp.allocate(8 * 5000);
            MpRegistration ar = mp.register(a);
            long[][] cases = {{800, 'a'}, {1024, 'b'}, {1001, 'c'}, {3, 'c'}};
            for (long[] c : cases) {
                long count = c[0];
                for (long i = 0; i < count; i++) {
                    a.setAtIndex(ValueLayout.JAVA_INT, i, comm.rank() * 1000 + (int) i);
                }
                Optional<MscclProgram> ran = rt.allreduce(comm, a, ar, a, ar, count, DataType.INT32, ReduceOp.SUM);
                String want = switch ((char) c[1]) {
                    case 'a' -> "ring_allreduce_2ch";
                    case 'b' -> "hierarchical_allreduce_2x2";
                    default -> "scratch_allreduce";
                };
                assertEquals(want, ran.map(MscclProgram::name).orElse("built-in"), "count " + count);
                for (long i = 0; i < count; i++) {
                    assertEquals(6000 + 4 * (int) i, a.getAtIndex(ValueLayout.JAVA_INT, i), "count " + count + " element " + i);
                }
            }
            // Out of place: no out-of-place program is loaded, so the built-in runs.
            MemorySegment b = mp.allocate(8 * 64);
            MpRegistration br = mp.register(b);
            for (long i = 0; i < 64; i++) {
                a.setAtIndex(ValueLayout.JAVA_LONG, i, comm.rank() + 2 * i);
            }
            assertTrue(rt.allreduce(comm, a, ar, b, br, 64, DataType.INT64, ReduceOp.MAX).isEmpty());
            for (long i = 0; i < 64; i++) {
                assertEquals(3 + 2 * i, b.getAtIndex(ValueLayout.JAVA_LONG, i));
            }
            // Another operator and type through a program: MIN of 400 doubles (3200 B, in the ring's range), exact.
            for (long i = 0; i < 400; i++) {
                a.setAtIndex(ValueLayout.JAVA_DOUBLE, i, (comm.rank() + 1) * 0.5 + i);
            }
            assertEquals("ring_allreduce_2ch", rt.allreduce(comm, a, ar, a, ar, 400, DataType.FLOAT64, ReduceOp.MIN)
                    .orElseThrow().name());
            for (long i = 0; i < 400; i++) {
                assertEquals(0.5 + i, a.getAtIndex(ValueLayout.JAVA_DOUBLE, i));
            }
        });
    }

    /**
     * On the caller's thread the interpreter sees at once that every block waits for another one of the rank; with a
     * thread per block it cannot tell, and the run times out. Both name every block's step.
     */
    @ParameterizedTest(name = "threads {0}")
    @ValueSource(booleans = {false, true})
    void aDependencyCycleFailsNamingRankThreadBlockAndStep(boolean threads) throws Exception {
        MscclPrograms programs = MscclPrograms.load(List.of(IrGenerator.write(dir, "cycle.xml", IrGenerator.cycle(2))),
                MscclLimits.defaults());
        MscclConfig config = MscclConfig.defaults().withTimeout(Duration.ofMillis(500)).withThreads(threads);
        MscclRanks.run(2, shm, programs, config, (coll, rt) -> {
            Mp mp = coll.mp();
            MemorySegment a = mp.allocate(64);
            MpRegistration ar = mp.register(a);
            Communicator comm = coll.world();
            CollectiveException e = assertThrows(CollectiveException.class,
                    () -> rt.allreduce(comm, a, ar, a, ar, 4, DataType.INT32, ReduceOp.SUM));
            String m = e.getMessage();
            assertTrue(m.startsWith("rank " + comm.rank() + " of communicator 0"), m);
            assertTrue(m.contains("MSCCL program 'cycle'"), m);
            assertTrue(threads ? m.contains("did not finish within PT0.5S")
                    : m.contains("a dependency cycle: every thread block that has not finished waits for another"), m);
            assertTrue(m.contains("tb 0 step 0 (nop, tile 0 of 1) waits for tb 1 step 0 (its semaphore to reach 1)"), m);
            assertTrue(m.contains("tb 1 step 0 (nop, tile 0 of 1) waits for tb 0 step 0"), m);
            IllegalStateException again = assertThrows(IllegalStateException.class,
                    () -> rt.allreduce(comm, a, ar, a, ar, 4, DataType.INT32, ReduceOp.SUM));
            assertTrue(again.getMessage().startsWith("an earlier run failed"), again.getMessage());
        });
    }
}
