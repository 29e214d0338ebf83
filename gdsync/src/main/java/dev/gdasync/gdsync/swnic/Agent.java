package dev.gdasync.gdsync.swnic;

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
final class Agent implements Runnable {
    private final SoftwareNic nic;
    private final long livenessNanos;
    private final Thread thread;
    private volatile ShmQueuePair[] queuePairs = new ShmQueuePair[0];
    private volatile boolean running = true;

    Agent(SoftwareNic nic) {
        this.nic = nic;
        this.livenessNanos = nic.config().livenessInterval().toNanos();
        this.thread = Thread.ofPlatform().name("gdasync-agent-" + nic.name()).daemon().unstarted(this);
    }

    void start() {
        thread.start();
    }

    synchronized void add(ShmQueuePair qp) {
        ShmQueuePair[] a = Arrays.copyOf(queuePairs, queuePairs.length + 1);
        a[a.length - 1] = qp;
        queuePairs = a;
    }

    synchronized void remove(ShmQueuePair qp) {
        queuePairs = Arrays.stream(queuePairs).filter(q -> q != qp).toArray(ShmQueuePair[]::new);
    }

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
        BackoffIdler cold = new BackoffIdler(nic.config().agentIdle());
        BackoffIdler hot = new BackoffIdler(nic.config().agentHotIdle());
        long nextSweep = System.nanoTime() + livenessNanos;
        while (running) {
            try {
                nextSweep = pass(cold, hot, nextSweep);
            } catch (RuntimeException e) {
                // A bug must not silently stop the NIC: report it and keep serving the other queue pairs.
                if (!reported) {
                    reported = true;
                    System.err.println("gdasync agent of " + nic.name() + " caught an unexpected error; it keeps running");
                    e.printStackTrace();
                }
            }
        }
    }

    private boolean reported;

    private long pass(BackoffIdler cold, BackoffIdler hot, long nextSweep) {
        {
            int work = 0;
            boolean eager = false;
            long now = System.nanoTime();
            for (ShmQueuePair qp : queuePairs) {
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
