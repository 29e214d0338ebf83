package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

import static dev.gdasync.libmp.coll.CollRanks.pattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Communicators: split, rank translation, errors for ranks outside, and traffic kept apart by context. */
class CommunicatorTest {
    @TempDir
    Path shm;

    @Test
    void splitByColourOrdersByKeyAndTranslatesRanks() throws Exception {
        CollRanks.run(6, shm, coll -> {
            Communicator world = coll.world();
            int me = world.rank();
            assertEquals(6, world.size());
            assertEquals(0, world.context());
            // Odd and even ranks, ordered by descending world rank; rank 5 joins none.
            Communicator half = world.split(me == 5 ? Communicator.UNDEFINED : me % 2, -me).orElse(null);
            if (me == 5) {
                assertEquals(null, half);
                return;
            }
            int[] expected = me % 2 == 0 ? new int[] {4, 2, 0} : new int[] {3, 1};
            assertEquals(expected.length, half.size());
            int[] got = new int[half.size()];
            for (int r = 0; r < got.length; r++) {
                got[r] = half.worldRank(r);
            }
            assertArrayEquals(expected, got);
            assertEquals(me, half.worldRank(half.rank()));
            assertEquals(half.rank(), half.rankOf(me));
            assertNotEquals(0, half.context());
            assertFalse(half.contains(me % 2 == 0 ? 1 : 0));
            IllegalArgumentException outside = assertThrows(IllegalArgumentException.class, () -> half.rankOf(5));
            assertTrue(outside.getMessage().startsWith("world rank 5 is not a member of communicator "), outside.getMessage());
            IllegalArgumentException tooHigh = assertThrows(IllegalArgumentException.class, () -> half.worldRank(half.size()));
            assertTrue(tooHigh.getMessage().contains("commRank " + half.size() + " is outside"), tooHigh.getMessage());
            MemorySegment buf = coll.mp().allocate(64);
            MpRegistration reg = coll.mp().register(buf);
            IllegalArgumentException root = assertThrows(IllegalArgumentException.class, () -> half.ibcast(buf, reg, 3));
            assertTrue(root.getMessage().startsWith("root 3 is outside communicator "), root.getMessage());
            assertEquals(0, coll.active(), "a refused call starts nothing");
            // A broadcast inside each half reaches exactly its members.
            buf.set(ValueLayout.JAVA_LONG, 0, half.rank() == 0 ? 1000 + me % 2 : -1);
            half.bcast(buf.asSlice(0, 8), reg, 0);
            assertEquals(1000 + me % 2, buf.get(ValueLayout.JAVA_LONG, 0));
        });
    }

    @Test
    void twoCommunicatorsPostedInOppositeOrdersDoNotMix() throws Exception {
        CollRanks.run(4, shm, coll -> {
            Communicator world = coll.world();
            Communicator dup = world.split(0, world.rank()).orElseThrow();
            assertNotEquals(world.context(), dup.context());
            Mp mp = coll.mp();
            int n = 4;
            long block = 1000;
            MemorySegment mem = mp.allocate(4 * n * block);
            MpRegistration reg = mp.register(mem);
            MemorySegment s1 = mem.asSlice(0, n * block);
            MemorySegment r1 = mem.asSlice(n * block, n * block);
            MemorySegment s2 = mem.asSlice(2 * n * block, n * block);
            MemorySegment r2 = mem.asSlice(3 * n * block, n * block);
            int me = world.rank();
            for (int j = 0; j < n; j++) {
                for (long i = 0; i < block; i++) {
                    s1.set(ValueLayout.JAVA_BYTE, j * block + i, pattern(me, j, i, 10));
                    s2.set(ValueLayout.JAVA_BYTE, j * block + i, pattern(me, j, i, 20));
                }
            }
            // Even ranks start world's alltoall first and wait on dup's; odd ranks the other way round, so
            // messages of one communicator arrive before this rank posted it (the unexpected queue).
            CollRequest a;
            CollRequest b;
            if (me % 2 == 0) {
                a = world.ialltoall(s1, reg, r1, reg, block);
                b = dup.ialltoall(s2, reg, r2, reg, block);
                dup.wait(b);
                world.wait(a);
            } else {
                b = dup.ialltoall(s2, reg, r2, reg, block);
                dup.wait(b);
                a = world.ialltoall(s1, reg, r1, reg, block);
                world.wait(a);
            }
            for (int j = 0; j < n; j++) {
                for (long i = 0; i < block; i++) {
                    assertEquals(pattern(j, me, i, 10), r1.get(ValueLayout.JAVA_BYTE, j * block + i), "world from " + j);
                    assertEquals(pattern(j, me, i, 20), r2.get(ValueLayout.JAVA_BYTE, j * block + i), "dup from " + j);
                }
            }
            IllegalStateException again = assertThrows(IllegalStateException.class, () -> world.test(a));
            assertTrue(again.getMessage().endsWith("was already completed and released"), again.getMessage());
            IllegalArgumentException other = assertThrows(IllegalArgumentException.class, () -> world.wait(b));
            assertTrue(other.getMessage().contains("belongs to communicator " + dup.context()), other.getMessage());
        });
    }
}
