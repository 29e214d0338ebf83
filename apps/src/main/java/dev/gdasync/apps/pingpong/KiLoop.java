package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;
import dev.gdasync.ki.KiExecutor;
import dev.gdasync.ki.KiLaunch;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpKiExport;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code ki}, the kernel-initiated model: a ping-pong kernel (on the GPU, or on the host KI executor's
 * thread) rings every send and waits for every receive itself, over a KI descriptor table the CPU
 * exported; the CPU prepares tables ahead and reaps what the kernels have passed.
 *
 * <p>Per iteration the initiator's kernel runs {@code send, wait(recv), compute} and the responder's
 * {@code wait(recv), compute, send}. The CPU:
 * <ul>
 * <li>posts receives up to {@link #RECV_AHEAD} ahead, so a send never finds its receive missing;</li>
 * <li>exports {@link #BATCH} iterations into a table ({@code sendPrepare}, then the sends and the receive
 *     completions into an {@link MpKiExport}) and launches the kernel over it, keeping
 *     {@link #LAUNCHES_AHEAD} launches queued: launches on one executor run back to back, as kernels on one
 *     stream, so no CPU step lies between two batches;</li>
 * <li>checks the oldest launch every {@link #POLL_PARK_NANOS} ns of sleep, joins it (a failed wait names its
 *     descriptor), and reaps its requests with {@code waitAll}.</li>
 * </ul>
 * On the host KI executor the initiator's kernel stores the clock as each wait ends ({@link KiExecutor#timesWaits()}),
 * and the CPU records those round trips after joining the launch; a GPU kernel's are not timed one by one.
 *
 * <p>With {@code --validate} each iteration of a batch has its own send and receive slot: the CPU fills the
 * sends before the launch and checks the receives after it (the kernel has no host tasks), so a batch
 * holds at most {@link #VALIDATE_BYTES} of messages, and receives are posted only one batch beyond the
 * queued launches.
 */
final class KiLoop implements Loop {
    /** Iterations per kernel launch. */
    static final int BATCH = 128;
    /** Launches kept queued: 512 iterations. */
    static final int LAUNCHES_AHEAD = 4;
    /** Receives kept posted ahead of the ping-pong. */
    static final int RECV_AHEAD = 896;
    /** How long the CPU sleeps between checks of a launch. */
    static final long POLL_PARK_NANOS = 250_000;
    /** With --validate, the message bytes one batch may hold on each side. */
    static final long VALIDATE_BYTES = 2L << 20;

    private final Pair pair;
    private final Mp mp;
    private final KiExecutor executor;
    private final boolean validate;
    private final long computeNs;
    private final long timeoutNs;
    private final String where;

    KiLoop(Pair pair, PingPongOptions options, KiExecutor executor) {
        this.pair = pair;
        this.mp = pair.mp;
        this.executor = executor;
        this.validate = options.validate();
        this.computeNs = Math.round(options.computeMicros() * 1000);
        this.timeoutNs = mp.config().waitTimeout().toNanos();
        this.where = "ki mode, rank " + pair.rank;
    }

    /**
     * @param pair the ranks
     * @param pin  whether to pin
     * @return the CPUs the rank's kernel thread should run on (rank 0 the first allowed CPU, rank 1 the
     * second, as {@link StreamLoop#cpuFor} decides), or none
     */
    static int[] cpusFor(Pair pair, boolean pin) {
        int cpu = StreamLoop.cpuFor(pair, pin);
        return cpu < 0 ? new int[0] : new int[]{cpu};
    }

    /** One launch: its requests, its iterations and its table slot. */
    private record Batch(List<MpRequest> requests, List<MpRequest> recvs, int first, int iterations, KiLaunch launch,
                         int slot, long[] waitEnds) {
    }

    @Override
    public long run(int bytes, int iters, RoundTrips trips) {
        int batch = validate ? (int) Math.max(1, Math.min(BATCH, VALIDATE_BYTES / Math.max(1, bytes))) : BATCH;
        Buffers buf = new Buffers(bytes, validate ? batch : 1);
        MemorySegment[] tables = new MemorySegment[LAUNCHES_AHEAD];
        long tableBytes = KiTableLayout.bytes(batch, batch);
        for (int i = 0; i < tables.length; i++) {
            tables[i] = mp.allocate(tableBytes);
        }
        try {
            return run(bytes, iters, batch, buf, tables, trips);
        } finally {
            for (MemorySegment t : tables) {
                mp.free(t);
            }
            buf.free();
        }
    }

    private long run(int bytes, int iters, int batch, Buffers buf, MemorySegment[] tables, RoundTrips trips) {
        boolean initiator = pair.initiator;
        // The initiator's kernel stores when each wait ended, where it runs on a host thread: one array per table slot.
        boolean timed = initiator && executor.timesWaits();
        long[][] waitEnds = new long[tables.length][timed ? batch : 0];
        ArrayDeque<MpRequest> posted = new ArrayDeque<>();
        ArrayDeque<Batch> launches = new ArrayDeque<>();
        int recvAhead = validate ? (LAUNCHES_AHEAD + 1) * batch : RECV_AHEAD;
        int recvPosted = postReceives(posted, buf, 0, 0, iters, recvAhead);
        int queued = 0;
        int reaped = 0;
        int nextSlot = 0;
        pair.barrier();
        long start = System.nanoTime();
        trips.begin(start);
        while (reaped < iters) {
            recvPosted = postReceives(posted, buf, recvPosted, reaped, iters, recvAhead);
            while (queued < iters && launches.size() < LAUNCHES_AHEAD) {
                int n = Math.min(batch, iters - queued);
                MpKiExport ki = mp.kiExport(executor);
                List<MpRequest> reqs = new ArrayList<>(2 * n);
                List<MpRequest> recvs = new ArrayList<>(n);
                for (int k = 0; k < n; k++) {
                    int i = queued + k;
                    MemorySegment out = buf.send(i);
                    if (validate) {
                        Pattern.fill(out, i, pair.rank);
                    }
                    MpRequest recv = posted.remove();
                    MpRequest send = mp.sendPrepare(out, pair.peer, buf.reg);
                    ki.addSend(send);
                    ki.addWait(recv);
                    reqs.add(recv);
                    reqs.add(send);
                    recvs.add(recv);
                }
                KiTable table = ki.writeTo(tables[nextSlot]);
                KiLaunch launch = timed ? executor.pingPong(table, n, initiator, computeNs, timeoutNs, waitEnds[nextSlot])
                        : executor.pingPong(table, n, initiator, computeNs, timeoutNs);
                launches.add(new Batch(reqs, recvs, queued, n, launch, nextSlot, waitEnds[nextSlot]));
                nextSlot = (nextSlot + 1) % tables.length;
                queued += n;
            }
            Batch b = launches.remove();
            // Sleep between checks: spinning would take a core from the kernel threads on a small machine.
            // The last launch ends the run: join it without sleeping past its end.
            if (queued < iters || !launches.isEmpty()) {
                while (!b.launch.isDone()) {
                    LockSupport.parkNanos(POLL_PARK_NANOS);
                }
            }
            b.launch.join();
            if (timed) {
                for (int k = 0; k < b.iterations; k++) {
                    trips.lapAt(b.waitEnds[k]);
                }
            }
            mp.waitAll(b.requests);
            if (validate) {
                for (int k = 0; k < b.iterations; k++) {
                    int i = b.first + k;
                    Pattern.check(buf.recv(i), i, pair.peer, -1, where);
                }
            }
            reaped += b.iterations;
        }
        long elapsed = System.nanoTime() - start;
        return initiator ? elapsed : 0;
    }

    private int postReceives(ArrayDeque<MpRequest> posted, Buffers buf, int recvPosted, int reaped, int iters, int ahead) {
        while (recvPosted < iters && recvPosted - reaped < ahead) {
            posted.add(mp.irecv(buf.recv(recvPosted), pair.peer, buf.reg));
            recvPosted++;
        }
        return recvPosted;
    }

    /**
     * The message buffers: the pair's buffers, or with --validate a ring of send and receive slots
     * (iteration i uses slot i mod slots). Receives run at most {@code LAUNCHES_AHEAD + 1} batches ahead of
     * reaping and sends {@code LAUNCHES_AHEAD}, so with {@code LAUNCHES_AHEAD + 2} batches of slots a slot is
     * reused only after the iteration that used it was reaped and checked.
     */
    private final class Buffers {
        final MpRegistration reg;
        private final int bytes;
        private final int slots;
        private final long stride;
        private final MemorySegment mem;

        Buffers(int bytes, int batch) {
            this.bytes = bytes;
            if (!validate) {
                this.slots = 1;
                this.stride = 0;
                this.mem = null;
                this.reg = pair.reg;
            } else {
                this.slots = (LAUNCHES_AHEAD + 2) * batch;
                this.stride = (bytes + 63L) & -64L;
                this.mem = mp.allocate(Math.max(64, 2 * slots * stride));
                this.reg = mp.register(mem);
            }
        }

        MemorySegment send(int i) {
            return mem == null ? pair.send(bytes) : mem.asSlice((long) (i % slots) * stride, bytes);
        }

        MemorySegment recv(int i) {
            return mem == null ? pair.recv(bytes) : mem.asSlice((slots + (long) (i % slots)) * stride, bytes);
        }

        void free() {
            if (mem != null) {
                mp.deregister(reg);
                mp.free(mem);
            }
        }
    }

    @Override
    public void close() {
        executor.close();
    }
}
