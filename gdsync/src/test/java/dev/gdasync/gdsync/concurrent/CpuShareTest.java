package dev.gdasync.gdsync.concurrent;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CpuShareTest {
    @TempDir
    Path dir;

    private static CpuShareEntry.Rank r(String job, int rank) {
        return new CpuShareEntry.Rank(job, rank);
    }

    private static CpuShareEntry entry(long pid, List<CpuShareEntry.Rank> ranks, List<Integer> pinned) {
        return new CpuShareEntry(pid, 1000, ranks, List.of(0, 1), pinned);
    }

    @Test
    void cpuListsReadAndWriteLikeLinux() {
        assertEquals(List.of(0, 1, 2, 3, 8, 10, 11), CpuList.parse("0-3,8,10-11\n"));
        assertEquals(List.of(), CpuList.parse(" "));
        assertEquals("0-3,8,10,11", CpuList.format(List.of(0, 1, 2, 3, 8, 10, 11)));
        assertEquals("", CpuList.format(List.of()));
        assertThrows(IllegalArgumentException.class, () -> CpuList.parse("3-1"));
        assertThrows(IllegalArgumentException.class, () -> CpuList.parse("a"));
    }

    @Test
    void anEntryIsOneLine() {
        CpuShareEntry e = new CpuShareEntry(42, 1_700_000_000_000L, List.of(r("mprun-ab12", 0), r("mprun-ab12", 1)),
                List.of(0, 1), List.of(1));
        assertEquals("pid=42 start=1700000000000 ranks=mprun-ab12:0,mprun-ab12:1 allowed=0,1 pinned=1", e.format());
        assertEquals(e, CpuShareEntry.parse(e.format()));
        assertEquals(new CpuShareEntry(7, 1, List.of(), List.of(), List.of()), CpuShareEntry.parse("pid=7 start=1 ranks= allowed= pinned="));
        assertThrows(IllegalArgumentException.class, () -> CpuShareEntry.parse("hello"));
    }

    @Test
    void oneTwoRankJobOnTwoCpusSpinsAndPinsEachRankToItsOwnCpu() {
        List<CpuShareEntry> reg = List.of(entry(10, List.of(r("a", 0)), List.of()), entry(11, List.of(r("a", 1)), List.of()));
        CpuShareDecision d = CpuShareDecision.decide(List.of(0, 1), reg, "a");
        assertFalse(d.oversubscribed());
        assertEquals(2, d.ranks());
        assertEquals(0, d.cpuFor(0));
        assertEquals(1, d.cpuFor(1));
        assertEquals(-1, d.cpuFor(7), "a rank that did not register");
    }

    @Test
    void fourRanksOnTwoCpusAreOversubscribedAndPinNothing() {
        List<CpuShareEntry> reg = List.of(entry(10, List.of(r("a", 0)), List.of()), entry(11, List.of(r("a", 1)), List.of()),
                entry(12, List.of(r("a", 2)), List.of()), entry(13, List.of(r("a", 3)), List.of()));
        CpuShareDecision d = CpuShareDecision.decide(List.of(0, 1), reg, "a");
        assertTrue(d.oversubscribed());
        assertEquals(-1, d.cpuFor(0));
        assertTrue(d.describe().contains("4 ranks of 1 gdasync job on 2 allowed CPUs (0,1): oversubscribed"), d.describe());
    }

    @Test
    void aSecondJobNeitherPinsOntoTheFirstJobsCpusNorSpins() {
        List<CpuShareEntry> reg = List.of(entry(10, List.of(r("a", 0)), List.of(0)), entry(11, List.of(r("a", 1)), List.of(1)),
                entry(20, List.of(r("b", 0)), List.of()), entry(21, List.of(r("b", 1)), List.of()));
        CpuShareDecision b = CpuShareDecision.decide(List.of(0, 1), reg, "b");
        assertTrue(b.oversubscribed());
        assertEquals(2, b.jobs());
        assertEquals(List.of(0, 1), b.pinnedByOthers());
        assertEquals(List.of(), b.free());
        assertEquals(-1, b.cpuFor(0));
        // The first job's own pins are not another job's.
        assertEquals(List.of(), CpuShareDecision.decide(List.of(0, 1), reg, "a").pinnedByOthers());
    }

    @Test
    void aJobOnFourCpusBesideOneThatPinnedTwoTakesTheOtherTwo() {
        List<CpuShareEntry> reg = List.of(
                new CpuShareEntry(10, 1, List.of(r("a", 0), r("a", 1)), List.of(0, 1, 2, 3), List.of(0, 1)),
                new CpuShareEntry(20, 1, List.of(r("b", 0)), List.of(0, 1, 2, 3), List.of()),
                new CpuShareEntry(21, 1, List.of(r("b", 1)), List.of(0, 1, 2, 3), List.of()));
        CpuShareDecision d = CpuShareDecision.decide(List.of(0, 1, 2, 3), reg, "b");
        assertFalse(d.oversubscribed());
        assertEquals(2, d.cpuFor(0));
        assertEquals(3, d.cpuFor(1));
    }

    @Test
    void processesOnOtherCpusDoNotCompete() {
        List<CpuShareEntry> reg = List.of(entry(10, List.of(r("a", 0)), List.of()), entry(11, List.of(r("a", 1)), List.of()),
                new CpuShareEntry(20, 1, List.of(r("b", 0), r("b", 1)), List.of(2, 3), List.of(2, 3)));
        CpuShareDecision d = CpuShareDecision.decide(List.of(0, 1), reg, "a");
        assertFalse(d.oversubscribed());
        assertEquals(2, d.ranks());
        // The same rank registered by two processes (two NIC providers of one rank) counts once.
        List<CpuShareEntry> twice = List.of(entry(10, List.of(r("a", 0)), List.of()), entry(10, List.of(r("a", 0)), List.of()));
        assertEquals(1, CpuShareDecision.decide(List.of(0, 1), twice, "a").ranks());
    }

    @Test
    void theRegistryKeepsLiveProcessesAndDropsTheDead() throws Exception {
        CpuRegistry reg = new CpuRegistry(dir.resolve("cpu-share"));
        assertEquals(List.of(), reg.read(), "no directory yet");
        ProcessHandle me = ProcessHandle.current();
        long start = me.info().startInstant().orElseThrow().toEpochMilli();
        CpuShareEntry mine = new CpuShareEntry(me.pid(), start, List.of(r("a", 0)), List.of(0, 1), List.of());
        reg.write(mine);
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        CpuShareEntry dead = new CpuShareEntry(gone.pid(), 1, List.of(r("b", 0)), List.of(0, 1), List.of(0));
        reg.write(dead);
        Files.writeString(reg.dir().resolve("notes.txt"), "not an entry");
        assertEquals(List.of(mine), reg.read());
        assertFalse(Files.exists(reg.dir().resolve("p" + gone.pid() + "-1")), "a dead process's file is removed");
        reg.write(new CpuShareEntry(me.pid(), start, List.of(r("a", 0)), List.of(0, 1), List.of(1)));
        assertEquals(List.of(1), reg.read().getFirst().pinned(), "a new entry replaces the old");
        reg.remove(me.pid(), start);
        assertEquals(List.of(), reg.read());
    }

    @Test
    void aProcessThatDiesAfterItWasListedIsDroppedAtTheNextRead() throws Exception {
        CpuRegistry reg = new CpuRegistry(dir.resolve("cpu-share"));
        Process other = new ProcessBuilder("sleep", "60").start();
        try {
            long start = other.toHandle().info().startInstant().orElseThrow().toEpochMilli();
            CpuShareEntry e = new CpuShareEntry(other.pid(), start, List.of(r("b", 0)), List.of(0, 1), List.of());
            reg.write(e);
            assertEquals(List.of(e), reg.read());
            assertEquals(List.of(e), reg.read(), "a second read of an unchanged directory finds the same");
            other.destroyForcibly().waitFor();
            // The directory is unchanged since the last listing: the read asks the process, not the directory.
            assertEquals(List.of(), reg.read());
            assertFalse(Files.exists(reg.dir().resolve("p" + other.pid() + "-" + start)), "a dead process's file is removed");
        } finally {
            other.destroyForcibly();
        }
    }

    @Test
    void anIdlerYieldsLongerBeforeItParksWhileEveryRankHasACpu() {
        BackoffPolicy policy = new BackoffPolicy(5, 3, 1_000, 4_000, 10);
        String before = System.getProperty(CpuShare.YIELD_PROPERTY);
        try {
            System.setProperty(CpuShare.YIELD_PROPERTY, "never");
            try (CpuShare.Seat seat = CpuShare.join(dir.resolve("cpu-share"), "own-cpu-test", 0)) {
                assertFalse(CpuShare.yielding());
                BackoffIdler idler = new BackoffIdler(policy);
                for (int i = 0; i < 15; i++) {
                    assertFalse(idler.isParking(), "parking after only " + i + " idles: spins and own-CPU yields are 15");
                    idler.idle();
                }
                assertTrue(idler.isParking());
            }
            System.setProperty(CpuShare.YIELD_PROPERTY, "always");
            try (CpuShare.Seat seat = CpuShare.join(dir.resolve("cpu-share"), "own-cpu-test", 0)) {
                assertTrue(CpuShare.yielding());
                BackoffIdler idler = new BackoffIdler(policy);
                for (int i = 0; i < 8; i++) {
                    assertFalse(idler.isParking(), "parking after only " + i + " idles");
                    idler.idle();
                }
                assertTrue(idler.isParking(), "oversubscribed, it parks after spins and yields, 8 idles");
            }
        } finally {
            restore(before);
        }
    }

    @Test
    void aCpuIsSpareOnlyWhileTheRanksLeaveOneFree() {
        List<Integer> allowed = CpuShare.processAllowedCpus();
        String before = System.getProperty(CpuShare.YIELD_PROPERTY);
        try {
            System.setProperty(CpuShare.YIELD_PROPERTY, "auto");
            System.setProperty(CpuShare.OTHERS_PROPERTY, "no");
            try (CpuShare.Seat seat = CpuShare.join(dir.resolve("cpu-share"), "spare-test", 0)) {
                assertEquals(allowed.size() > 1, CpuShare.spareCpu(), "1 rank on " + allowed.size() + " CPUs: " + CpuShare.describe());
                List<CpuShare.Seat> more = new java.util.ArrayList<>();
                try {
                    for (int r = 1; r < allowed.size(); r++) {
                        more.add(CpuShare.join(dir.resolve("cpu-share"), "spare-test", r));
                    }
                    assertFalse(CpuShare.spareCpu(), "a rank per CPU leaves none spare: " + CpuShare.describe());
                } finally {
                    more.forEach(CpuShare.Seat::close);
                }
            }
            System.setProperty(CpuShare.YIELD_PROPERTY, "always");
            try (CpuShare.Seat seat = CpuShare.join(dir.resolve("cpu-share"), "spare-test", 0)) {
                assertFalse(CpuShare.spareCpu(), "no CPU is spare while waits yield");
            }
        } finally {
            restore(before);
        }
    }

    private static void restore(String yieldProperty) {
        System.clearProperty(CpuShare.OTHERS_PROPERTY);
        if (yieldProperty == null) {
            System.clearProperty(CpuShare.YIELD_PROPERTY);
        } else {
            System.setProperty(CpuShare.YIELD_PROPERTY, yieldProperty);
        }
    }

    @Test
    void anIdlerYieldsInsteadOfSpinningWhileOversubscribed() {
        BackoffIdler idler = new BackoffIdler(new BackoffPolicy(20_000, 200, 1_000, 50_000));
        String before = System.getProperty(CpuShare.YIELD_PROPERTY);
        System.setProperty(CpuShare.YIELD_PROPERTY, "always");
        CpuShare.Seat seat = CpuShare.join(dir.resolve("cpu-share"), "idler-test", 0);
        try {
            assertTrue(CpuShare.yielding());
            for (int i = 0; i < BackoffIdler.SHARED_SPINS; i++) {
                assertTrue(idler.isSpinning());
                idler.idle();
            }
            assertFalse(idler.isSpinning(), "after " + BackoffIdler.SHARED_SPINS + " spins it yields");
            assertFalse(idler.isParking(), "the spins it left out are yields: it parks no sooner");
            assertTrue(CpuShare.describe().contains("waits yield (gdasync.yield=always)"), CpuShare.describe());
        } finally {
            seat.close();
            if (before == null) {
                System.clearProperty(CpuShare.YIELD_PROPERTY);
            } else {
                System.setProperty(CpuShare.YIELD_PROPERTY, before);
            }
        }
    }

    @Test
    void aPinnedThreadFloatsAgainWhenAnotherJobArrives() throws Exception {
        List<Integer> allowed = CpuShare.processAllowedCpus();
        String skip = !ThreadAffinity.isSupported() ? "no sched_setaffinity" : allowed.size() != 2 ? allowed.size() + " CPUs, not 2" : null;
        if (skip != null) {
            System.out.println("CpuShareTest: skipping the unpin check: " + skip);
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(skip == null, skip);
        String before = System.getProperty(CpuShare.YIELD_PROPERTY);
        System.setProperty(CpuShare.YIELD_PROPERTY, "auto");
        // The registry alone decides here: a build beside the test must not make the job yield before the second job.
        System.setProperty(CpuShare.OTHERS_PROPERTY, "no");
        Path regDir = dir.resolve("cpu-share");
        CpuShare.Seat seat = CpuShare.join(regDir, "first", 0);
        Process other = new ProcessBuilder("sleep", "60").start();
        java.util.concurrent.SynchronousQueue<List<Integer>> seen = new java.util.concurrent.SynchronousQueue<>();
        java.util.concurrent.CountDownLatch ask = new java.util.concurrent.CountDownLatch(1);
        Thread pinned = Thread.ofPlatform().start(() -> {
            try {
                assertTrue(CpuShare.pinCurrentThread(allowed.get(1)));
                seen.put(ThreadAffinity.allowedCpus());
                ask.await();
                seen.put(ThreadAffinity.allowedCpus());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertEquals(List.of(allowed.get(1)), seen.take(), "pinned while its job is alone");
            assertFalse(CpuShare.yielding());
            // A second job of three ranks on the same CPUs arrives: 4 ranks on 2 CPUs.
            long start = other.toHandle().info().startInstant().orElseThrow().toEpochMilli();
            new CpuRegistry(regDir).write(new CpuShareEntry(other.pid(), start,
                    List.of(r("second", 0), r("second", 1), r("second", 2)), allowed, List.of()));
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (!CpuShare.yielding() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertTrue(CpuShare.yielding(), "the watcher saw the second job: " + CpuShare.describe());
            ask.countDown();
            assertEquals(allowed, seen.take(), "the pinned thread may run on every allowed CPU again");
            assertTrue(new CpuRegistry(regDir).read().stream().filter(e -> e.pid() == ProcessHandle.current().pid())
                    .allMatch(e -> e.pinned().isEmpty()), "the registry no longer lists the pin");
        } finally {
            System.clearProperty(CpuShare.OTHERS_PROPERTY);
            pinned.join(5000);
            other.destroyForcibly();
            seat.close();
            if (before == null) {
                System.clearProperty(CpuShare.YIELD_PROPERTY);
            } else {
                System.setProperty(CpuShare.YIELD_PROPERTY, before);
            }
        }
    }
}
