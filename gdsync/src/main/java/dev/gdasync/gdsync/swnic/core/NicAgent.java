package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.concurrent.BackoffIdler;

import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * The software NIC's agent: one thread per NIC that plays the NIC hardware's part for work nobody
 * rang by a call.
 *
 * <p>It polls every queue pair's doorbell record for work rung by plain stores (a GPU, a kernel
 * thread), retries sends waiting for the peer to post a receive, and every liveness interval checks
 * that peers are alive and their queue pairs healthy. It idles adaptively: eagerly (spin, yield,
 * parks of at most tens of microseconds) while a plain-store ring is expected or a send is stalled,
 * otherwise backing off to parks of up to a millisecond, so an idle NIC costs almost no CPU and a
 * doorbell is still noticed within that bound.
 */
final class NicAgent implements Runnable {
    private final NicCore nic;
    private final long livenessNanos;
    private final Thread thread;
    private volatile SwQueuePair[] queuePairs = new SwQueuePair[0];
    private volatile boolean running = true;

    NicAgent(NicCore nic) {
        this.nic = nic;
        this.livenessNanos = nic.settings().livenessInterval().toNanos();
        this.thread = Thread.ofPlatform().name("gdasync-agent-" + nic.name()).daemon().unstarted(this);
    }

    void start() {
        thread.start();
    }

    synchronized void add(SwQueuePair qp) {
        SwQueuePair[] a = Arrays.copyOf(queuePairs, queuePairs.length + 1);
        a[a.length - 1] = qp;
        queuePairs = a;
    }

    /**
     * Runs plain-store rings on the calling thread (not the agent's): see
     * {@link NicCore#progressStoreRings()}.
     *
     * @return how many queue pairs had work run
     */
    int runStoreRings() {
        int n = 0;
        for (SwQueuePair qp : queuePairs) {
            n += qp.runStoreRing();
        }
        return n;
    }

    /**
     * Stops polling a queue pair and returns once the agent can no longer touch it: any pass that
     * started before the removal has ended (so the caller may unmap the queue pair's memory).
     */
    void remove(SwQueuePair qp) {
        synchronized (this) {
            queuePairs = Arrays.stream(queuePairs).filter(q -> q != qp).toArray(SwQueuePair[]::new);
        }
        if (Thread.currentThread() == thread || !thread.isAlive()) {
            return;
        }
        // Two ends of passes: the one in progress (which may hold the old array) and a complete one.
        long target = passes + 2;
        long deadline = System.nanoTime() + QUIESCE_TIMEOUT_NANOS;
        while (passes < target && thread.isAlive() && System.nanoTime() < deadline) {
            LockSupport.unpark(thread);
            LockSupport.parkNanos(10_000);
        }
    }

    private static final long QUIESCE_TIMEOUT_NANOS = 5_000_000_000L;
    private volatile long passes;

    /** Cuts a park short: a plain-store ring is now expected. */
    void wake() {
        LockSupport.unpark(thread);
    }

    void stop() {
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void run() {
        BackoffIdler cold = new BackoffIdler(nic.settings().agentIdle());
        BackoffIdler hot = new BackoffIdler(nic.settings().agentHotIdle());
        long nextSweep = System.nanoTime() + livenessNanos;
        while (running) {
            try {
                nextSweep = pass(cold, hot, nextSweep);
                passes++;
            } catch (RuntimeException e) {
                passes++;
                report(e);
            }
        }
    }

    private long errors;
    private long lastReportNanos;

    /**
     * A bug must not silently stop the NIC: the agent reports it and keeps serving the other queue pairs.
     * The first error prints its stack; later ones a line each, at most one a second.
     */
    private void report(RuntimeException e) {
        errors++;
        long now = System.nanoTime();
        if (errors == 1) {
            System.err.println("gdasync agent of " + nic.name() + " caught an unexpected error; it keeps running");
            e.printStackTrace();
            lastReportNanos = now;
        } else if (now - lastReportNanos >= 1_000_000_000L) {
            System.err.println("gdasync agent of " + nic.name() + ": unexpected error #" + errors + ": " + e);
            lastReportNanos = now;
        }
    }

    private long pass(BackoffIdler cold, BackoffIdler hot, long nextSweep) {
        {
            int work = 0;
            boolean eager = false;
            long now = System.nanoTime();
            for (SwQueuePair qp : queuePairs) {
                work += qp.agentPoll(now);
                eager |= qp.needsHotPolling();
            }
            if (now - nextSweep >= 0) {
                nic.sweep();
                nextSweep = now + livenessNanos;
            }
            if (work > 0) {
                cold.reset();
                hot.reset();
            } else if (eager) {
                cold.reset();
                hot.idle();
            } else {
                hot.reset();
                cold.idle();
            }
        }
        return nextSweep;
    }
}
