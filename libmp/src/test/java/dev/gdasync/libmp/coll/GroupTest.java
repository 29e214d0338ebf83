package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.testutil.CollChecks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Groups: a ring broadcast posted with one call per rank, on both engines; bad groups are refused. */
class GroupTest {
    @TempDir
    Path shm;

    @ParameterizedTest(name = "{0} ranks, {1} bytes, offload {2}")
    @CsvSource({"2, 100, false", "5, 100, false", "4, 1048579, false", "2, 100, true", "5, 100, true",
                "8, 20000, true", "4, 1048579, true"})
    void ringBroadcastAsOneGroup(int n, long bytes, boolean offload) throws Exception {
        CollRanks.Body body = coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            int me = world.rank();
            CollChecks.ringBroadcast(mp, world, bytes, offload);
            // Point-to-point as one-message groups: every rank sends its rank to the next and receives the previous.
            MemorySegment out = mp.allocate(8);
            MemorySegment in = mp.allocate(8);
            MpRegistration or = mp.register(out);
            MpRegistration ir = mp.register(in);
            out.set(ValueLayout.JAVA_LONG, 0, 1000 + me);
            Group p = world.groupStart();
            p.recv(in, ir, (me + n - 1) % n);
            p.send(out, or, (me + 1) % n);
            p.groupEnd();
            world.wait(p.groupCall());
            assertEquals(1000 + (me + n - 1) % n, in.get(ValueLayout.JAVA_LONG, 0));
        };
        if (offload) {
            CollRanks.runOffload(n, shm, body);
        } else {
            CollRanks.run(n, shm, body);
        }
    }

    @Test
    void sendOffloadAndRecvOffloadPairUp() throws Exception {
        CollRanks.runOffload(2, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            MemorySegment buf = mp.allocate(50_000);
            MpRegistration reg = mp.register(buf);
            if (world.rank() == 0) {
                buf.fill((byte) 9);
                world.wait(world.sendOffload(buf, reg, 1));
            } else {
                world.wait(world.recvOffload(buf, reg, 0));
                for (long i = 0; i < buf.byteSize(); i++) {
                    assertEquals((byte) 9, buf.get(ValueLayout.JAVA_BYTE, i));
                }
            }
        });
    }

    @Test
    void badGroupsAreRefused() throws Exception {
        CollRanks.run(2, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            MemorySegment buf = mp.allocate(16);
            MpRegistration reg = mp.register(buf);
            MemorySegment loose = mp.allocate(16);
            int me = world.rank();
            Group g = world.groupStart();
            assertTrue(assertThrows(IllegalArgumentException.class, () -> g.send(buf, reg, me)).getMessage()
                    .contains("is this rank"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> g.recv(buf, reg, 2)).getMessage()
                    .contains("peer 2 is outside communicator 0"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> g.recv(loose, reg, 1 - me)).getMessage()
                    .contains("is not inside reg"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> g.send(buf, reg, 1 - me, 0)).getMessage()
                    .contains("afterRecv 0 is not a receive of this group"));
            assertEquals(0, g.size(), "refused steps were not added");
            assertTrue(assertThrows(IllegalStateException.class, g::groupCall).getMessage().contains("groupEnd()"));
            g.groupEnd();
            assertThrows(IllegalStateException.class, () -> g.send(buf, reg, 1 - me));
            world.wait(g.groupCall());
            assertThrows(IllegalStateException.class, g::groupCall);
            assertEquals(0, coll.active());
        });
    }
}
