package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.testutil.CollChecks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The offload engine with one proxy per host (rank r on host r % hosts): a transfer between hosts is matched by the
 * sender's proxy with the receive the receiver's proxy forwarded, and written by the sender's proxy into the remote
 * buffer. Every collective equals the reference byte for byte while the ranks compute without calling test.
 */
class OffloadAcrossHostsTest {
    @TempDir
    Path shm;

    @ParameterizedTest(name = "{0} ranks on {1} hosts, {2} bytes")
    @CsvSource({"2, 2, 1", "4, 2, 9000", "3, 2, 300005", "5, 3, 4099"})
    void collectivesAcrossHostsEqualTheReference(int n, int hosts, long bytes) throws Exception {
        CollRanks.runOffloadHosts(n, hosts, shm, coll -> {
            assertTrue(coll.offloaded());
            CollChecks.alltoallAllgatherBcast(coll.mp(), coll.world(), bytes, true);
        });
    }

    @Test
    void groupRingBroadcastAndUnevenAlltoallvAcrossHosts() throws Exception {
        CollRanks.runOffloadHosts(4, 2, shm, coll -> {
            CollChecks.ringBroadcast(coll.mp(), coll.world(), 70_000, true);
            CollChecks.unevenAlltoallv(coll.mp(), coll.world(), 200_000);
        });
    }

    @Test
    void aRankLeavingOnOneHostFailsThePendingCollectiveOnTheOther() throws Exception {
        CountDownLatch posted = new CountDownLatch(1);
        CollRanks.runOffloadHosts(2, 2, shm, coll -> {
            Communicator world = coll.world();
            Mp mp = coll.mp();
            if (world.rank() == 1) {
                posted.await();
                coll.close(); // its proxy tells the other host's proxy that rank 1 is gone
                return;
            }
            MemorySegment send = mp.allocate(2 * 20_000);
            MemorySegment recv = mp.allocate(2 * 20_000);
            CollRequest r = world.ialltoall(send, mp.register(send), recv, mp.register(recv), 20_000);
            posted.countDown();
            String why = assertThrows(CollectiveException.class, () -> world.wait(r)).getMessage();
            assertTrue(why.contains("ialltoall #0 on communicator 0") && why.contains("rank 1 closed its collectives"), why);
        });
    }

    @Test
    void aSizeDisagreementAcrossHostsFailsBothRanks() throws Exception {
        CollRanks.runOffloadHosts(2, 2, shm, CollRanks::disagreeingBcast);
    }
}
