package dev.gdasync.libmp.testutil;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.ki.kernels.KiCopyWork;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpDescQueue;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.MpKiExport;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;
import dev.gdasync.libmp.PutFlags;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.comm.Comm;
import dev.gdasync.libmp.comm.Datatype;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A rank of the launcher-driven libmp tests: {@code exercise} calls every Mp and Comm operation across all
 * ranks with payloads checked byte for byte and prints "OK"; {@code victim K} sets up, lets rank K be
 * killed, and has the others report the failure of their requests to it; {@code kitimeout} has rank 0's
 * KI kernel wait for a message that never comes.
 */
public final class MpExerciseMain {
    private static final int SLOT = 4096;

    private MpExerciseMain() {
    }

    /**
     * @param args {@code exercise}, {@code victim K}, or {@code traffic SECONDS}
     * @throws Exception a failure, which makes the rank exit non-zero
     */
    public static void main(String[] args) throws Exception {
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(Duration.ofSeconds(30));
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot, cfg)) {
            if (args[0].equals("kitimeout")) {
                kiTimeout(mp);
                return;
            }
            if (args[0].equals("victim")) {
                victim(mp, Integer.parseInt(args[1]));
                return;
            }
            if (args[0].equals("traffic")) {
                traffic(mp, Long.parseLong(args[1]));
                return;
            }
            new MpExerciseMain().exercise(mp);
            // Every rank has connected by now, so every rank of the job is in the CPU share registry.
            System.out.println(dev.gdasync.gdsync.concurrent.CpuShare.describe());
            System.out.println("OK rank " + mp.rank() + " of " + mp.size());
        }
    }

    private static void pattern(MemorySegment s, long seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(JAVA_BYTE, i, (byte) (seed * 31 + i * 13 + 7));
        }
    }

    private static void check(MemorySegment s, long seed, String what) {
        for (long i = 0; i < s.byteSize(); i++) {
            if (s.get(JAVA_BYTE, i) != (byte) (seed * 31 + i * 13 + 7)) {
                throw new AssertionError(what + ": byte " + i + " is wrong");
            }
        }
    }

    private static void require(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    private void exercise(Mp mp) throws Exception {
        int n = mp.size();
        int me = mp.rank();
        int next = (me + 1) % n;
        int prev = (me + n - 1) % n;
        MemorySegment mem = mp.allocate(64L * SLOT);
        MpRegistration reg = mp.register(mem);

        // Two-sided on the CPU: everybody to everybody, then a gather/scatter to the next rank.
        List<MpRequest> rs = new ArrayList<>();
        for (int p = 0; p < n; p++) {
            if (p != me) {
                rs.add(mp.irecv(mem.asSlice((long) p * SLOT, SLOT), p, reg));
            }
        }
        mp.barrier();
        for (int p = 0; p < n; p++) {
            if (p != me) {
                MemorySegment out = mem.asSlice((long) (16 + p) * SLOT, 1000 + p);
                pattern(out, me * 100L + p);
                rs.add(mp.isend(out, p, reg));
            }
        }
        mp.waitAll(rs);
        for (int p = 0; p < n; p++) {
            if (p != me) {
                check(mem.asSlice((long) p * SLOT, 1000 + me), p * 100L + me, "isend/irecv from rank " + p);
            }
        }
        MpRequest scatter = mp.irecvv(List.of(mem.asSlice(32L * SLOT, 10), mem.asSlice(32L * SLOT + 100, 90)), prev, reg);
        mp.barrier();
        MemorySegment g1 = mem.asSlice(33L * SLOT, 60);
        MemorySegment g2 = mem.asSlice(33L * SLOT + 500, 40);
        pattern(g1, me);
        pattern(g2, me + 1000);
        MpRequest gather = mp.isendv(List.of(g1, g2), next, reg);
        while (mp.progress(scatter, gather) < 2) {
            Thread.onSpinWait();
        }
        require(mp.test(scatter) && mp.test(gather), "test() after progress() shows both complete");
        MemorySegment got = MemorySegment.ofArray(new byte[100]);
        MemorySegment.copy(mem, 32L * SLOT, got, 0, 10);
        MemorySegment.copy(mem, 32L * SLOT + 100, got, 10, 90);
        check(got.asSlice(0, 60), prev, "isendv/irecvv first buffer");
        check(got.asSlice(60, 40), prev + 1000, "isendv/irecvv second buffer");

        try (HostStream stream = HostStream.create("exercise-" + me)) {
            onStream(mp, reg, mem, stream, next, prev);
            oneSided(mp, stream, next, prev);
            descriptorQueueAndKi(mp, reg, mem, stream, next, prev);
            comm(mp, stream, next, prev);
        }
        mp.barrier();
        mp.progress();
        require(mp.requestsAvailable() == mp.requestPoolSize(), "every request is back in the pool: "
                + mp.requestsAvailable() + " of " + mp.requestPoolSize());
    }

    private static void onStream(Mp mp, MpRegistration reg, MemorySegment mem, HostStream stream, int next, int prev) {
        // Each rank sends five messages to the next through every stream form, receiving five from the previous.
        List<MpRequest> recvs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            recvs.add(mp.irecv(mem.asSlice((40L + i) * SLOT, 64), prev, reg));
        }
        mp.barrier();
        List<MemorySegment> outs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            MemorySegment out = mem.asSlice((45L + i) * SLOT, 64);
            pattern(out, mp.rank() * 10L + i);
            outs.add(out);
        }
        List<MpRequest> sends = new ArrayList<>();
        sends.add(mp.isendOnStream(outs.get(0), next, reg, stream));
        sends.add(mp.sendOnStream(outs.get(1), next, reg, stream));
        MpRequest a = mp.sendPrepare(outs.get(2), next, reg);
        MpRequest b = mp.sendPrepare(outs.get(3), next, reg);
        MpRequest c = mp.sendPrepare(outs.get(4), next, reg);
        mp.sendPostOnStream(a, stream);
        mp.sendPostAllOnStream(List.of(b), stream);
        mp.isendPostAllOnStream(List.of(c), stream);
        MpRequest late = mp.sendPrepare(outs.get(4), next, reg);
        mp.isendPostOnStream(late, stream); // its receive is posted only later: the NIC retries until then
        mp.waitOnStream(sends.get(0), stream);
        mp.waitAllOnStream(recvs, stream);
        sends.addAll(List.of(a, b, c));
        stream.synchronize();
        mp.waitAll(recvs);
        mp.waitAll(sends);
        for (int i = 0; i < 5; i++) {
            check(mem.asSlice((40L + i) * SLOT, 64), mp.rank() == 0 ? (mp.size() - 1) * 10L + i : (mp.rank() - 1) * 10L + i,
                    "stream message " + i);
        }
        // The extra send lands in a receive posted now.
        MpRequest extra = mp.irecv(mem.asSlice(50L * SLOT, 64), prev, reg);
        mp.waitAll(extra, late);
        check(mem.asSlice(50L * SLOT, 64), prev * 10L + 4, "the late stream message");
        mp.barrier();
    }

    private static void oneSided(Mp mp, HostStream stream, int next, int prev) {
        int me = mp.rank();
        MemorySegment exposed = mp.allocate(16L * SLOT);
        MpWindow win = mp.windowCreate(exposed);
        MemorySegment local = mp.allocate(16L * SLOT);
        MpRegistration reg = mp.register(local);
        pattern(exposed.asSlice(0, SLOT), me);
        mp.barrier();
        // get from prev, put to next (plain, INLINE, NOWAIT), on the CPU and on the stream.
        MpRequest get = mp.iget(local.asSlice(0, SLOT), reg, prev, 0, win);
        mp.wait(get);
        check(local.asSlice(0, SLOT), prev, "iget from rank " + prev);
        MemorySegment p1 = local.asSlice(SLOT, 512);
        pattern(p1, 500 + me);
        mp.wait(mp.iput(p1, reg, next, SLOT, win, 0));
        MemorySegment p2 = local.asSlice(2L * SLOT, 64);
        pattern(p2, 600 + me);
        mp.wait(mp.iput(p2, reg, next, 2L * SLOT, win, PutFlags.INLINE));
        MemorySegment p3 = local.asSlice(3L * SLOT, 64);
        pattern(p3, 700 + me);
        mp.iput(p3, reg, next, 3L * SLOT, win, PutFlags.NOWAIT);
        MemorySegment p4 = local.asSlice(4L * SLOT, 128);
        pattern(p4, 800 + me);
        MpRequest sput = mp.iputOnStream(p4, reg, next, 4L * SLOT, win, 0, stream);
        MemorySegment p5 = local.asSlice(5L * SLOT, 128);
        pattern(p5, 900 + me);
        MpRequest prep = mp.putPrepare(p5, reg, next, 5L * SLOT, win, 0);
        mp.iputPostOnStream(prep, stream);
        MemorySegment p6 = local.asSlice(6L * SLOT, 32);
        pattern(p6, 950 + me);
        MpRequest prepAll = mp.putPrepare(p6, reg, next, 6L * SLOT, win, PutFlags.INLINE);
        mp.iputPostAllOnStream(List.of(prepAll), stream);
        MpRequest sget = mp.igetOnStream(local.asSlice(7L * SLOT, SLOT), reg, prev, 0, win, stream);
        mp.waitAllOnStream(List.of(sput, prep, prepAll, sget), stream);
        stream.synchronize();
        mp.waitAll(sput, prep, prepAll, sget);
        check(local.asSlice(7L * SLOT, SLOT), prev, "igetOnStream from rank " + prev);
        // A flag after the data: the next rank's stream waits for it (GEQ, AND, EQ), then writes a word.
        local.set(JAVA_INT, 8L * SLOT, 6);
        mp.wait(mp.iput(local.asSlice(8L * SLOT, 4), reg, next, 8L * SLOT, win, PutFlags.INLINE));
        MemoryWord flag = MemoryWord.word32(exposed, 8L * SLOT, "flag");
        MemoryWord done = MemoryWord.word32(local, 9L * SLOT, "done");
        mp.wait32OnStream(flag, 6, WaitCondition.GEQ, stream);
        mp.wait32OnStream(flag, 2, WaitCondition.AND, stream);
        mp.wait32OnStream(flag, 6, WaitCondition.EQ, stream);
        mp.write32OnStream(done, 1, stream);
        stream.synchronize();
        mp.wait32(done, 1, WaitCondition.EQ);
        mp.barrier();
        check(exposed.asSlice(SLOT, 512), 500 + prev, "iput");
        check(exposed.asSlice(2L * SLOT, 64), 600 + prev, "INLINE iput");
        check(exposed.asSlice(3L * SLOT, 64), 700 + prev, "NOWAIT iput");
        check(exposed.asSlice(4L * SLOT, 128), 800 + prev, "iputOnStream");
        check(exposed.asSlice(5L * SLOT, 128), 900 + prev, "putPrepare + iputPostOnStream");
        check(exposed.asSlice(6L * SLOT, 32), 950 + prev, "iputPostAllOnStream");
        mp.windowDestroy(win);
    }

    private static void descriptorQueueAndKi(Mp mp, MpRegistration reg, MemorySegment mem, HostStream stream, int next,
                                             int prev) throws InterruptedException {
        MemoryWord word = MemoryWord.word32(mem, 60L * SLOT, "dq word");
        MpRequest recv = mp.irecv(mem.asSlice(51L * SLOT, 64), prev, reg);
        MemorySegment out = mem.asSlice(52L * SLOT, 64);
        pattern(out, 2000 + mp.rank());
        MpRequest send = mp.sendPrepare(out, next, reg);
        mp.barrier();
        MpDescQueue dq = mp.descQueue().addWriteValue32(word, 3).addWaitValue32(word, 3, WaitCondition.EQ)
                .addSend(send).addWaitSend(send).addWaitRecv(recv);
        dq.postOnStream(stream);
        stream.synchronize();
        mp.waitAll(send, recv);
        check(mem.asSlice(51L * SLOT, 64), 2000 + prev, "descriptor queue message");

        MpRequest kiRecv = mp.irecv(mem.asSlice(53L * SLOT, 64), prev, reg);
        MemorySegment kiOut = mem.asSlice(54L * SLOT, 64);
        pattern(kiOut, 3000 + mp.rank());
        MpRequest kiSend = mp.sendPrepare(kiOut, next, reg);
        MpKiExport ki = mp.kiExport();
        ki.addSend(kiSend);
        ki.addWait(kiSend);
        ki.addWait(kiRecv);
        KiTable table = ki.writeTo(mp.allocate(ki.byteSize()));
        mp.barrier();
        runKernel(table, Duration.ofSeconds(30));
        mp.waitAll(kiSend, kiRecv);
        check(mem.asSlice(53L * SLOT, 64), 3000 + prev, "KI message");
    }

    /**
     * Runs a table as a generic kernel on the host KI executor: the exchange template with one pack block
     * and no work rings every send in order, its receiver passes every wait and releases each CQE.
     *
     * @param t       the table
     * @param timeout the bound of each wait
     * @throws dev.gdasync.ki.KiException naming the descriptor if a wait timed out
     */
    public static void runKernel(KiTable t, Duration timeout) {
        try (HostKiExecutor executor = HostKiExecutor.create("mpexercise-ki")) {
            KiCopyWork none = new KiCopyWork(List.of(), List.of(), null, 0, 0);
            executor.exchange(t, new KiExchange(1, 0, none), timeout.toNanos()).join();
        }
    }

    /**
     * Rank 0 exports the wait for a message rank 1 never sends and runs it on the host KI executor with a
     * short timeout; it prints the executor's error. Rank 1 only meets it at the end.
     */
    private static void kiTimeout(Mp mp) {
        if (mp.rank() == 0) {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            MpRequest never = mp.irecv(mem.asSlice(0, 64), 1, reg);
            MpKiExport ki = mp.kiExport();
            ki.addWait(never);
            KiTable table = ki.writeTo(mp.allocate(ki.byteSize()));
            long t0 = System.nanoTime();
            try {
                runKernel(table, Duration.ofMillis(300));
                System.out.println("KI did not fail");
            } catch (KiException e) {
                System.out.println("KI FAILED after " + (System.nanoTime() - t0) / 1_000_000 + " ms: " + e.getMessage());
            }
        }
    }

    private static void comm(Mp mp, HostStream stream, int next, int prev) {
        try (Comm comm = Comm.init(mp)) {
            MemorySegment mem = mp.allocate(8L * SLOT);
            for (int step = 0; step < 3; step++) {
                MemorySegment in = mem.asSlice(0, 512);
                MemorySegment out = mem.asSlice(SLOT, 512);
                pattern(out, 4000 + mp.rank() * 10L + step);
                MpRequest r = comm.irecv(in, 64, Datatype.DOUBLE, prev);
                if (step % 2 == 0) {
                    comm.sendReady(prev);
                    comm.waitReady(next);
                    comm.isend(out, 64, Datatype.DOUBLE, next);
                    comm.wait(r);
                } else {
                    comm.sendReadyOnStream(prev, stream);
                    comm.waitReadyOnStream(next, stream);
                    comm.isendOnStream(out, 64, Datatype.DOUBLE, next, stream);
                    comm.waitAllOnStream(List.of(r), stream);
                    stream.synchronize();
                }
                comm.flush();
                check(in, 4000 + prev * 10L + step, "comm halo step " + step);
            }
        }
    }

    /**
     * Ranks 0 and 1 ping-pong checked 64 KiB messages for up to {@code seconds}, printing {@code ready <pid>}
     * after the first hundred round trips; a failure (a cut link, a dead peer) prints how long it took to be
     * noticed and exits 1. Running to the end prints {@code traffic done}.
     */
    private static void traffic(Mp mp, long seconds) {
        int peer = 1 - mp.rank();
        MemorySegment mem = mp.allocate(2 * 65536);
        MpRegistration reg = mp.register(mem);
        MemorySegment out = mem.asSlice(0, 65536);
        MemorySegment in = mem.asSlice(65536, 65536);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long lastProgress = System.nanoTime();
        try {
            for (long i = 0; System.nanoTime() < end; i++) {
                MpRequest r = mp.irecv(in, peer, reg);
                if (mp.rank() == 0) {
                    pattern(out, i);
                    mp.wait(mp.isend(out, peer, reg));
                    mp.wait(r);
                    check(in, i + 1_000_000, "reply " + i);
                } else {
                    mp.wait(r);
                    check(in, i, "message " + i);
                    pattern(out, i + 1_000_000);
                    mp.wait(mp.isend(out, peer, reg));
                }
                lastProgress = System.nanoTime();
                if (i == 100) {
                    System.out.println("ready " + ProcessHandle.current().pid());
                }
            }
            System.out.println("traffic done");
        } catch (MpException e) {
            System.out.println("failed clearly after " + (System.nanoTime() - lastProgress) / 1_000_000 + " ms: "
                    + e.getMessage());
            System.exit(1);
        }
    }

    /** Every rank but {@code victim} posts receives from it; the victim is killed by the test. */
    private static void victim(Mp mp, int victim) throws InterruptedException {
        MemorySegment mem = mp.allocate(1 << 20);
        MpRegistration reg = mp.register(mem);
        if (mp.rank() == victim) {
            System.out.println("ready " + ProcessHandle.current().pid());
            Thread.sleep(60_000);
            return;
        }
        MpRequest r = mp.irecv(mem.asSlice(0, 1024), victim, reg);
        System.out.println("ready " + ProcessHandle.current().pid());
        long start = System.nanoTime();
        try {
            mp.wait(r);
            System.out.println("unexpected: the receive from the victim completed");
        } catch (MpException e) {
            System.out.println("failed clearly after " + (System.nanoTime() - start) / 1_000_000 + " ms: " + e.getMessage());
        }
        System.exit(1);
    }
}
