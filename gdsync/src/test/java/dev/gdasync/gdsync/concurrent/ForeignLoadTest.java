package dev.gdasync.gdsync.concurrent;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Other processes' CPU time on this process's CPUs, and what the CPU share makes of it. */
class ForeignLoadTest {
    private static final List<String> PROC_STAT = List.of(
            "cpu  300 0 60 1000 10 0 5 2 0 0",
            "cpu0 100 0 20 600 5 0 2 1 0 0",
            "cpu1 200 0 40 400 5 0 3 1 0 0",
            "intr 12345");

    @Test
    void theBusyTicksOfTheAllowedCpusAreUserNiceSystemIrqSoftirqAndSteal() {
        assertArrayEquals(new long[]{244, 649, 1}, ForeignLoad.cpuTicks(PROC_STAT, List.of(1)));
        assertArrayEquals(new long[]{123 + 244, 728 + 649, 2}, ForeignLoad.cpuTicks(PROC_STAT, List.of()));
        var e = assertThrows(IllegalArgumentException.class, () -> ForeignLoad.cpuTicks(PROC_STAT, List.of(7)));
        assertTrue(e.getMessage().contains("[7]"), e.getMessage());
    }

    @Test
    void aProcessTimeIsItsUserAndSystemTicksWhateverItsName() {
        String stat = "4242 (a (strange) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 17 5 3 2 20 0 1 0 1234 0 0";
        assertEquals(22, ForeignLoad.processTicks(stat));
    }

    @Test
    void halfACpuKeptBusyByOtherProcessesCountsAsOneMoreCompetitor() {
        List<CpuShareEntry> two = List.of(new CpuShareEntry(10, 1, List.of(new CpuShareEntry.Rank("a", 0),
                new CpuShareEntry.Rank("a", 1)), List.of(0, 1), List.of()));
        assertFalse(CpuShareDecision.decide(List.of(0, 1), two, "a", 0.3).oversubscribed());
        CpuShareDecision busy = CpuShareDecision.decide(List.of(0, 1), two, "a", 0.6);
        assertTrue(busy.oversubscribed());
        assertTrue(busy.describe().contains("other processes keeping 0.6 CPUs busy: oversubscribed"), busy.describe());
        List<CpuShareEntry> one = List.of(new CpuShareEntry(10, 1, List.of(new CpuShareEntry.Rank("a", 0)), List.of(0, 1),
                List.of()));
        assertFalse(CpuShareDecision.decide(List.of(0, 1), one, "a", 1.4).oversubscribed(), "1 rank and 1 CPU's worth");
        assertTrue(CpuShareDecision.decide(List.of(0, 1), one, "a", 1.6).oversubscribed(), "1 rank and 2 CPUs' worth");
        assertEquals(0, CpuShareDecision.decide(List.of(0, 1), one, "a").othersBusy());
    }

    @Test
    void aBusyLoopInAnotherProcessIsSeen() throws Exception {
        boolean linux = Files.isReadable(Path.of("/proc/stat"));
        if (!linux) {
            System.out.println("ForeignLoadTest: skipping the live check: no /proc/stat here");
        }
        Assumptions.assumeTrue(linux, "no /proc/stat");
        ForeignLoad load = new ForeignLoad(List.of());
        Process spinner = new ProcessBuilder("sh", "-c", "while :; do :; done").start();
        try {
            double seen = 0;
            for (int i = 0; i < 15; i++) {
                seen = load.sample(List.of(ProcessHandle.current().pid()));
                Thread.sleep(100);
            }
            assertTrue(seen >= 0.5, "a process spinning for 1.5 s kept " + seen + " CPUs busy");
        } finally {
            spinner.destroyForcibly().waitFor();
        }
    }
}
