package dev.gdasync.apps.pingpong;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoadSampleTest {
    private static List<String> stat(long user, long system, long idle, long steal) {
        return List.of(
                "cpu  " + user + " 0 " + system + " " + idle + " 5 1 2 " + steal + " 0 0",
                "cpu0 1 0 1 1 0 0 0 0 0 0",
                "cpu1 1 0 1 1 0 0 0 0 0 0",
                "intr 12345",
                "procs_running 3");
    }

    @Test
    void readsTheCpuLineOfProcStat() {
        LoadSample s = LoadSample.of(stat(100, 50, 800, 10), 30, 1.5);
        assertEquals(2, s.cpus());
        assertEquals(100 + 50 + 1 + 2, s.busy());
        assertEquals(100 + 50 + 800 + 5 + 1 + 2 + 10, s.total());
        assertEquals(10, s.steal());
        assertEquals(30, s.own());
        assertThrows(IllegalArgumentException.class, () -> LoadSample.of(List.of("intr 1"), 0, 0));
    }

    @Test
    void readsAProcessesTimesAfterItsName() {
        // the name may hold spaces and parentheses; utime and stime are fields 14 and 15, the reaped children's 16, 17
        String pidStat = "4242 (java (rank) 0) S 1 4242 4242 0 -1 4194560 100 0 0 0 700 300 0 0 20 0 30 0 1 2 3";
        assertEquals(1000, LoadSample.processTicks(pidStat));
        String withChildren = "4242 (java) S 1 4242 4242 0 -1 4194560 100 0 0 0 700 300 40 2 20 0 30 0 1 2 3";
        assertEquals(1042, LoadSample.processTicks(withChildren));
        assertEquals(0.73, LoadSample.loadAverage("0.73 1.58 2.92 1/87 1650\n"));
    }

    @Test
    void otherProcessesAreTheBusyTimeTheJobDidNotUse() {
        // 2 CPUs, 1000 ticks of CPU time in all: 900 busy, of which the job used 700; 20 stolen
        LoadSample before = new LoadSample(10_000, 4_000, 100, 1_000, 1.0, 2);
        LoadSample after = new LoadSample(11_000, 4_900, 120, 1_700, 2.5, 2);
        LoadSeen seen = LoadSeen.between(before, after);
        assertEquals(0.4, seen.othersCpus(), 1e-9); // 200 of 1000 ticks on 2 CPUs
        assertEquals(2.0, seen.stealPercent(), 1e-9);
        assertEquals(2.5, seen.loadAverage());
        assertFalse(LoadSeen.between(LoadSample.UNKNOWN, after).isKnown());
    }

    @Test
    void aQuietRunHasNoNoise() {
        LoadSeen quiet = new LoadSeen(0.1, 0.5, 2.0, 2);
        assertTrue(quiet.noise(new RunSpread(5, 0.30, 0.33, 10)).isEmpty());
        assertEquals(List.of("its runs spread 40 % (0.300 to 0.420 us)"), quiet.noise(new RunSpread(5, 0.30, 0.42, 40)));
        assertTrue(LoadSeen.UNKNOWN.noise(new RunSpread(5, 0.30, 0.33, 10)).isEmpty(), "unknown load is not noise");
    }
}
