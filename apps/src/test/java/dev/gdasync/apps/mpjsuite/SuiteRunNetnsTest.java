package dev.gdasync.apps.mpjsuite;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code scripts/mpj-suite --netns K}'s checks, before any job starts ({@link SuiteRun#netns}). */
class SuiteRunNetnsTest {
    private static SuiteRun run(SuiteRun.Device device, int ranks) {
        return new SuiteRun(device, ranks, Duration.ofSeconds(1), Path.of("classes"), "mpj-home");
    }

    @Test
    void hostsFromOneToTheRanksAreTakenAndSaidInWords() {
        assertEquals("", run(SuiteRun.Device.GDASYNC, 4).whereInWords());
        assertEquals(" on 1 host (network namespaces)", run(SuiteRun.Device.GDASYNC, 4).netns(1).whereInWords());
        assertEquals(" on 4 hosts (network namespaces)", run(SuiteRun.Device.GDASYNC, 4).netns(4).whereInWords());
    }

    @Test
    void noHostsOrMoreHostsThanRanksAreRefusedSayingWhy() {
        String zero = assertThrows(IllegalArgumentException.class, () -> run(SuiteRun.Device.GDASYNC, 2).netns(0))
                .getMessage();
        assertEquals("--netns 0: K must be from 1 to the ranks (2)", zero);
        String three = assertThrows(IllegalArgumentException.class, () -> run(SuiteRun.Device.GDASYNC, 2).netns(3))
                .getMessage();
        assertEquals("--netns 3: K must be from 1 to the ranks (2), or hosts would have no rank", three);
    }

    @Test
    void mpjsMulticoreDeviceRefusesHosts() {
        String why = assertThrows(IllegalArgumentException.class, () -> run(SuiteRun.Device.MULTICORE, 2).netns(2))
                .getMessage();
        assertTrue(why.contains("one JVM"), why);
    }
}
