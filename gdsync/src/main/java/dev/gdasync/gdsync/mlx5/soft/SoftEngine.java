package dev.gdasync.gdsync.mlx5.soft;

import dev.gdasync.gdsync.concurrent.AgentDuty;

import java.util.Arrays;

/**
 * The software mlx5 device's engine on the software NIC's agent thread: every duty cycle runs every queue pair's
 * engine ({@link SoftQp#run()}). It asks the agent to poll eagerly while a plain-store ring is expected, and for a
 * while after a GPU stream or a kernel began to wait on a CQE (such an executor cannot run the engine itself, and the
 * CQE is written only when the engine looks). Host threads run the engine themselves when they ring or poll, so they
 * leave the agent idle.
 */
final class SoftEngine implements AgentDuty {
    /** How long the agent stays eager after an executor that cannot progress the device began to wait on a CQE. */
    static final long EAGER_AFTER_EXTERNAL_WAIT_NANOS = 100_000_000L;

    private volatile SoftQp[] queuePairs = new SoftQp[0];

    synchronized void add(SoftQp qp) {
        SoftQp[] a = Arrays.copyOf(queuePairs, queuePairs.length + 1);
        a[a.length - 1] = qp;
        queuePairs = a;
    }

    synchronized void remove(SoftQp qp) {
        queuePairs = Arrays.stream(queuePairs).filter(q -> q != qp).toArray(SoftQp[]::new);
    }

    @Override
    public int doWork(long nowNanos) {
        return runAll(true);
    }

    @Override
    public boolean wantsEagerPolling() {
        long now = System.nanoTime();
        for (SoftQp qp : queuePairs) {
            if (qp.wantsEagerPolling(now)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public int runOnCaller() {
        return runAll(false);
    }

    /**
     * @param byAgent whether the caller is the software NIC's agent
     * @return the work done by every queue pair's engine
     */
    int runAll(boolean byAgent) {
        int n = 0;
        for (SoftQp qp : queuePairs) {
            n += qp.run(byAgent);
        }
        return n;
    }
}
