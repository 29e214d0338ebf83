package dev.gdasync.libmp.coll;

import dev.gdasync.libmp.testutil.CollChecks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;

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
    @CsvSource({"2, 2, 1", "4, 2, 9000", "3, 2, 300005", "5, 3, 4099", "4, 2, 1048576"})
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
    void aSizeDisagreementAcrossHostsFailsBothRanks() throws Exception {
        CollRanks.runOffloadHosts(2, 2, shm, CollRanks::disagreeingBcast);
    }
}
