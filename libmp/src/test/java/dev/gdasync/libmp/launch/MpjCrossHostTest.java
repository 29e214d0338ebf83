package dev.gdasync.libmp.launch;

import dev.gdasync.libmp.mpj.GdasyncDevice;
import dev.gdasync.libmp.mpj.MpjConformanceMain;
import dev.gdasync.libmp.mpj.MpjOverGdasyncTest;
import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.testutil.MpRunProcess;
import dev.gdasync.libmp.testutil.MpjPrograms;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * An MPJ Express program over gdasync between "hosts" ({@code mprun --netns 2 --mpj}): 4 ranks, 0 and 2 on host 0, 1
 * and 3 on host 1, so one job's messages go over UCX (between the hosts) and shared memory (within each). Needs root,
 * {@code ip netns}, UCX and MPJ Express; skipped with a printed reason elsewhere.
 */
@Timeout(240)
class MpjCrossHostTest {

    @Test
    void conformanceCasesOnFourRanksOverTwoHosts() {
        Map<String, String> env = twoHostsOrSkip();
        runOnFourRanksOverTwoHosts(env, List.of(), List.of("ring", "large", "wildcards", "order", "probe", "ssend",
                "waitany", "collectives", "communicators", "objects", "rendezvous", "manylarge", "heldlarge", "blocking"));
    }

    /** Runs conformance cases on 4 ranks over 2 hosts with these settings, and fails naming every case that failed. */
    private static void runOnFourRanksOverTwoHosts(Map<String, String> env, List<String> settings, List<String> cases) {
        List<String> args = new ArrayList<>();
        for (String d : settings) {
            args.addAll(List.of("--jvm-opt", d));
        }
        args.addAll(List.of("-np", "4", "--netns", "2", "--mpj", MpjConformanceMain.class.getName()));
        args.addAll(cases);
        try (ChildProcess mprun = MpRunProcess.start(env, args.toArray(String[]::new))) {
            int status = mprun.awaitExit(MpjOverGdasyncTest.WAIT);
            List<String> problems = MpjPrograms.conformanceProblems(mprun, 4, cases);
            assertTrue(problems.isEmpty(), settings + ":\n" + String.join("\n", problems) + "\n" + mprun.describe());
            assertEquals(0, status, mprun.describe());
        }
    }

    /**
     * The large-message cases over two hosts with a rendezvous area of 256 KiB that may grow by 1 MiB: a rank's large
     * buffers spill into extents of its area, which a peer of its host reads in place and a peer of the other host
     * cannot (no window covers them): those messages are copied into the area or go through the slots.
     */
    @Test
    void largeMessagesFromTheAreasExtentsReachRanksOnBothHosts() {
        Map<String, String> env = twoHostsOrSkip();
        runOnFourRanksOverTwoHosts(env, List.of("-D" + GdasyncDevice.RENDEZVOUS_BYTES_PROPERTY + "=1024",
                "-D" + GdasyncDevice.RENDEZVOUS_POOL_PROPERTY + "=262144",
                "-D" + GdasyncDevice.RENDEZVOUS_GROW_PROPERTY + "=1048576"),
                List.of("large", "order", "rendezvous", "manylarge", "heldlarge", "largetrunc"));
    }

    /**
     * Stream-triggered calls ({@code MpjOnStream}) in the same two-host job: a stream send to the other host is refused
     * with its message, a stream waits for a receive from the other host, and stream sends within a host arrive.
     */
    @Test
    void streamSendsWithinAHostAndStreamWaitsAcrossHosts() {
        Map<String, String> env = twoHostsOrSkip();
        List<String> cases = List.of("hosts");
        try (ChildProcess mprun = MpRunProcess.start(env, "-np", "4", "--netns", "2", "--mpj",
                dev.gdasync.libmp.mpj.MpjStreamMain.class.getName(), "hosts")) {
            int status = mprun.awaitExit(MpjOverGdasyncTest.WAIT);
            List<String> problems = MpjPrograms.conformanceProblems(mprun, 4, cases);
            assertTrue(problems.isEmpty(), String.join("\n", problems) + "\n" + mprun.describe());
            assertEquals(0, status, mprun.describe());
        }
    }

    /**
     * libmp's own calls beside MPJ's on the Mp that carries MPJ's messages, between hosts too: two-sided on the CPU and
     * on streams (a gated stream send holding MPJ's messages to that rank back), the collectives of coll, a global
     * array's messages and one-sided calls ({@code MpjBesideLibmpMain}, 4 ranks on 2 hosts).
     */
    @Test
    void libmpLayersRunBesideMpjAcrossHosts() {
        Map<String, String> env = twoHostsOrSkip();
        try (ChildProcess mprun = MpRunProcess.start(env, "-np", "4", "--netns", "2", "--mpj",
                dev.gdasync.libmp.mpj.MpjBesideLibmpMain.class.getName())) {
            assertEquals(0, mprun.awaitExit(Duration.ofMinutes(3)), mprun.describe());
            for (int rank = 0; rank < 4; rank++) {
                String p = "[" + rank + "] ";
                List<String> lines = mprun.stdout().stream().filter(l -> l.startsWith(p))
                        .map(l -> l.substring(p.length())).toList();
                assertEquals(List.of("LIBMP OK", "STREAM OK", "GATED OK", "GATED-READ OK", "COLL OK", "GA-MSG OK", "GA OK", "MPJ OK"),
                        lines, mprun.describe());
            }
        }
    }

    /**
     * @return MPJ's environment for the launcher; skips the test, printing why, where MPJ Express, network namespaces
     *         or UCX are missing
     */
    private static Map<String, String> twoHostsOrSkip() {
        Map<String, String> env = MpjPrograms.mpjEnvOrSkip("MpjCrossHostTest");
        NetnsLaunchTest.assumeNetns();
        java.util.Optional<String> noUcx = dev.gdasync.gdsync.ucx.UcxLibrary.unavailableReason();
        noUcx.ifPresent(r -> System.out.println("SKIPPED (UCX): " + r));
        assumeTrue(noUcx.isEmpty(), noUcx.orElse(""));
        return env;
    }
}
