package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.concurrent.AgentDuty;
import dev.gdasync.gdsync.concurrent.AgentThread;
import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.CpuShare;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.IdleStrategy;

import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * The software NIC's agent: plays the NIC hardware's part for work nobody rang by a call. An Agrona agent on a
 * thread of its own ({@link AgentThread}), like every thread of the project that polls.
 *
 * <p>Its duty cycle polls every queue pair's doorbell record for work rung by plain stores (a GPU, a kernel
 * thread), retries sends waiting for the peer to post a receive, and every liveness interval sweeps: the
 * transports' shared state (peers' liveness, device mappings) and every queue pair's peer. It idles adaptively:
 * eagerly (spin, yield, parks of at most tens of microseconds) while a plain-store ring is expected or a send is
 * stalled, otherwise backing off to parks of up to a millisecond, so an idle NIC costs almost no CPU and a
 * doorbell is still noticed within that bound.
 *
 * <p>The same work also runs inline, on the thread that rang: a ring by a call drains the queue pair on the
 * ringing thread ({@link SwQueuePair#ring()}), and a host thread that played a kernel runs its plain-store rings
 * with {@link #runStoreRings()}. Other parts may add duties of their own ({@link AgentDuty}: the software mlx5
 * device's engine), which run in the same duty cycle. A queue pair's execution lock makes the agent and inline callers take turns.
 */
final class NicAgent implements Agent {
    private static final long QUIESCE_TIMEOUT_NANOS = 5_000_000_000L;

    private final NicCore nic;
    private final long livenessNanos;
    private volatile SwQueuePair[] queuePairs = new SwQueuePair[0];
    private volatile AgentDuty[] duties = new AgentDuty[0];
    private volatile boolean running = true;
    /** Duty cycles ended (normally or by an error): {@link #remove} waits for two. */
    private volatile long passes;
    private long nextSweep;
    /** Whether the last duty cycle found a queue pair that wants eager polling; agent thread only. */
    private boolean eager;
    /** Whether the last duty cycle found a send waiting for the peer to post a receive; agent thread only. */
    private boolean stalledSend;
    private AgentThread thread;

    NicAgent(NicCore nic) {
        this.nic = nic;
        this.livenessNanos = nic.settings().livenessInterval().toNanos();
        this.nextSweep = System.nanoTime() + livenessNanos;
    }

    void start() {
        thread = AgentThread.start(this, new HotColdIdle(new BackoffIdler(nic.settings().agentIdle()),
                new BackoffIdler(nic.settings().agentHotIdle())));
    }

    @Override
    public String roleName() {
        return "gdasync-agent-" + nic.name();
    }

    synchronized void add(SwQueuePair qp) {
        SwQueuePair[] a = Arrays.copyOf(queuePairs, queuePairs.length + 1);
        a[a.length - 1] = qp;
        queuePairs = a;
    }

    synchronized void add(AgentDuty duty) {
        AgentDuty[] a = Arrays.copyOf(duties, duties.length + 1);
        a[a.length - 1] = duty;
        duties = a;
    }

    /** Stops running a duty and returns once no duty cycle that may run it is in progress. */
    void remove(AgentDuty duty) {
        synchronized (this) {
            duties = Arrays.stream(duties).filter(d -> d != duty).toArray(AgentDuty[]::new);
        }
        quiesce();
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
        for (AgentDuty d : duties) {
            n += d.runOnCaller();
        }
        return n;
    }

    /**
     * Stops polling a queue pair and returns once the agent can no longer touch it: any duty cycle that
     * started before the removal has ended (so the caller may unmap the queue pair's memory).
     */
    void remove(SwQueuePair qp) {
        synchronized (this) {
            queuePairs = Arrays.stream(queuePairs).filter(q -> q != qp).toArray(SwQueuePair[]::new);
        }
        quiesce();
    }

    /** Returns once any duty cycle that started before the call has ended. */
    private void quiesce() {
        Thread t = thread.thread();
        if (Thread.currentThread() == t || !t.isAlive()) {
            return;
        }
        // Two ends of duty cycles: the one in progress (which may hold the old array) and a complete one.
        long target = passes + 2;
        long deadline = System.nanoTime() + QUIESCE_TIMEOUT_NANOS;
        while (passes < target && t.isAlive() && System.nanoTime() < deadline) {
            LockSupport.unpark(t);
            LockSupport.parkNanos(10_000);
        }
    }

    /** Cuts a park short: a plain-store ring is now expected. */
    void wake() {
        thread.wake();
    }

    void stop() {
        running = false;
        thread.close();
    }

    /** One pass over the queue pairs, and the sweep when it is due. */
    @Override
    public int doWork() {
        if (!running) {
            throw new AgentTerminationException("the NIC closed", true);
        }
        try {
            int work = 0;
            boolean hot = false;
            boolean stalls = false;
            long now = System.nanoTime();
            for (SwQueuePair qp : queuePairs) {
                work += qp.agentPoll(now);
                hot |= qp.needsHotPolling();
                stalls |= qp.isStalled();
            }
            for (AgentDuty d : duties) {
                work += d.doWork(now);
                hot |= d.wantsEagerPolling();
            }
            if (now - nextSweep >= 0) {
                nic.sweep();
                nextSweep = now + livenessNanos;
            }
            eager = hot;
            stalledSend = stalls;
            return work;
        } finally {
            passes++;
        }
    }

    /**
     * Idles on the cold policy while nothing is expected, on the hot one while the last duty cycle found a queue
     * pair that wants eager polling; work found resets both. While a send waits for the peer's receive and the ranks
     * leave a CPU spare ({@link CpuShare#spareCpu()}), the hot policy's parks become yields: the receive is expected
     * within microseconds, and a park (tens of microseconds at least on Linux, whatever its timeout) would be the
     * send's latency. Without a spare CPU the agent parks as before, and the thread that waits for the send retries
     * it itself ({@link SwQueuePair#runStoreRing}, a poll of its completion queues).
     */
    private final class HotColdIdle implements IdleStrategy {
        private final BackoffIdler cold;
        private final BackoffIdler hot;

        HotColdIdle(BackoffIdler cold, BackoffIdler hot) {
            this.cold = cold;
            this.hot = hot;
        }

        @Override
        public void idle(int workCount) {
            if (workCount > 0) {
                reset();
            } else if (eager) {
                cold.reset();
                if (stalledSend && hot.isParking() && CpuShare.spareCpu()) {
                    Thread.yield();
                } else {
                    hot.idle();
                }
            } else {
                hot.reset();
                cold.idle();
            }
        }

        @Override
        public void idle() {
            idle(0);
        }

        @Override
        public void reset() {
            cold.reset();
            hot.reset();
        }
    }
}
