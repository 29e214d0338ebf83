package dev.gdasync.gdsync.memory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ShmDirectoryTest {
    @TempDir
    Path base;

    private static String perms(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    private static String user() {
        return System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9_.-]", "_");
    }

    /** The pid of a process that has exited and been reaped. */
    private static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        assertEquals(0, p.waitFor());
        long pid = p.pid();
        assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "pid " + pid + " still alive");
        return pid;
    }

    /** Makes a process directory with a file inside, as a crashed process would leave it. */
    private static Path fakeProcessDir(Path jobDir, String name) throws IOException {
        Files.createDirectories(jobDir);
        Path dir = Files.createDirectory(jobDir.resolve(name));
        Files.write(dir.resolve("region-1"), new byte[4096]);
        Files.createDirectory(dir.resolve("nested"));
        Files.write(dir.resolve("nested").resolve("qp-1"), new byte[16]);
        return dir;
    }

    // ---- layout and permissions ----

    @Test
    void layoutIsUserJobAndProcessDirectories() throws IOException {
        try (ShmDirectory d = ShmDirectory.open(base, "job1")) {
            Path root = base.resolve("gdasync-" + user());
            assertEquals(root, d.root());
            assertEquals(root, ShmDirectory.userRoot(base));
            assertEquals(root.resolve("job-job1"), d.jobDirectory());
            assertEquals(d.jobDirectory(), d.processDirectory().getParent());
            assertEquals("job1", d.jobId());

            Matcher m = Pattern.compile("p(\\d+)-(\\d+)-([0-9a-f]+)").matcher(d.processDirectory().getFileName().toString());
            assertTrue(m.matches(), d.processDirectory().toString());
            assertEquals(ProcessHandle.current().pid(), Long.parseLong(m.group(1)));
            assertEquals(ShmDirectory.currentStartMillis(), Long.parseLong(m.group(2)));
            assertTrue(Files.isDirectory(d.processDirectory()));
            assertEquals(d.processDirectory().resolve("x"), d.file("x"));
            assertTrue(d.toString().contains(d.processDirectory().toString()));
        }
    }

    @Test
    void twoDirectoriesOfOneJobAreDistinct() {
        try (ShmDirectory a = ShmDirectory.open(base, "j"); ShmDirectory b = ShmDirectory.open(base, "j")) {
            assertEquals(a.jobDirectory(), b.jobDirectory());
            assertNotEquals(a.processDirectory(), b.processDirectory());
        }
    }

    @Test
    void directoriesAre0700AndFiles0600() throws IOException {
        try (ShmDirectory d = ShmDirectory.open(base, "perm")) {
            assertEquals("rwx------", perms(d.root()));
            assertEquals("rwx------", perms(d.jobDirectory()));
            assertEquals("rwx------", perms(d.processDirectory()));
            HostRegion r = d.allocate(100);
            assertEquals("rw-------", perms(r.path()));
            try (Arena arena = Arena.ofConfined()) {
                d.createFile("ring", 64, arena);
                assertEquals("rw-------", perms(d.file("ring")));
            }
        }
    }

    // ---- regions ----

    @Test
    void allocateReturnsAZeroFilledRegionOfExactlyTheLengthBackedByAPageRoundedFile() throws IOException {
        try (ShmDirectory d = ShmDirectory.open(base, "alloc")) {
            HostRegion r1 = d.allocate(1);
            HostRegion r2 = d.allocate(4096);
            HostRegion r3 = d.allocate(4097);
            assertEquals(1, r1.length());
            assertEquals(4096, r2.length());
            assertEquals(4097, r3.length());
            assertEquals(4096, Files.size(r1.path()));
            assertEquals(4096, Files.size(r2.path()));
            assertEquals(8192, Files.size(r3.path()));
            for (HostRegion r : new HostRegion[] {r1, r2, r3}) {
                assertEquals(RegionKind.HOST, r.kind());
                assertTrue(r.isOpen());
                assertTrue(Files.isRegularFile(r.path()), r.path().toString());
                assertEquals(d.processDirectory(), r.path().getParent());
                assertEquals(0, Files.size(r.path()) % ShmDirectory.PAGE);
                assertEquals(r.segment().address(), r.address());
                assertEquals(r.length(), r.segment().byteSize());
                assertEquals(-1, zeroMismatch(r.segment()), "not zero-filled");
            }
            assertNotEquals(r1.id(), r2.id());
            assertNotEquals(r2.id(), r3.id());
            assertTrue(r1.toString().contains(r1.path().toString()));
        }
    }

    /** @return -1 if the segment is all zero, else the first nonzero offset */
    private static long zeroMismatch(MemorySegment seg) {
        long i = 0;
        for (; i + 8 <= seg.byteSize(); i += 8) {
            if (seg.get(ValueLayout.JAVA_LONG_UNALIGNED, i) != 0) {
                return i;
            }
        }
        for (; i < seg.byteSize(); i++) {
            if (seg.get(ValueLayout.JAVA_BYTE, i) != 0) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void regionsAreZeroFilled() {
        try (ShmDirectory d = ShmDirectory.open(base, "zero")) {
            HostRegion r = d.allocate(3 * 4096 + 5);
            assertEquals(3 * 4096 + 5, r.length());
            assertEquals(-1, zeroMismatch(r.segment()));
        }
    }

    @Test
    void aRegionIsSharedThroughItsFile() {
        try (ShmDirectory d = ShmDirectory.open(base, "share"); Arena arena = Arena.ofConfined()) {
            HostRegion r = d.allocate(4096);
            r.segment().set(ValueLayout.JAVA_LONG, 128, 0x1122334455667788L);
            MemorySegment peer = ShmDirectory.mapExisting(r.path(), true, arena);
            assertEquals(0x1122334455667788L, peer.get(ValueLayout.JAVA_LONG, 128));
            peer.set(ValueLayout.JAVA_INT, 0, 42);
            assertEquals(42, r.segment().get(ValueLayout.JAVA_INT, 0));
            MemorySegment ro = ShmDirectory.mapExisting(r.path(), false, arena);
            assertTrue(ro.isReadOnly());
            assertEquals(42, ro.get(ValueLayout.JAVA_INT, 0));
        }
    }

    @Test
    void closingARegionRemovesItsFile() {
        try (ShmDirectory d = ShmDirectory.open(base, "rclose")) {
            HostRegion r = d.allocate(10);
            HostRegion keep = d.allocate(10);
            int[] listened = {0};
            r.addCloseListener(() -> listened[0]++);
            r.close();
            assertFalse(r.isOpen());
            assertFalse(Files.exists(r.path()));
            assertEquals(1, listened[0]);
            assertThrows(IllegalStateException.class, r::segment);
            r.close(); // twice: nothing
            assertEquals(1, listened[0]);
            assertTrue(Files.exists(keep.path()));
            assertTrue(keep.isOpen());
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void nonPositiveLengthsAreRejected(long bytes) {
        try (ShmDirectory d = ShmDirectory.open(base, "neg")) {
            var e = assertThrows(IllegalArgumentException.class, () -> d.allocate(bytes));
            assertTrue(e.getMessage().contains(Long.toString(bytes)), e.getMessage());
        }
    }

    @Test
    void createFileRefusesAnExistingName() {
        try (ShmDirectory d = ShmDirectory.open(base, "dup"); Arena arena = Arena.ofConfined()) {
            d.createFile("f", 64, arena);
            assertThrows(UncheckedIOException.class, () -> d.createFile("f", 64, arena));
        }
    }

    // ---- sizes: rounding and free space ----

    /** @return the names of the files in a directory */
    private static java.util.List<String> files(Path dir) throws IOException {
        try (var list = Files.list(dir)) {
            return list.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {Long.MAX_VALUE, Long.MAX_VALUE - 1, ShmDirectory.MAX_LENGTH + 1})
    @Timeout(10)
    void lengthsThatCannotBeRoundedToAPageAreRefusedWithoutAFile(long bytes) throws IOException {
        try (ShmDirectory d = ShmDirectory.open(base, "huge")) {
            var e = assertThrows(IllegalArgumentException.class, () -> d.allocate(bytes));
            assertTrue(e.getMessage().contains(bytes + " bytes is too large"), e.getMessage());
            assertTrue(e.getMessage().contains(Long.toString(ShmDirectory.MAX_LENGTH)), e.getMessage());
            assertEquals(java.util.List.of(), files(d.processDirectory()));
            assertEquals(1, d.allocate(1).length(), "the directory still allocates");
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {ShmDirectory.MAX_LENGTH, Long.MAX_VALUE / 2, 1L << 50})
    @Timeout(10)
    void lengthsBeyondTheFreeSpaceAreRefusedBeforeAByteIsWritten(long bytes) throws IOException {
        try (ShmDirectory d = ShmDirectory.open(base, "full")) {
            long free = Files.getFileStore(d.processDirectory()).getUsableSpace();
            org.junit.jupiter.api.Assumptions.assumeTrue(free < bytes, "the file system has " + free + " bytes free");
            var e = assertThrows(UncheckedIOException.class, () -> d.allocate(bytes));
            String m = e.getMessage();
            assertTrue(m.contains("cannot allocate " + bytes + " bytes"), m);
            assertTrue(m.contains("bytes free"), m);
            assertTrue(m.contains(d.processDirectory().toString()), m);
            assertEquals(java.util.List.of(), files(d.processDirectory()), "no file is left behind");
        }
    }

    @Test
    @Timeout(10)
    void aLengthOnePageBeyondTheFreeSpaceIsRefusedNamingBothNumbers() throws IOException {
        try (ShmDirectory d = ShmDirectory.open(base, "page")) {
            long free = Files.getFileStore(d.processDirectory()).getUsableSpace();
            long bytes = (free & -ShmDirectory.PAGE) + ShmDirectory.PAGE + 1;
            var e = assertThrows(UncheckedIOException.class, () -> d.allocate(bytes));
            assertTrue(e.getMessage().contains(bytes + " bytes"), e.getMessage());
            assertTrue(e.getMessage().contains("rounded up to whole pages"), e.getMessage());
            assertEquals(java.util.List.of(), files(d.processDirectory()));
        }
    }

    @Test
    @Timeout(10)
    void createFileChecksItsArgumentsAndTheFreeSpace() throws IOException {
        try (ShmDirectory d = ShmDirectory.open(base, "cf"); Arena arena = Arena.ofConfined()) {
            var n1 = assertThrows(NullPointerException.class, () -> d.createFile(null, 64, arena));
            assertEquals("name must not be null", n1.getMessage());
            var n2 = assertThrows(NullPointerException.class, () -> d.createFile("f", 64, null));
            assertEquals("arena must not be null", n2.getMessage());
            for (long bad : new long[] {0, -1, Long.MIN_VALUE}) {
                var e = assertThrows(IllegalArgumentException.class, () -> d.createFile("f", bad, arena));
                assertEquals("file size must be > 0, got " + bad, e.getMessage());
            }
            var full = assertThrows(UncheckedIOException.class, () -> d.createFile("f", Long.MAX_VALUE, arena));
            assertTrue(full.getMessage().contains("bytes free"), full.getMessage());
            assertEquals(java.util.List.of(), files(d.processDirectory()));
        }
    }

    @Test
    void openRefusesNullsNamingThem() {
        assertEquals("base must not be null",
                assertThrows(NullPointerException.class, () -> ShmDirectory.open(null, "j")).getMessage());
        assertEquals("jobId must not be null",
                assertThrows(NullPointerException.class, () -> ShmDirectory.open(base, null)).getMessage());
    }

    // ---- close ----

    @Test
    void closeRemovesTheProcessAndEmptyJobDirectoryAndClosesRegions() {
        ShmDirectory d = ShmDirectory.open(base, "close");
        HostRegion r = d.allocate(4096);
        d.close();
        assertFalse(r.isOpen());
        assertFalse(Files.exists(r.path()));
        assertFalse(Files.exists(d.processDirectory()));
        assertFalse(Files.exists(d.jobDirectory()));
        assertThrows(IllegalStateException.class, () -> d.allocate(1));
        try (Arena arena = Arena.ofConfined()) {
            assertThrows(IllegalStateException.class, () -> d.createFile("x", 8, arena));
        }
        d.close(); // twice: nothing
    }

    @Test
    void closeKeepsTheJobDirectoryWhileAnotherProcessUsesIt() {
        ShmDirectory a = ShmDirectory.open(base, "shared");
        ShmDirectory b = ShmDirectory.open(base, "shared");
        HostRegion rb = b.allocate(4096);
        a.close();
        assertFalse(Files.exists(a.processDirectory()));
        assertTrue(Files.isDirectory(a.jobDirectory()));
        assertTrue(Files.isDirectory(b.processDirectory()));
        assertTrue(Files.exists(rb.path()));
        assertTrue(rb.isOpen());
        b.close();
        assertFalse(Files.exists(b.jobDirectory()));
    }

    // ---- job ids ----

    @ParameterizedTest
    @ValueSource(strings = {"../x", "", "a/b", "a b", "job\n", "ü", "..\\x"})
    void badJobIdsAreRejected(String jobId) {
        var e = assertThrows(IllegalArgumentException.class, () -> ShmDirectory.open(base, jobId));
        assertTrue(e.getMessage().contains("job id"), e.getMessage());
        assertFalse(Files.exists(ShmDirectory.userRoot(base).resolve("job-" + jobId.replace('/', '_'))));
    }

    @Test
    void jobIdLengthLimits() {
        assertThrows(IllegalArgumentException.class, () -> ShmDirectory.open(base, "j".repeat(65)));
        assertEquals("jobId must not be null",
                assertThrows(NullPointerException.class, () -> ShmDirectory.open(base, null)).getMessage());
        try (ShmDirectory d = ShmDirectory.open(base, "j".repeat(64))) {
            assertEquals("job-" + "j".repeat(64), d.jobDirectory().getFileName().toString());
        }
        try (ShmDirectory d = ShmDirectory.open(base, "A-z_0.9")) {
            assertTrue(Files.isDirectory(d.processDirectory()));
        }
    }

    // ---- stale cleanup ----

    @Test
    void isAliveComparesPidAndStartTime() throws Exception {
        long me = ProcessHandle.current().pid();
        assertTrue(ShmDirectory.isAlive(me, ShmDirectory.currentStartMillis()));
        assertTrue(ShmDirectory.isAlive(me, 0), "an unknown start time trusts the pid");
        assertFalse(ShmDirectory.isAlive(me, 1), "same pid, another start: another process");
        long dead = deadPid();
        assertFalse(ShmDirectory.isAlive(dead, 0));
        assertFalse(ShmDirectory.isAlive(dead, ShmDirectory.currentStartMillis()));
    }

    @Test
    void openRemovesDirectoriesOfDeadProcesses() throws Exception {
        try (ShmDirectory live = ShmDirectory.open(base, "crash")) {
            Path root = live.root();
            long me = ProcessHandle.current().pid();
            Path deadDir = fakeProcessDir(live.jobDirectory(), "p" + deadPid() + "-" + ShmDirectory.currentStartMillis() + "-abc");
            Path reusedPid = fakeProcessDir(live.jobDirectory(), "p" + me + "-1-def");
            Path otherJobDead = fakeProcessDir(root.resolve("job-other"), "p" + deadPid() + "-5-0a");
            Path notAProcess = Files.createDirectory(live.jobDirectory().resolve("notes"));
            Path sameProcessOtherNonce = fakeProcessDir(live.jobDirectory(),
                    "p" + me + "-" + ShmDirectory.currentStartMillis() + "-ffff");
            HostRegion r = live.allocate(4096);

            try (ShmDirectory second = ShmDirectory.open(base, "crash")) {
                assertFalse(Files.exists(deadDir), "a dead process's directory survived");
                assertFalse(Files.exists(reusedPid), "a directory of a reused pid survived");
                assertFalse(Files.exists(otherJobDead));
                assertFalse(Files.exists(root.resolve("job-other")), "an emptied job directory survived");
                assertTrue(Files.isDirectory(live.processDirectory()), "this process's live directory was removed");
                assertTrue(Files.exists(r.path()));
                assertTrue(r.isOpen());
                assertTrue(Files.isDirectory(sameProcessOtherNonce), "a live process's other directory was removed");
                assertTrue(Files.isDirectory(notAProcess), "a directory not named like a process was removed");
                assertTrue(Files.isDirectory(second.processDirectory()));
            }
        }
    }

    @Test
    void cleanStaleCountsWhatItRemoves() throws Exception {
        Path root = ShmDirectory.userRoot(base);
        assertEquals(0, ShmDirectory.cleanStale(root), "no root yet");
        try (ShmDirectory live = ShmDirectory.open(base, "count")) {
            long me = ProcessHandle.current().pid();
            fakeProcessDir(root.resolve("job-count"), "p" + deadPid() + "-123-1");
            fakeProcessDir(root.resolve("job-count"), "p" + me + "-1-2");
            fakeProcessDir(root.resolve("job-gone"), "p" + deadPid() + "-0-3");
            Path kept = Files.createDirectory(root.resolve("not-a-job"));
            Files.write(kept.resolve("p1-1-1"), new byte[1]);

            assertEquals(3, ShmDirectory.cleanStale(root));
            assertEquals(0, ShmDirectory.cleanStale(root), "nothing left to clean");
            assertTrue(Files.isDirectory(live.processDirectory()));
            assertFalse(Files.exists(root.resolve("job-gone")));
            assertTrue(Files.exists(kept.resolve("p1-1-1")), "only job-* directories are cleaned");
            try (var entries = Files.list(live.jobDirectory())) {
                assertEquals(1, entries.count(), "only the live directory remains");
            }
        }
    }
}
