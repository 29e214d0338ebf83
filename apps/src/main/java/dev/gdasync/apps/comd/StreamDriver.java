package dev.gdasync.apps.comd;

import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpDescQueue;
import dev.gdasync.libmp.MpRequest;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code sa}, the stream-asynchronous model: the whole time step runs on a host stream. The CPU queues each piece of
 * computation as a host task and each axis exchange as a pack task, one batch of descriptors (ring both sends, wait
 * for both receives and both send completions) and an unpack task; it posts the receives a round ahead
 * ({@link MpSlots}), prepares the sends (at the face's capacity: the stream packs later, so the size in the message
 * header is the true one) and reaps the requests once the stream passed them. It queues a whole print interval
 * before it synchronizes (at most {@link #ROUNDS_AHEAD} rounds, then it reaps), so it is off the stream's critical
 * path.
 */
final class StreamDriver implements StepDriver {
    /** Rounds the CPU queues ahead before it waits for the stream and reaps. */
    static final int ROUNDS_AHEAD = 16;
    private static final long POLL_PARK_NANOS = 50_000;

    private final Mp mp;
    private final MpSlots slots;
    private final HostStream stream;
    private final MpDescQueue queue;
    private final LocalExchange local;
    private final Timers timers = new Timers();
    private final List<MpRequest> pending = new ArrayList<>();
    private int roundsQueued;

    StreamDriver(Mp mp, List<Halo> halos, int rounds) {
        this.mp = mp;
        this.slots = new MpSlots(mp, halos, rounds);
        this.stream = HostStream.create("comd-sa-rank" + mp.rank());
        this.queue = mp.descQueue();
        this.local = LocalExchange.forHalos(halos);
    }

    @Override
    public void beginRound() {
        if (roundsQueued >= ROUNDS_AHEAD) {
            sync();
        }
        slots.beginRound();
        roundsQueued++;
    }

    @Override
    public void run(Phase phase, Runnable task) {
        stream.launch(() -> {
            long t0 = System.nanoTime();
            task.run();
            timers.add(phase, System.nanoTime() - t0);
        });
    }

    @Override
    public void exchange(Halo halo, int axis) {
        MpSlots.Slot s = slots.slot(halo, axis);
        if (s == null) {
            stream.launch(() -> {
                long t0 = System.nanoTime();
                local.exchange(halo, axis);
                timers.add(Phase.EXCHANGE, System.nanoTime() - t0);
            });
            return;
        }
        int par = slots.round() & 1;
        int faceM = 2 * axis;
        int faceP = faceM + 1;
        MpRequest recvP = s.postedP[par];
        MpRequest recvM = s.postedM[par];
        MpRequest sendM = mp.sendPrepare(s.sendM, s.nbrM, slots.reg(s));
        MpRequest sendP = mp.sendPrepare(s.sendP, s.nbrP, slots.reg(s));
        MemorySegment inM = s.recvM[par];
        MemorySegment inP = s.recvP[par];
        long[] start = new long[1];
        stream.launch(() -> {
            start[0] = System.nanoTime();
            halo.load(faceM, s.sendM);
            halo.load(faceP, s.sendP);
        });
        queue.addSend(sendM).addSend(sendP).addWaitRecv(recvP).addWaitRecv(recvM).addWaitSend(sendM).addWaitSend(sendP);
        queue.postOnStream(stream);
        stream.launch(() -> {
            halo.unload(faceM, inM);
            halo.unload(faceP, inP);
            timers.add(Phase.EXCHANGE, System.nanoTime() - start[0]);
        });
        pending.addAll(List.of(recvP, recvM, sendM, sendP));
    }

    @Override
    public void sync() {
        Event done = stream.record();
        // Sleep between looks: on a small machine a spinning CPU thread would take a core from the stream.
        while (!done.isDone()) {
            LockSupport.parkNanos(POLL_PARK_NANOS);
        }
        done.synchronize();
        if (!pending.isEmpty()) {
            mp.waitAll(pending);
            pending.clear();
        }
        roundsQueued = 0;
    }

    @Override
    public Timers timers() {
        return timers;
    }

    @Override
    public void close() {
        stream.close();
        slots.close();
    }
}
