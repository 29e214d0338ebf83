package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.coll.CollectiveException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs blocking calls of MSCCL programs on the caller's thread. By default that thread runs all of the rank's
 * thread blocks in turn: each is a state machine ({@link BlockRunner}) that runs its next step when it is ready and
 * otherwise lets the next block go, so blocks that wait for one another (dependencies, messages) need no thread of
 * their own. Between passes that found nothing to do it idles like the built-in collectives (spin; yield when
 * ranks outnumber CPUs; park only after a long wait), and every 1024 idle looks it checks the clock, the job, and
 * the peers it waits for (unreachable, failed, in another call), so that a run ends in an error, never a hang.
 * With {@link MscclConfig#threads} every block gets a thread of its own and the caller's thread only watches.
 *
 * <p>On the put path (peers that cannot be mapped) the caller's thread also moves the messages
 * ({@link PutChannel#move}), as it did before; on the direct path no one needs to.
 */
final class HostInterpreter implements AutoCloseable {
    private final Mp mp;
    private final MscclConfig config;
    private final List<MscclProgram> programs;
    private final BlockThreads blockThreads;
    private final BackoffIdler idler = new BackoffIdler(BackoffPolicy.PEER_WAIT);
    private final BackoffIdler watcher = new BackoffIdler(MscclConfig.WAIT_BACKOFF);

    HostInterpreter(Mp mp, MscclConfig config, List<MscclProgram> programs) {
        this.mp = mp;
        this.config = config;
        this.programs = programs;
        this.blockThreads = new BlockThreads("msccl-r" + mp.rank() + "-tb");
    }

    /**
     * Runs one blocking call of a prepared kind.
     *
     * @param run    the kind's prepared blocks and connections
     * @param input  the call's input (in place: the one buffer)
     * @param output the call's output (in place: the one buffer)
     * @param puts   the put path's connections (when {@code run.direct} is null)
     * @param epoch  the run's number on the put path
     * @throws CollectiveException if it failed: the message names the rank, the program, why, and every block's
     *                             step, tile and what it waits for
     */
    void run(HostRun run, MemorySegment input, MpRegistration inputReg, MemorySegment output,
             MpRegistration outputReg, PutChannel puts, long epoch) {
        RunPlan plan = run.plan;
        plan.bind(input, output);
        DirectChannel direct = run.direct;
        if (direct != null) {
            if (run.exposesBuffers) {
                direct.begin(run.record, input, inputReg, output, outputReg);
            } else {
                direct.begin(run.record, null, null, null, null);
            }
        } else {
            puts.begin(epoch, run.sends, run.recvs);
        }
        Arrays.fill(run.semaphores, 0);
        boolean chained = direct != null && run.lastSeq == direct.seq() - 1;
        for (BlockRunner r : run.runners) {
            r.begin(plan, chained);
        }
        String failure = config.threads() ? runOnThreads(run, puts) : runInTurn(run, puts);
        if (failure == null && direct == null) {
            puts.finish();
        }
        if (failure != null) {
            if (direct != null) {
                direct.fail();
            }
            throw new CollectiveException("rank " + run.comm.rank() + " of " + run.comm + ": "
                    + run.record.describe(programs) + (direct != null ? " (its call #" + direct.seq() + ")" : "")
                    + ", " + run.program + ", failed: " + failure + ";" + run.positions(), null);
        }
        if (direct != null) {
            direct.end();
            run.lastSeq = direct.seq();
        }
    }

    /** @return null when the run finished, else why it failed */
    private String runInTurn(HostRun run, PutChannel puts) {
        long start = 0; // read at the first idle look: a run that never waits does not read the clock
        idler.reset();
        BlockRunner[] runners = run.runners;
        for (int looks = 1; ; ) {
            boolean progress = false;
            try {
                for (BlockRunner r : runners) {
                    while (r.advance()) {
                        progress = true;
                    }
                }
                if (run.direct == null) {
                    progress |= puts.move();
                }
            } catch (MscclRunException e) {
                return e.getMessage();
            } catch (RuntimeException e) {
                // A put that failed (the put path), or nothing expected: still the run's failure, naming the blocks.
                return "a step or a put failed: " + e;
            }
            if (run.finished()) {
                return null;
            }
            if (progress) {
                idler.reset();
                continue;
            }
            if (run.deadlocked()) {
                return "a dependency cycle: every thread block that has not finished waits for another one";
            }
            if (start == 0) {
                start = System.nanoTime();
            }
            idler.idle();
            if ((looks++ & 0x3ff) == 0) {
                String why = check(run, start, true);
                if (why != null) {
                    return why;
                }
            }
        }
    }

    /** @return null when the run finished, else why it failed */
    private String runOnThreads(HostRun run, PutChannel puts) {
        AtomicReference<Throwable> blockFailure = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Runnable> loops = new ArrayList<>();
        for (BlockRunner r : run.runners) {
            loops.add(() -> drive(r, blockFailure, stop));
        }
        long start = System.nanoTime();
        blockThreads.start(loops);
        String failure = null;
        try {
            // On the put path this thread moves the messages: it idles as the blocks do. On the direct path it only
            // watches, so it gives the CPUs to the blocks.
            BackoffIdler idle = run.direct == null ? idler : watcher;
            idle.reset();
            for (int looks = 1; ; ) {
                boolean progress;
                try {
                    progress = run.direct == null && puts.move();
                } catch (RuntimeException e) {
                    failure = "a put failed: " + e;
                    break;
                }
                if (run.finished()) {
                    break;
                }
                Throwable f = blockFailure.get();
                if (f != null) {
                    failure = f instanceof MscclRunException ? f.getMessage() : "a thread block failed: " + f;
                    break;
                }
                if (progress) {
                    idle.reset();
                    continue;
                }
                idle.idle();
                if ((looks++ & 0x3f) == 0) {
                    failure = check(run, start, false);
                    if (failure != null) {
                        break;
                    }
                }
            }
        } finally {
            stop.set(true);
            blockThreads.join();
        }
        return failure;
    }

    private static void drive(BlockRunner r, AtomicReference<Throwable> failure, AtomicBoolean stop) {
        BackoffIdler idle = new BackoffIdler(BackoffPolicy.PEER_WAIT);
        try {
            for (int looks = 0; !r.isDone(); looks++) {
                if (r.advance()) {
                    idle.reset();
                    continue;
                }
                idle.idle();
                if ((looks & 0x3f) == 0 && stop.get()) {
                    return;
                }
            }
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
    }

    /**
     * @param inTurn whether the blocks run on this thread: only then may it look again at what a block waits for
     *               (with threads the block may have moved on to wait for another peer meanwhile)
     * @return why the run cannot finish (time, the job, a peer), or null
     */
    private String check(HostRun run, long start, boolean inTurn) {
        if (mp.failure() != null) {
            return "the job failed: " + mp.failure();
        }
        for (BlockRunner r : run.runners) {
            int peer = r.awaitedPeer();
            if (peer < 0) {
                continue;
            }
            String why;
            if (run.direct != null) {
                try {
                    why = run.direct.trouble(peer, inTurn ? r::stillWaitsForPeer : () -> false, programs);
                } catch (MscclRunException e) {
                    why = e.getMessage();
                }
            } else {
                String link = mp.linkFailure(run.comm.worldRank(peer));
                why = link == null ? null : "rank " + peer + " of " + run.comm + " is unreachable: " + link;
            }
            if (why != null) {
                return why;
            }
        }
        if (System.nanoTime() - start > config.timeout().toNanos()) {
            StringBuilder b = new StringBuilder("it did not finish within " + config.timeout()
                    + " (a dependency cycle, or a peer that is gone or runs something else)");
            if (run.direct != null) {
                for (BlockRunner r : run.runners) {
                    int peer = r.awaitedPeer();
                    if (peer >= 0) {
                        b.append("; ").append(run.direct.state(peer, programs));
                    }
                }
            }
            return b.toString();
        }
        return null;
    }

    @Override
    public void close() {
        blockThreads.close();
    }
}
