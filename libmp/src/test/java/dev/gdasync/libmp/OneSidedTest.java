package dev.gdasync.libmp;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.stream.HostStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Windows with put and get, on the CPU and on streams, and word waits and writes on streams. */
class OneSidedTest {
    private static final int WINDOW = 64 * 1024;

    @TempDir
    Path base;

    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void everyRankPutsIntoAndGetsFromEveryOther(int n) throws Exception {
        Ranks.run(n, base, mp -> {
            int me = mp.rank();
            MemorySegment exposed = mp.allocate(WINDOW);
            for (int i = 0; i < WINDOW / 8; i++) {
                exposed.set(JAVA_LONG, 8L * i, me * 1_000_000L + i);
            }
            MpWindow win = mp.windowCreate(exposed);
            MemorySegment local = mp.allocate(WINDOW);
            MpRegistration reg = mp.register(local);
            List<MpRequest> gets = new ArrayList<>();
            for (int p = 0; p < n; p++) {
                if (p != me) {
                    assertEquals(WINDOW, win.size(p));
                    gets.add(mp.iget(local.asSlice(p * 1024L, 1024), reg, p, 8 * 100, win));
                }
            }
            mp.waitAll(gets);
            for (int p = 0; p < n; p++) {
                if (p != me) {
                    for (int i = 0; i < 128; i++) {
                        assertEquals(p * 1_000_000L + 100 + i, local.get(JAVA_LONG, p * 1024L + 8L * i));
                    }
                }
            }
            mp.barrier(); // every get is done before anyone overwrites
            List<MpRequest> puts = new ArrayList<>();
            for (int p = 0; p < n; p++) {
                if (p != me) {
                    MemorySegment src = local.asSlice(32 * 1024 + me * 64L, 64);
                    src.fill((byte) (10 + me));
                    // Each rank writes its own 64-byte slot of every peer's window.
                    puts.add(mp.iput(src, reg, p, 32 * 1024 + me * 64L, win, 0));
                }
            }
            mp.waitAll(puts);
            mp.barrier();
            for (int p = 0; p < n; p++) {
                if (p != me) {
                    assertEquals((byte) (10 + p), exposed.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 32 * 1024 + p * 64L + 63));
                }
            }
            mp.windowDestroy(win);
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void fetchAddAndCompareSwapFromEveryRankAreAtomic(int n) throws Exception {
        int adds = 500;
        Ranks.run(n, base, mp -> {
            int me = mp.rank();
            MemorySegment exposed = mp.allocate(64);
            MpWindow win = mp.windowCreate(exposed);
            MemorySegment result = mp.allocate(8);
            MpRegistration reg = mp.register(result);
            mp.barrier();
            if (me != 0) {
                // Every old value a rank sees is distinct from every other rank's: fetch-add hands each out once.
                long previous = -1;
                for (int i = 0; i < adds; i++) {
                    MpRequest r = mp.ifetchAdd(result, reg, 0, 8, 3, win);
                    assertEquals(MpRequest.Kind.ATOMIC, r.kind());
                    mp.wait(r);
                    long old = result.get(JAVA_LONG, 0);
                    assertTrue(old % 3 == 0 && old > previous, "old values grow in steps of 3: " + old + " after " + previous);
                    previous = old;
                }
                // One winner per value: ranks race to move word 16 from 0 to their rank.
                mp.wait(mp.icompareSwap(result, reg, 0, 16, 0, me, win));
                long seen = result.get(JAVA_LONG, 0);
                assertTrue(seen == 0 || (seen >= 1 && seen < n && seen != me), "compare-swap saw " + seen);
            }
            mp.barrier();
            if (me == 0) {
                assertEquals(3L * adds * (n - 1), exposed.get(JAVA_LONG, 8));
                long winner = exposed.get(JAVA_LONG, 16);
                assertTrue(winner >= 1 && winner < n, "one rank won the swap: " + winner);
            }
            mp.barrier();
            mp.windowDestroy(win);
        });
    }

    @Test
    void inlineAndNowaitPutsWithoutLeaks() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment exposed = mp.allocate(WINDOW);
            MpWindow win = mp.windowCreate(exposed);
            MemorySegment local = mp.allocate(WINDOW);
            MpRegistration reg = mp.register(local);
            int peer = 1 - mp.rank();
            if (mp.rank() == 0) {
                for (int i = 0; i < 1000; i++) {
                    local.set(JAVA_LONG, 8L * (i % 512), i);
                    MpRequest r = mp.iput(local.asSlice(8L * (i % 512), 8), reg, peer, 8L * (i % 512), win,
                            PutFlags.NOWAIT | (i % 2 == 0 ? PutFlags.INLINE : 0));
                    assertTrue(r.isNowait());
                    if (i == 0) {
                        assertThrows(IllegalStateException.class, () -> mp.wait(r), "a NOWAIT put cannot be waited");
                    }
                }
                // A signaled put after them completes only after them (one queue, in order).
                local.set(JAVA_LONG, 8 * 600, -1);
                mp.wait(mp.iput(local.asSlice(8 * 600, 8), reg, peer, 8 * 600, win, PutFlags.INLINE));
                mp.progress();
                assertEquals(mp.requestPoolSize(), mp.requestsAvailable(), "NOWAIT puts released themselves");
            }
            mp.barrier();
            if (mp.rank() == 1) {
                for (int i = 488; i < 1000; i++) {
                    assertEquals(i, exposed.get(JAVA_LONG, 8L * (i % 512)));
                }
                assertEquals(-1, exposed.get(JAVA_LONG, 8 * 600));
            }
        });
    }

    @Test
    void putsAndGetsOnStreamsAndWordWaits() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment exposed = mp.allocate(WINDOW);
            MpWindow win = mp.windowCreate(exposed);
            MemorySegment local = mp.allocate(WINDOW);
            MpRegistration reg = mp.register(local);
            int peer = 1 - mp.rank();
            MemoryWord flag = MemoryWord.word32(exposed, 0, "flag of rank " + mp.rank());
            MemoryWord done = MemoryWord.word32(local, 0, "done of rank " + mp.rank());
            try (HostStream stream = HostStream.create("os-" + mp.rank())) {
                if (mp.rank() == 0) {
                    // Data, then a flag: the peer's stream waits for the flag, not for a message.
                    local.asSlice(4096, 256).fill((byte) 42);
                    List<MpRequest> ps = new ArrayList<>();
                    ps.add(mp.putPrepare(local.asSlice(4096, 256), reg, peer, 4096, win, 0));
                    local.set(JAVA_INT, 64, 5);
                    ps.add(mp.putPrepare(local.asSlice(64, 4), reg, peer, 0, win, PutFlags.INLINE));
                    mp.iputPostAllOnStream(ps, stream);
                    mp.waitAllOnStream(ps, stream);
                    stream.synchronize();
                    mp.waitAll(ps);
                    // Now get back what the peer's stream wrote after its waits.
                    mp.barrier();
                    MpRequest g = mp.igetOnStream(local.asSlice(8192, 8), reg, peer, 8192, win, stream);
                    mp.waitOnStream(g, stream);
                    stream.synchronize();
                    mp.wait(g);
                    assertEquals(4242, local.get(JAVA_LONG, 8192));
                } else {
                    mp.wait32OnStream(flag, 5, WaitCondition.GEQ, stream);
                    mp.wait32OnStream(flag, 4, WaitCondition.AND, stream);
                    mp.wait32OnStream(flag, 5, WaitCondition.EQ, stream);
                    stream.launch(() -> {
                        assertEquals(42, exposed.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4096 + 255),
                                "the data put before the flag is visible after the flag");
                        exposed.set(JAVA_LONG, 8192, 4242);
                    });
                    mp.write32OnStream(done, 1, stream);
                    stream.synchronize();
                    mp.wait32(done, 1, WaitCondition.EQ);
                    mp.barrier();
                }
                mp.barrier();
            }
        });
    }

    @Test
    void windowRangesArePrecise() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment exposed = mp.allocate(4096);
            MpWindow win = mp.windowCreate(exposed.asSlice(0, 1000));
            MemorySegment local = mp.allocate(4096);
            MpRegistration reg = mp.register(local);
            int peer = 1 - mp.rank();
            IllegalArgumentException past = assertThrows(IllegalArgumentException.class,
                    () -> mp.iput(local.asSlice(0, 64), reg, peer, 1000 - 63, win, 0));
            assertTrue(past.getMessage().contains("past the window of rank " + peer), past.getMessage());
            assertThrows(IllegalArgumentException.class, () -> mp.iget(local.asSlice(0, 8), reg, peer, -8, win));
            assertThrows(IllegalArgumentException.class, () -> mp.iput(local.asSlice(0, 300), reg, peer, 0, win, PutFlags.INLINE));
            assertThrows(IllegalArgumentException.class, () -> mp.iput(local.asSlice(0, 8), reg, peer, 0, win, 4));
            assertEquals(mp.requestPoolSize(), mp.requestsAvailable(), "refused puts took no request");
            mp.wait(mp.iput(local.asSlice(0, 64), reg, peer, 1000 - 64, win, 0));
            mp.barrier();
            mp.windowDestroy(win);
            assertThrows(IllegalStateException.class, () -> mp.iput(local.asSlice(0, 8), reg, peer, 0, win, 0));
        });
    }
}
