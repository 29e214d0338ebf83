package dev.gdasync.gdsync.concurrent;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A thread sleeping on a word of a mapped file is woken by a call, not by its timeout. */
class FutexTest {
    @TempDir
    Path dir;

    @Test
    void theSyscallNumberIsKnownForLinuxOnItsCommonArchitecturesOnly() {
        assertEquals(202, Futex.syscallNumber("Linux", "amd64"));
        assertEquals(98, Futex.syscallNumber("Linux", "aarch64"));
        assertEquals(-1, Futex.syscallNumber("Mac OS X", "aarch64"));
        assertEquals(-1, Futex.syscallNumber("Linux", "s390x"));
    }

    private static void assumeSupported() {
        if (!Futex.isSupported()) {
            System.out.println("FutexTest: skipped: no futex call here (" + System.getProperty("os.name") + " "
                    + System.getProperty("os.arch") + ")");
        }
        Assumptions.assumeTrue(Futex.isSupported(), "no futex call here");
    }

    private MemorySegment mapped(Arena arena) throws Exception {
        try (FileChannel ch = FileChannel.open(dir.resolve("word"), StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, 4096, arena);
        }
    }

    @Test
    void aWakeEndsASleepLongBeforeItsTimeout() throws Exception {
        assumeSupported();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment word = mapped(arena);
            CountDownLatch asleep = new CountDownLatch(1);
            CountDownLatch woke = new CountDownLatch(1);
            Thread sleeper = Thread.ofPlatform().start(() -> {
                asleep.countDown();
                while (word.get(JAVA_INT, 64) == 0) {
                    Futex.await(word, 64, 0, Duration.ofSeconds(60).toNanos());
                }
                woke.countDown();
            });
            assertTrue(asleep.await(5, TimeUnit.SECONDS));
            Thread.sleep(50); // most likely in the kernel by now; if not, the changed word stops it from sleeping
            word.set(JAVA_INT, 64, 1);
            Futex.wakeAll(word, 64);
            assertTrue(woke.await(20, TimeUnit.SECONDS), "a 60 s sleep was not ended by the wake");
            sleeper.join();
        }
    }

    @Test
    void aWordThatChangedStopsTheSleepAtOnce() throws Exception {
        assumeSupported();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment word = mapped(arena);
            word.set(JAVA_INT, 0, 7);
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> Futex.await(word, 0, 6, Duration.ofSeconds(60).toNanos()),
                    "the word holds 7, not the 6 expected: no sleep");
        }
    }
}
