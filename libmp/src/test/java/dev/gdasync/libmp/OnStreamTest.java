package dev.gdasync.libmp;

import dev.gdasync.gdsync.stream.HostStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The stream-asynchronous model: sends rung and completions awaited by host streams. */
class OnStreamTest {
    @TempDir
    Path base;

    @Test
    void aStreamPingPongRunsWithoutTheCpu() throws Exception {
        int iters = 200;
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(64 * 1024);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            boolean first = mp.rank() == 0;
            try (HostStream stream = HostStream.create("sa-" + mp.rank())) {
                AtomicLong value = new AtomicLong();
                List<MpRequest> all = new ArrayList<>();
                MemorySegment out = mem.asSlice(0, 8);
                for (int i = 0; i < iters; i++) {
                    MemorySegment in = mem.asSlice(4096 + 8L * i, 8);
                    MpRequest recv = mp.irecv(in, peer, reg);
                    long next = first ? 2L * i : 2L * i + 1;
                    if (first) {
                        stream.launch(() -> out.set(JAVA_LONG, 0, next));
                        all.add(mp.isendOnStream(out, peer, reg, stream));
                        mp.waitOnStream(recv, stream);
                        stream.launch(() -> value.set(in.get(JAVA_LONG, 0)));
                    } else {
                        mp.waitOnStream(recv, stream);
                        stream.launch(() -> out.set(JAVA_LONG, 0, in.get(JAVA_LONG, 0) + 1));
                        all.add(mp.isendOnStream(out, peer, reg, stream));
                    }
                    all.add(recv);
                    if (all.size() >= 64) {
                        stream.synchronize();
                        mp.waitAll(all);
                        all.clear();
                    }
                }
                stream.synchronize();
                mp.waitAll(all);
                if (first) {
                    assertEquals(2L * (iters - 1) + 1, value.get(), "the last reply carried the last count + 1");
                }
            }
            assertEquals(mp.requestPoolSize(), mp.requestsAvailable());
        });
    }

    @Test
    void aStreamWaitedReceiveIsNotReapedBeforeTheStreamPassedItsWait() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            if (mp.rank() == 1) {
                try (HostStream stream = HostStream.create("gated")) {
                    MemorySegment gate = mem.asSlice(1024, 8);
                    var gateWord = dev.gdasync.gdsync.memop.MemoryWord.word32(mem, 1024, "gate");
                    MpRequest r = mp.irecv(mem.asSlice(0, 8), peer, reg);
                    mp.wait32OnStream(gateWord, 1, dev.gdasync.gdsync.memop.WaitCondition.EQ, stream);
                    mp.waitOnStream(r, stream);
                    assertEquals(RequestState.PENDING, r.state());
                    mp.barrier();
                    mp.barrier(); // the message arrived in between
                    assertEquals(0, mp.progress(), "held for the stream's wait");
                    assertFalse(r.isComplete());
                    gate.set(java.lang.foreign.ValueLayout.JAVA_INT, 0, 1);
                    stream.synchronize();
                    mp.wait(r);
                    assertEquals(77, mem.get(JAVA_LONG, 0));
                }
            } else {
                mp.barrier();
                mem.set(JAVA_LONG, 8, 77);
                mp.wait(mp.isend(mem.asSlice(8, 8), peer, reg));
                mp.barrier();
            }
        });
    }

    @Test
    void preparedSendsArePostedInBatchesAndTheStreamWaitsForThem() throws Exception {
        MpConfig cfg = Ranks.withRnrTimeout(Ranks.config(base), java.time.Duration.ofMillis(500));
        Ranks.run(2, cfg, mp -> {
            MemorySegment mem = mp.allocate(8192);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            if (mp.rank() == 1) {
                List<MpRequest> rs = new ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    rs.add(mp.irecv(mem.asSlice(8L * i, 8), peer, reg));
                }
                mp.barrier();
                mp.waitAll(rs);
                for (int i = 0; i < 6; i++) {
                    assertEquals(500 + i, mem.get(JAVA_LONG, 8L * i));
                }
            } else {
                try (HostStream stream = HostStream.create("batch")) {
                    List<MpRequest> ps = new ArrayList<>();
                    for (int i = 0; i < 6; i++) {
                        mem.set(JAVA_LONG, 4096 + 8L * i, 500 + i);
                        ps.add(mp.sendPrepare(mem.asSlice(4096 + 8L * i, 8), peer, reg));
                    }
                    assertEquals(RequestState.PREPARED, ps.get(0).state());
                    assertThrows(IllegalStateException.class, () -> mp.isendPostOnStream(ps.get(1), stream),
                            "out of prepare order");
                    assertEquals(RequestState.PREPARED, ps.get(1).state());
                    mp.barrier();
                    mp.sendPostOnStream(ps.get(0), stream);                // ring + stream waits
                    mp.isendPostOnStream(ps.get(1), stream);               // ring only
                    mp.sendPostAllOnStream(ps.subList(2, 4), stream);     // rings then waits
                    mp.isendPostAllOnStream(ps.subList(4, 6), stream);
                    mp.waitAllOnStream(List.of(ps.get(1), ps.get(4), ps.get(5)), stream);
                    assertEquals(RequestState.PENDING, ps.get(0).state());
                    stream.synchronize();
                    mp.waitAll(ps);
                    MpRequest extra = mp.sendOnStream(mem.asSlice(4096, 8), peer, reg, stream);
                    assertEquals(RequestState.PENDING, extra.state());
                    stream.synchronize();
                    assertThrows(MpException.class, () -> mp.wait(extra), "no receive posted: RNR after the timeout");
                }
            }
        });
    }
}
