package dev.gdasync.libmp;

import dev.gdasync.gdsync.nic.CompletionStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Two-sided communication driven by the CPU, between ranks that are threads of this JVM. */
class TwoSidedTest {
    @TempDir
    Path base;

    static void fill(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(JAVA_BYTE, i, (byte) (seed * 131 + i * 7));
        }
    }

    static void check(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            if (s.get(JAVA_BYTE, i) != (byte) (seed * 131 + i * 7)) {
                throw new AssertionError("byte " + i + " of a message seeded " + seed + " is wrong");
            }
        }
    }

    @Test
    void aLayerThatHoldsTheTwoSidedCallsIsNamedAndAnotherIsRefused() throws Exception {
        Ranks.run(2, base, mp -> {
            assertEquals(null, mp.twoSidedHolder());
            mp.reserveTwoSided("layer A");
            mp.reserveTwoSided("layer A"); // again, the same holder: nothing changes
            assertEquals("layer A", mp.twoSidedHolder());
            IllegalStateException other = assertThrows(IllegalStateException.class,
                    () -> mp.reserveTwoSided("layer B"));
            assertEquals("rank " + mp.rank() + ": the two-sided calls of this Mp are held by layer A, not by layer B",
                    other.getMessage());
            NullPointerException none = assertThrows(NullPointerException.class,
                    () -> mp.reserveTwoSided(null));
            assertEquals("holder must not be null", none.getMessage());
            assertEquals("layer A", mp.twoSidedHolder(), "a refused call changes nothing");
            // The holder's own traffic goes on: an exchange between the two ranks.
            MemorySegment mem = mp.allocate(16);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            MpRequest recv = mp.irecv(mem.asSlice(8, 8), peer, reg);
            mem.set(JAVA_LONG, 0, 40 + mp.rank());
            mp.wait(mp.isend(mem.asSlice(0, 8), peer, reg));
            mp.wait(recv);
            assertEquals(40 + peer, mem.get(JAVA_LONG, 8));
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void everyRankExchangesWithEveryOther(int n) throws Exception {
        Ranks.run(n, base, mp -> {
            int me = mp.rank();
            int len = 4096 + me;
            MemorySegment mem = mp.allocate((long) 2 * n * 8192);
            MpRegistration reg = mp.register(mem);
            List<MpRequest> reqs = new ArrayList<>();
            for (int p = 0; p < n; p++) {
                if (p != me) {
                    reqs.add(mp.irecv(mem.asSlice(p * 8192L, 8192), p, reg));
                }
            }
            mp.barrier();
            for (int p = 0; p < n; p++) {
                if (p != me) {
                    MemorySegment out = mem.asSlice((n + p) * 8192L, len);
                    fill(out, me * 100 + p);
                    reqs.add(mp.isend(out, p, reg));
                }
            }
            mp.waitAll(reqs);
            for (MpRequest r : reqs) {
                assertEquals(RequestState.RELEASED, r.state());
                assertEquals(CompletionStatus.SUCCESS, r.status());
            }
            for (int p = 0; p < n; p++) {
                if (p != me) {
                    check(mem.asSlice(p * 8192L, 4096 + p), p * 100 + me);
                }
            }
            assertEquals(mp.requestPoolSize(), mp.requestsAvailable());
        });
    }

    @Test
    void receivesMatchSendsInFifoOrderPerPeer() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(64 * 1024);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            if (mp.rank() == 1) {
                List<MpRequest> rs = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    rs.add(mp.irecv(mem.asSlice(i * 8L, 8), peer, reg));
                }
                mp.barrier();
                for (int i = 0; i < 50; i++) {
                    mp.wait(rs.get(i));
                    assertEquals(8, rs.get(i).byteCount());
                    assertEquals(1000 + i, mem.get(JAVA_LONG, i * 8L));
                }
            } else {
                mp.barrier();
                for (int i = 0; i < 50; i++) {
                    mem.set(JAVA_LONG, 4096 + i * 8L, 1000 + i);
                    mp.wait(mp.isend(mem.asSlice(4096 + i * 8L, 8), peer, reg));
                }
            }
        });
    }

    @Test
    void gatherAndScatterWithinOneRegistration() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(8192);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            if (mp.rank() == 1) {
                MpRequest r = mp.irecvv(List.of(mem.asSlice(0, 5), mem.asSlice(100, 20), mem.asSlice(500, 64)), peer, reg);
                mp.barrier();
                mp.wait(r);
                assertEquals(37, r.byteCount());
                MemorySegment got = MemorySegment.ofArray(new byte[37]);
                MemorySegment.copy(mem, 0, got, 0, 5);
                MemorySegment.copy(mem, 100, got, 5, 20);
                MemorySegment.copy(mem, 500, got, 25, 12);
                check(got, 9);
            } else {
                MemorySegment msg = MemorySegment.ofArray(new byte[37]);
                fill(msg, 9);
                MemorySegment.copy(msg, 0, mem, 1000, 12);
                MemorySegment.copy(msg, 12, mem, 2000, 25);
                mp.barrier();
                mp.wait(mp.isendv(List.of(mem.asSlice(1000, 12), mem.asSlice(2000, 25)), peer, reg));
            }
        });
    }

    @Test
    void testReleasesOnCompletionAndProgressCounts() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            if (mp.rank() == 1) {
                MpRequest r = mp.irecv(mem.asSlice(0, 8), peer, reg);
                assertFalse(mp.test(r), "nothing sent yet");
                mp.barrier();
                mp.barrier(); // the send happened in between
                assertTrue(mp.test(r));
                assertEquals(RequestState.RELEASED, r.state());
            } else {
                mp.barrier();
                MpRequest s = mp.isend(mem.asSlice(0, 8), peer, reg);
                while (mp.progress(s) == 0) {
                    Thread.onSpinWait();
                }
                assertEquals(RequestState.COMPLETE, s.state());
                mp.barrier();
                mp.wait(s);
            }
        });
    }

    @Test
    void waitingForALaterRequestReleasesTheEarlierOnesOnTheCpu() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            if (mp.rank() == 1) {
                MpRequest first = mp.irecv(mem.asSlice(0, 8), peer, reg);
                MpRequest second = mp.irecv(mem.asSlice(8, 8), peer, reg);
                mp.barrier();
                mp.wait(second);
                assertTrue(first.isComplete(), "the earlier completion was reaped on the way");
                assertSame(RequestState.COMPLETE, first.state());
                mp.wait(first);
            } else {
                mp.barrier();
                mp.waitAll(mp.isend(mem.asSlice(0, 8), peer, reg), mp.isend(mem.asSlice(8, 8), peer, reg));
            }
        });
    }
}
