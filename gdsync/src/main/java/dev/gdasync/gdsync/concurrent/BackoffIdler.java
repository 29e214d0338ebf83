package dev.gdasync.gdsync.concurrent;

import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.locks.LockSupport;

/**
 * An idle strategy that spins, then yields, then parks with a doubling park time up to a bound.
 *
 * <p>One instance belongs to one thread: it keeps that thread's position in the spin, yield and park
 * phases. {@link #idle()} is called once per empty poll; {@link #reset()} when work was found. The
 * park time never exceeds {@link BackoffPolicy#maxParkNanos()}, so a thread that polls memory for
 * work written by plain stores (a GPU, a kernel thread, another process) notices it within that
 * bound even when it is fully backed off.
 *
 * <p>It is an Agrona {@link IdleStrategy}, so an {@link AgentThread}'s runner idles with it between duty
 * cycles ({@link #idle(int)}), and a wait inside a duty cycle idles with another instance
 * ({@link #idle()} and {@link #reset()}). Given a {@link Parker} (a {@link Wakeup}, or a NIC's wait for its peers),
 * its parks go through it, so that whoever posts the work wakes a parked owner at once instead of after the park
 * time.
 *
 * <p>When the process shares its CPUs with more ranks than there are CPUs ({@link CpuShare#yielding()}), the spin
 * phase stops after {@link #SHARED_SPINS} spins and the rest of it is spent yielding: a thread that spins there
 * holds a CPU the thread it waits for may need (MPI libraries' yield-when-oversubscribed). The polls before the first
 * park stay as many, so a background poller still parks as soon as before. A policy may yield more times before its
 * first park while every rank has a CPU than while they are oversubscribed ({@link BackoffPolicy#ownCpuYields()}).
 */
public final class BackoffIdler implements IdleStrategy {
    /** Spins before yielding while the CPUs are oversubscribed: a reply already on its way is still caught. */
    public static final long SHARED_SPINS = Long.getLong("gdasync.yield.spins", 50);

    private final long spins;
    private final long yields;
    private final long ownCpuYields;
    private final long minParkNanos;
    private final long maxParkNanos;
    private final Parker parker;
    private long count;
    private long parkNanos;

    /**
     * Creates an idler following a policy.
     *
     * @param policy how long each phase lasts
     */
    public BackoffIdler(BackoffPolicy policy) {
        this(policy, null);
    }

    /**
     * Creates an idler following a policy whose parks go through a {@link Parker}: a {@link Wakeup}, which posters
     * of this process cut short, or a NIC's wait for its peers.
     *
     * @param policy how long each phase lasts
     * @param parker parks through it; null parks plainly
     */
    public BackoffIdler(BackoffPolicy policy, Parker parker) {
        this.spins = policy.spins();
        this.yields = policy.yields();
        this.ownCpuYields = policy.ownCpuYields();
        this.minParkNanos = policy.minParkNanos();
        this.maxParkNanos = policy.maxParkNanos();
        this.parker = parker;
        reset();
    }

    /** Starts again from the spin phase; call it after finding work. */
    @Override
    public void reset() {
        count = 0;
        parkNanos = minParkNanos;
    }

    /** Idles once: a spin-wait hint, a yield or a park, depending on how long this thread has idled. */
    @Override
    public void idle() {
        if (count < spinLimit()) {
            count++;
            Thread.onSpinWait();
        } else if (count < spins + yieldLimit()) {
            count++;
            Thread.yield();
        } else {
            if (parker != null) {
                parker.park(parkNanos);
            } else {
                LockSupport.parkNanos(parkNanos);
            }
            parkNanos = parkNanos > maxParkNanos >> 1 ? maxParkNanos : parkNanos << 1;
        }
    }

    /**
     * Idles once if no work was done, otherwise resets.
     *
     * @param workCount how much work the last poll found
     */
    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            reset();
        } else {
            idle();
        }
    }

    /** @return whether this thread is still in the spin phase */
    public boolean isSpinning() {
        return count < spinLimit();
    }

    /** @return the spins of this policy, or fewer while the CPUs are oversubscribed (then the others yield) */
    private long spinLimit() {
        return CpuShare.yielding() ? Math.min(spins, SHARED_SPINS) : spins;
    }

    /** @return the yields before the first park: the policy's own-CPU count while every rank has a CPU */
    private long yieldLimit() {
        return CpuShare.yielding() ? yields : ownCpuYields;
    }

    /** @return whether this thread has reached the park phase */
    public boolean isParking() {
        return count >= spins + yieldLimit();
    }

    @Override
    public String alias() {
        return "backoff";
    }
}
