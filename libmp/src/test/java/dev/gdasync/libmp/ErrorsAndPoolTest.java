package dev.gdasync.libmp;

import dev.gdasync.gdsync.stream.HostStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad arguments raise precise exceptions and change nothing; the request pool never leaks. */
class ErrorsAndPoolTest {
    @TempDir
    Path base;

    private static void assertMessage(Throwable e, String part) {
        assertTrue(e.getMessage().contains(part), "expected '" + part + "' in: " + e.getMessage());
    }

    @Test
    void badArgumentsAreRefusedPrecisely() throws Exception {
        Ranks.run(3, base, mp -> {
            MemorySegment mem = mp.allocate(8192);
            MpRegistration reg = mp.register(mem.asSlice(0, 4096));
            int peer = (mp.rank() + 1) % 3;
            int before = mp.requestsAvailable();

            assertMessage(assertThrows(IllegalArgumentException.class, () -> mp.isend(mem.asSlice(0, 8), 7, reg)), "unknown peer 7");
            assertMessage(assertThrows(IllegalArgumentException.class, () -> mp.irecv(mem.asSlice(0, 8), -1, reg)), "unknown peer -1");
            assertMessage(assertThrows(IllegalArgumentException.class, () -> mp.isend(mem.asSlice(0, 8), mp.rank(), reg)),
                    "is this rank");
            assertMessage(assertThrows(IllegalArgumentException.class, () -> mp.isend(mem.asSlice(4090, 8), peer, reg)),
                    "register it first");
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment foreign = arena.allocate(64);
                assertMessage(assertThrows(IllegalArgumentException.class, () -> mp.register(foreign)), "Mp.allocate");
            }
            MpRegistration other = mp.register(mem.asSlice(4096, 64));
            mp.deregister(other);
            assertMessage(assertThrows(IllegalArgumentException.class, () -> mp.isend(mem.asSlice(4096, 8), peer, other)),
                    "deregistered");
            assertThrows(IllegalArgumentException.class, () -> mp.deregister(other));
            assertEquals(before, mp.requestsAvailable(), "refused calls took no request");

            MpRequest r = mp.irecv(mem.asSlice(0, 8), (mp.rank() + 2) % 3, reg);
            mp.barrier();
            mp.wait(mp.isend(mem.asSlice(64, 8), peer, reg));
            mp.wait(r);
            assertMessage(assertThrows(IllegalStateException.class, () -> mp.wait(r)), "waited on once");
            assertMessage(assertThrows(IllegalStateException.class, () -> mp.test(r)), "waited on once");

            MpRequest prepared = mp.sendPrepare(mem.asSlice(0, 8), peer, reg);
            assertMessage(assertThrows(IllegalStateException.class, () -> mp.wait(prepared)), "never posted");
            try (HostStream s = HostStream.create("e" + mp.rank())) {
                assertMessage(assertThrows(IllegalStateException.class, () -> mp.waitOnStream(prepared, s)), "never posted");
                MpRequest recv = mp.irecv(mem.asSlice(8, 8), (mp.rank() + 2) % 3, reg);
                mp.isendPostOnStream(prepared, s);
                mp.waitOnStream(recv, s);
                assertMessage(assertThrows(IllegalStateException.class, () -> mp.waitOnStream(recv, s)),
                        "already waited on by a stream");
                s.synchronize();
                mp.waitAll(prepared, recv);
            }
            mp.barrier();
        });
    }

    @Test
    void requestsOfAnotherMpAreRefused() throws Exception {
        List<MpRequest> shared = new ArrayList<>();
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            MpRequest r = mp.irecv(mem.asSlice(0, 8), 1 - mp.rank(), reg);
            synchronized (shared) {
                shared.add(r);
            }
            mp.barrier();
            MpRequest theirs;
            synchronized (shared) {
                theirs = shared.get(0) == r ? shared.get(1) : shared.get(0);
            }
            assertMessage(assertThrows(IllegalArgumentException.class, () -> mp.wait(theirs)), "another Mp");
            mp.barrier();
            mp.wait(mp.isend(mem.asSlice(8, 8), 1 - mp.rank(), reg));
            mp.wait(r);
        });
    }

    @Test
    void anExhaustedPoolIsReportedAndRecovers() throws Exception {
        Ranks.run(2, Ranks.config(base).withRequestPool(8), mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            if (mp.rank() == 1) {
                List<MpRequest> rs = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    rs.add(mp.irecv(mem.asSlice(8L * i, 8), peer, reg));
                }
                assertEquals(0, mp.requestsAvailable());
                assertMessage(assertThrows(IllegalStateException.class, () -> mp.irecv(mem.asSlice(0, 8), peer, reg)),
                        "request pool exhausted");
                mp.barrier();
                mp.waitAll(rs);
                assertEquals(8, mp.requestsAvailable());
                mp.wait(mp.irecv(mem.asSlice(0, 8), peer, reg));
            } else {
                mp.barrier();
                for (int i = 0; i < 9; i++) {
                    mp.wait(mp.isend(mem.asSlice(0, 8), peer, reg));
                }
            }
        });
    }

    /** 10^5 mixed operations over two ranks, then every request slot is back in the pool. */
    @Test
    void thePoolIsBackAtItsSizeAfterAHundredThousandMixedOperations() throws Exception {
        Ranks.run(2, Ranks.config(base).withRequestPool(512), mp -> {
            MemorySegment mem = mp.allocate(1 << 20);
            MpRegistration reg = mp.register(mem);
            MemorySegment exposed = mp.allocate(1 << 16);
            MpWindow win = mp.windowCreate(exposed);
            int peer = 1 - mp.rank();
            int ops = 0;
            try (HostStream stream = HostStream.create("mix-" + mp.rank())) {
                for (int round = 0; ops < 50_000; round++) {
                    // 40 receives, 40 sends (half on the stream), puts (some NOWAIT), gets.
                    List<MpRequest> rs = new ArrayList<>();
                    for (int i = 0; i < 40; i++) {
                        rs.add(mp.irecv(mem.asSlice(8L * i, 8), peer, reg));
                    }
                    mp.barrier();
                    // CPU sends, then stream sends: messages to a peer go in order, so the CPU may
                    // post to it again only once the stream has rung its sends.
                    for (int i = 0; i < 40; i++) {
                        MemorySegment out = mem.asSlice(4096 + 8L * i, 8);
                        out.set(JAVA_LONG, 0, round * 100L + i);
                        rs.add(i < 20 ? mp.isend(out, peer, reg) : mp.isendOnStream(out, peer, reg, stream));
                    }
                    stream.synchronize();
                    for (int i = 0; i < 20; i++) {
                        MpRequest p = mp.iput(mem.asSlice(8192 + 8L * i, 8), reg, peer, 8L * i, win,
                                i % 3 == 0 ? PutFlags.NOWAIT : PutFlags.INLINE);
                        if (!p.isNowait()) {
                            rs.add(p);
                        }
                    }
                    for (int i = 0; i < 10; i++) {
                        rs.add(mp.iget(mem.asSlice(16384 + 8L * i, 8), reg, peer, 1024 + 8L * i, win));
                    }
                    stream.synchronize();
                    mp.waitAll(rs);
                    for (int i = 0; i < 40; i++) {
                        assertEquals(round * 100L + i, mem.get(JAVA_LONG, 8L * i));
                    }
                    ops += 40 + 40 + 20 + 10;
                    mp.barrier();
                }
            }
            mp.progress();
            assertTrue(ops * 2 >= 100_000, "ran " + ops * 2 + " operations over both ranks");
            assertEquals(mp.requestPoolSize(), mp.requestsAvailable(), "every request slot is back");
        });
    }
}
