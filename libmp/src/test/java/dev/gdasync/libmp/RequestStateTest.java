package dev.gdasync.libmp;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.testutil.MpExerciseMain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests make their own transitions and refuse illegal ones: each refusal names the request and its
 * state, and changes nothing (the request's state, the pool's count, what a queue holds).
 */
class RequestStateTest {
    private static final String NOT_PREPARED = ", not PREPARED: only a prepared request can be posted";

    @TempDir
    Path base;

    /** Asserts that a call is refused with exactly {@code message}, leaving {@code r} and the pool as they were. */
    private static void refused(Class<? extends Throwable> type, Executable call, Mp mp, MpRequest r, String message) {
        RequestState state = r.state();
        int available = mp.requestsAvailable();
        Throwable e = assertThrows(type, call);
        assertEquals(message, e.getMessage());
        assertEquals(state, r.state(), "the refused call changed the request's state");
        assertEquals(available, mp.requestsAvailable(), "the refused call changed the pool");
    }

    private static void refused(Executable call, Mp mp, MpRequest r, String message) {
        refused(IllegalStateException.class, call, mp, r, message);
    }

    @Test
    void aRequestIsWaitedOnOnceAndOnlyOncePosted() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            MpRequest recv = mp.irecv(mem.asSlice(0, 8), peer, reg);
            MpRequest prepared = mp.sendPrepare(mem.asSlice(64, 8), peer, reg);
            assertEquals(RequestState.PREPARED, prepared.state());

            String never = prepared.describe() + " is prepared but was never posted";
            refused(() -> mp.wait(prepared), mp, prepared, never);
            refused(() -> mp.test(prepared), mp, prepared, never);
            refused(() -> mp.progress(prepared), mp, prepared, never);
            refused(() -> mp.waitAll(recv, prepared), mp, recv, never);
            assertEquals(RequestState.PREPARED, prepared.state());
            try (HostStream s = HostStream.create("once-" + mp.rank())) {
                refused(() -> mp.waitOnStream(prepared, s), mp, prepared, never);
                mp.barrier();
                mp.isendPostOnStream(prepared, s);
                s.synchronize();
            }
            assertEquals(RequestState.PENDING_NOWAIT, prepared.state());
            mp.waitAll(prepared, recv);
            assertEquals(RequestState.RELEASED, recv.state());
            assertEquals(CompletionStatus.SUCCESS, recv.status());
            assertEquals(mp.requestPoolSize(), mp.requestsAvailable());

            String released = recv.describe() + " was already completed and released: a request is waited on once";
            refused(() -> mp.wait(recv), mp, recv, released);
            refused(() -> mp.test(recv), mp, recv, released);
            refused(() -> mp.progress(recv), mp, recv, released);
            refused(() -> mp.waitAll(List.of(recv)), mp, recv, released);
            try (HostStream s = HostStream.create("once-again-" + mp.rank())) {
                refused(() -> mp.waitOnStream(recv, s), mp, recv, released);
            }
            mp.barrier();
        });
    }

    @Test
    void onlyAPreparedRequestIsPosted() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            MpRequest recv1 = mp.irecv(mem.asSlice(0, 8), peer, reg);
            MpRequest recv2 = mp.irecv(mem.asSlice(8, 8), peer, reg);
            mp.barrier();
            try (HostStream s = HostStream.create("post-" + mp.rank())) {
                MpRequest p = mp.sendPrepare(mem.asSlice(64, 8), peer, reg);
                MpRequest q = mp.sendPrepare(mem.asSlice(72, 8), peer, reg);
                mp.isendPostOnStream(p, s);
                String twice = p.describe() + " is PENDING_NOWAIT" + NOT_PREPARED;
                refused(() -> mp.isendPostOnStream(p, s), mp, p, twice);
                refused(() -> mp.sendPostOnStream(p, s), mp, p, twice);
                refused(() -> mp.iputPostOnStream(p, s), mp, p, twice);
                refused(() -> mp.isendPostOnStream(recv1, s), mp, recv1, recv1.describe() + " is PENDING_NOWAIT" + NOT_PREPARED);
                // A batch with one request that cannot be posted posts none of it.
                refused(() -> mp.isendPostAllOnStream(List.of(q, p), s), mp, q, twice);
                refused(() -> mp.sendPostAllOnStream(List.of(q, p), s), mp, q, twice);
                assertEquals(RequestState.PREPARED, q.state());
                mp.sendPostOnStream(q, s);
                assertEquals(RequestState.PENDING, q.state(), "posted, and its stream waits for it");
                s.synchronize();
                mp.waitAll(p, q, recv1, recv2);
                refused(() -> mp.isendPostOnStream(p, s), mp, p, p.describe() + " is RELEASED" + NOT_PREPARED);
            }
            assertEquals(mp.requestPoolSize(), mp.requestsAvailable());
            mp.barrier();
        });
    }

    @Test
    void aStreamWaitsOnceForACompletion() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            try (HostStream s = HostStream.create("sw-" + mp.rank())) {
                MpRequest recv = mp.irecv(mem.asSlice(0, 8), peer, reg);
                mp.waitOnStream(recv, s);
                assertEquals(RequestState.PENDING, recv.state());
                String twice = recv.describe() + " is already waited on by a stream";
                refused(() -> mp.waitOnStream(recv, s), mp, recv, twice);
                refused(() -> mp.waitAllOnStream(List.of(recv), s), mp, recv, twice);
                MpDescQueue dq = mp.descQueue();
                refused(() -> dq.addWaitRecv(recv), mp, recv, twice);
                assertEquals(0, dq.size());
                refused(() -> mp.kiExport().addWait(recv), mp, recv, twice);

                // A completion the CPU reaped already may still be waited on by a stream, once.
                MpRequest early = mp.irecv(mem.asSlice(8, 8), peer, reg);
                mp.barrier();
                MpRequest send1 = mp.isend(mem.asSlice(64, 8), peer, reg);
                MpRequest send2 = mp.isend(mem.asSlice(72, 8), peer, reg);
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (mp.progress(early) == 0) {
                    assertTrue(System.nanoTime() < deadline, "the second message did not arrive");
                }
                assertEquals(RequestState.COMPLETE, early.state());
                mp.waitOnStream(early, s);
                assertEquals(RequestState.COMPLETE, early.state(), "a stream's wait does not undo a completion");
                refused(() -> mp.waitOnStream(early, s), mp, early,
                        "the completion of " + early.describe() + " is already waited on");
                s.synchronize();
                mp.waitAll(recv, early, send1, send2);
            }
            assertEquals(mp.requestPoolSize(), mp.requestsAvailable());
            mp.barrier();
        });
    }

    @Test
    void aNowaitPutIsNeverWaitedOnAndRetiresItself() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment exposed = mp.allocate(4096);
            MpWindow win = mp.windowCreate(exposed);
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            MpRequest put = mp.iput(mem.asSlice(0, 8), reg, peer, 0, win, PutFlags.NOWAIT);
            assertTrue(put.isNowait());
            assertEquals(RequestState.PENDING_NOWAIT, put.state(), "nothing reaped yet");
            String nowait = put.describe() + " is a NOWAIT put: it writes no completion and releases itself once executed";
            refused(() -> mp.wait(put), mp, put, nowait);
            refused(() -> mp.test(put), mp, put, nowait);
            refused(() -> mp.progress(put), mp, put, nowait);
            try (HostStream s = HostStream.create("nw-" + mp.rank())) {
                refused(() -> mp.waitOnStream(put, s), mp, put, nowait);

                MpRequest prepared = mp.putPrepare(mem.asSlice(8, 8), reg, peer, 8, win, PutFlags.NOWAIT);
                MpDescQueue dq = mp.descQueue().addSend(prepared);
                refused(() -> dq.addWaitSend(prepared), mp, prepared,
                        prepared.describe() + " is a NOWAIT put: it writes no completion to wait for");
                assertEquals(1, dq.size());
                dq.postOnStream(s);
                assertEquals(RequestState.PENDING_NOWAIT, prepared.state());
                s.synchronize();
                // Reaping retires both once the NIC executed them: every NOWAIT request has an end.
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (mp.requestsAvailable() != mp.requestPoolSize()) {
                    assertTrue(System.nanoTime() < deadline, "the NOWAIT puts did not retire");
                    mp.progress();
                }
                for (MpRequest r : List.of(put, prepared)) {
                    assertEquals(RequestState.RELEASED, r.state());
                    assertEquals(CompletionStatus.SUCCESS, r.status());
                }
                refused(() -> mp.wait(put), mp, put,
                        put.describe() + " was already completed and released: a request is waited on once");
            }
            mp.barrier();
            mp.windowDestroy(win);
        });
    }

    @Test
    void aPartOfARequestIsInOneQueueOrExportAtATime() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            MpRequest recv = mp.irecv(mem.asSlice(0, 8), peer, reg);
            mp.barrier();
            MpRequest p = mp.sendPrepare(mem.asSlice(64, 8), peer, reg);
            MpDescQueue dq1 = mp.descQueue().addSend(p);
            MpDescQueue dq2 = mp.descQueue();
            MpKiExport ki = mp.kiExport();
            refused(() -> dq1.addSend(p), mp, p, p.describe() + " is already in this queue");
            refused(() -> dq2.addSend(p), mp, p, p.describe() + " is already in another queue or KI export");
            refused(() -> ki.addSend(p), mp, p, p.describe() + " is already in a descriptor queue or KI export");
            refused(() -> ki.addTemplate(p), mp, p, p.describe() + " is already in a descriptor queue or KI export");
            dq1.addWaitSend(p);
            refused(() -> dq1.addWaitSend(p), mp, p, "the completion of " + p.describe() + " is already in this queue");
            refused(() -> dq2.addWaitSend(p), mp, p, p.describe() + " is prepared but was never posted");
            assertEquals(2, dq1.size());
            assertEquals(0, dq2.size());

            // Cleared, both parts are free again.
            dq1.clear();
            dq2.addSend(p).addWaitSend(p);
            refused(() -> dq1.addSend(p), mp, p, p.describe() + " is already in another queue or KI export");
            try (HostStream s = HostStream.create("stage-" + mp.rank())) {
                dq2.postOnStream(s);
                assertEquals(RequestState.PENDING, p.state(), "rung, then waited on, by the stream");
                assertEquals(0, dq2.size());
                // Posted with its queue, the request is in no queue any more.
                refused(() -> dq1.addWaitSend(p), mp, p, p.describe() + " is already waited on by a stream");
                s.synchronize();
                mp.waitAll(p, recv);
            }
            assertEquals(mp.requestPoolSize(), mp.requestsAvailable());
            mp.barrier();
        });
    }

    @Test
    void aQueueWhoseRequestsMovedOnIsRefusedWhole() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            MpRequest recv1 = mp.irecv(mem.asSlice(0, 8), peer, reg);
            MpRequest recv2 = mp.irecv(mem.asSlice(8, 8), peer, reg);
            MpRequest recv3 = mp.irecv(mem.asSlice(16, 8), peer, reg);
            mp.barrier();
            try (HostStream s = HostStream.create("moved-" + mp.rank())) {
                // A send queued, then posted directly: the queue cannot post it again.
                MpRequest p = mp.sendPrepare(mem.asSlice(64, 8), peer, reg);
                MpDescQueue dq = mp.descQueue().addSend(p).addWaitRecv(recv1);
                mp.isendPostOnStream(p, s);
                refused(() -> dq.postOnStream(s), mp, p,
                        p.describe() + " is PENDING_NOWAIT: cannot post (PREPARED → PENDING_NOWAIT)");
                assertEquals(RequestState.PENDING_NOWAIT, recv1.state(), "nothing of the refused queue was posted");
                assertEquals(2, dq.size());
                dq.clear();

                // A receive whose wait is queued, then waited for and released by the CPU: it is dead.
                MpDescQueue late = mp.descQueue().addWaitRecv(recv1);
                s.synchronize();
                mp.wait(recv1);
                refused(() -> late.postOnStream(s), mp, recv1,
                        recv1.describe() + " is RELEASED: cannot wait on a stream (PENDING_NOWAIT → PENDING)");
                assertEquals(1, late.size());
                late.clear();

                // A KI export is written once.
                MpKiExport ki = mp.kiExport();
                ki.addWait(recv2);
                KiTable table = ki.writeTo(mp.allocate(ki.byteSize()));
                assertEquals(RequestState.PENDING, recv2.state());
                refused(() -> ki.writeTo(mp.allocate(ki.byteSize())), mp, recv2, "the completion wait of "
                        + recv2.describe() + " is in no descriptor queue or KI export: it was posted, written or cleared already");
                MpRequest q = mp.isendOnStream(mem.asSlice(72, 8), peer, reg, s);
                MpRequest r = mp.isendOnStream(mem.asSlice(80, 8), peer, reg, s);
                s.synchronize();
                MpExerciseMain.runKernel(table, Duration.ofSeconds(20));
                mp.waitAll(recv2, recv3, p, q, r);
            }
            assertEquals(mp.requestPoolSize(), mp.requestsAvailable());
            mp.barrier();
        });
    }

    @Test
    void aRequestOfAnotherMpIsRefusedEverywhere() throws Exception {
        List<MpRequest> shared = new ArrayList<>();
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            MpRequest recv = mp.irecv(mem.asSlice(0, 8), peer, reg);
            MpRequest prepared = mp.sendPrepare(mem.asSlice(64, 8), peer, reg);
            synchronized (shared) {
                shared.add(recv);
                shared.add(prepared);
            }
            mp.barrier();
            MpRequest theirRecv;
            MpRequest theirPrepared;
            synchronized (shared) {
                int at = shared.get(0) == recv ? 2 : 0;
                theirRecv = shared.get(at);
                theirPrepared = shared.get(at + 1);
            }
            // Between the barriers, the peer leaves its requests as they are.
            String recvTheirs = theirRecv + " belongs to another Mp";
            String preparedTheirs = theirPrepared + " belongs to another Mp";
            try (HostStream s = HostStream.create("other-" + mp.rank())) {
                Class<IllegalArgumentException> iae = IllegalArgumentException.class;
                refused(iae, () -> mp.wait(theirRecv), mp, theirRecv, recvTheirs);
                refused(iae, () -> mp.test(theirRecv), mp, theirRecv, recvTheirs);
                refused(iae, () -> mp.progress(theirRecv), mp, theirRecv, recvTheirs);
                refused(iae, () -> mp.waitAll(recv, theirRecv), mp, recv, recvTheirs);
                refused(iae, () -> mp.waitOnStream(theirRecv, s), mp, theirRecv, recvTheirs);
                refused(iae, () -> mp.descQueue().addWaitRecv(theirRecv), mp, theirRecv, recvTheirs);
                refused(iae, () -> mp.kiExport().addWait(theirRecv), mp, theirRecv, recvTheirs);
                refused(iae, () -> mp.isendPostOnStream(theirPrepared, s), mp, theirPrepared, preparedTheirs);
                refused(iae, () -> mp.sendPostAllOnStream(List.of(prepared, theirPrepared), s), mp, prepared, preparedTheirs);
                refused(iae, () -> mp.descQueue().addSend(theirPrepared), mp, theirPrepared, preparedTheirs);
                refused(iae, () -> mp.kiExport().addSend(theirPrepared), mp, theirPrepared, preparedTheirs);
                assertEquals(RequestState.PREPARED, prepared.state());
                mp.barrier();
                mp.isendPostOnStream(prepared, s);
                s.synchronize();
            }
            mp.waitAll(prepared, recv);
            assertEquals(mp.requestPoolSize(), mp.requestsAvailable());
        });
    }

    @Test
    void anExhaustedPoolRefusesPreciselyAndTakesNothing() throws Exception {
        Ranks.run(2, Ranks.config(base).withRequestPool(4), mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            if (mp.rank() == 1) {
                List<MpRequest> rs = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    rs.add(mp.irecv(mem.asSlice(8L * i, 8), peer, reg));
                }
                assertEquals(0, mp.requestsAvailable());
                String exhausted = "request pool exhausted: all 4 requests are outstanding; wait for some"
                        + " (or raise MpConfig.requestPool)";
                refused(() -> mp.irecv(mem.asSlice(64, 8), peer, reg), mp, rs.get(0), exhausted);
                refused(() -> mp.sendPrepare(mem.asSlice(64, 8), peer, reg), mp, rs.get(0), exhausted);
                mp.barrier();
                mp.waitAll(rs);
            } else {
                mp.barrier();
                for (int i = 0; i < 4; i++) {
                    mp.wait(mp.isend(mem.asSlice(64, 8), peer, reg));
                }
            }
            assertEquals(4, mp.requestsAvailable());
        });
    }
}
