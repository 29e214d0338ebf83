package dev.gdasync.apps.pingpong;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The C peers' outputs as the ping-pong reads them, and their command lines. */
class CPeerOutputTest {
    @Test
    void tripsOutputGivesTheTotalAndEveryRoundTrip() {
        CPeer.CPeerRun run = TripsOutput.parse("floor", "total_ns 600\ntrips 3\n100\n200\n300\n", 3);
        assertEquals(600, run.totalNanos());
        assertArrayEquals(new long[]{100, 200, 300}, run.tripNanos());
        assertTrue(Double.isNaN(run.p50OneWayMicros()));
    }

    @Test
    void tripsOutputWithTooFewTripsOrGarbageIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TripsOutput.parse("ompi", "total_ns 600\ntrips 3\n100\n200\n", 3));
        assertTrue(e.getMessage().contains("ompi printed 4 lines"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TripsOutput.parse("ompi", "total_ns 600\ntrips 2\n100\nx\n", 2));
        assertTrue(e.getMessage().contains("'x'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TripsOutput.parse("ompi", "total_ns 600\ntrips 1\n-5\n", 1));
        assertTrue(e.getMessage().contains("'-5'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> TripsOutput.parse("floor", "", 1));
    }

    @Test
    void ucxPerftestCsvGivesTheMedianAndTheOverallTime() {
        UcxPeer peer = new UcxPeer("/usr/bin/ucx_perftest", new int[]{0, 1}, 13400);
        String out = "+---- header ----+\niterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr\n"
                + "1000,0.106,0.141,0.150,54.01,54.01,7078875,7078875\n";
        CPeer.CPeerRun run = peer.parse(out, 1000);
        assertEquals(0.106, run.p50OneWayMicros(), 1e-9);
        assertEquals(300_000, run.totalNanos()); // 0.150 us one way x 2 x 1000 round trips
        assertEquals(0, run.tripNanos().length);
        assertThrows(IllegalArgumentException.class, () -> peer.parse(out, 999)); // not the iterations asked for
        assertThrows(IllegalArgumentException.class, () -> peer.parse("Error: connection refused\n", 1000));
    }

    @Test
    void ucxPerftestBandwidthGivesTheOverallRateAndIsTheSameCommandWithTagBw() {
        String out = "iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr\n"
                + "[thread 0]95682,0.112,41.606,72.916,1.47,0.84,24035,13714\n"
                + "100000,0.126,88.870,73.605,0.69,0.83,11252,13586\n";
        double[] bw = UcxPeer.parseBandwidth(out, 100000);
        assertEquals(0.83, bw[0], 1e-9);
        assertEquals(13586, bw[1], 1e-9);
        assertThrows(IllegalArgumentException.class, () -> UcxPeer.parseBandwidth(out, 5));
        assertThrows(IllegalArgumentException.class, () -> UcxPeer.parseBandwidth("1,2,3\n", 1));
        UcxPeer ucx = new UcxPeer("ucx_perftest", new int[]{0, 1}, 13400);
        List<String> client = ucx.bandwidthCommands(64, 500).get(1);
        assertTrue(client.contains("tag_bw") && !client.contains("tag_lat"), client.toString());
        assertEquals(ucx.commands(64, 500).get(0), ucx.bandwidthCommands(64, 500).get(0), "the server is the same");
    }

    @Test
    void peersPinBothSidesOrNeither() {
        UcxPeer ucx = new UcxPeer("ucx_perftest", new int[]{0, 1}, 13400);
        List<List<String>> cmds = ucx.commands(64, 500);
        assertEquals(List.of("ucx_perftest", "-p", "13400", "-c", "1"), cmds.get(0));
        assertTrue(cmds.get(1).containsAll(List.of("-t", "tag_lat", "-s", "64", "-n", "500", "-c", "0")), cmds.get(1).toString());
        assertEquals("posix,self", ucx.environment().get("UCX_TLS"));
        List<String> unpinned = new UcxPeer("ucx_perftest", new int[]{-1, -1}, 13400).commands(8, 10).get(1);
        assertTrue(!unpinned.contains("-c"), unpinned.toString());
        List<String> ompi = new OmpiPeer("/tmp/ompi", "mpirun", new int[]{1, 0}, "Open MPI 4.1.4").commands(8, 100).getFirst();
        assertEquals(List.of("/tmp/ompi", "8", "100", "1000", "1", "0"), ompi.subList(ompi.size() - 6, ompi.size()));
        assertTrue(ompi.containsAll(List.of("pml", "ob1", "btl", "self,vader")), ompi.toString());
        List<String> floor = new FloorPeer("/tmp/floor", new int[]{0, 1}).commands(256, 200_000).getFirst();
        assertEquals(List.of("/tmp/floor", "256", "200000", "100000", "0", "1"), floor);
    }
}
