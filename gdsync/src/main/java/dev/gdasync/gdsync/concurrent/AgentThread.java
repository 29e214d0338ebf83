package dev.gdasync.gdsync.concurrent;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.IdleStrategy;

import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * An Agrona {@link Agent} run by an {@link AgentRunner} on a platform daemon thread named after the agent's
 * {@link Agent#roleName()}: the shape of every thread of the project that polls (docs/agents.md).
 *
 * <p>The runner calls {@link Agent#doWork()} in a loop and idles with the given {@link IdleStrategy} after a
 * duty cycle that found nothing to do. {@link Agent#onStart()} and {@link Agent#onClose()} run on the agent's
 * thread, before the first and after the last duty cycle.
 *
 * <p>An agent ends itself. Its owner asks it to stop (a volatile flag of the owner's), then calls
 * {@link #close()}; the agent's next duty cycle sees the flag and throws
 * {@code new AgentTerminationException(reason, true)}, after which the runner calls {@code onClose} and the
 * thread ends. Agrona's {@link AgentRunner#close()} is not used: called from the agent's own thread (a
 * stream's task closing its stream) it would wait for itself, and called from another thread it interrupts
 * the agent's thread after a timeout, an interrupt that would reach whatever the duty cycle is running.
 *
 * <p>Errors that escape a duty cycle go to {@link #errorHandler(String)}'s report and the agent keeps running
 * (an {@link Error} still ends the thread, as Agrona's runner rethrows it). Agrona's runner also ends its
 * loop when a duty cycle that did no work leaves the thread interrupted: an agent that runs other code (a
 * stream's host tasks) clears the interrupt status that code leaves behind.
 */
public final class AgentThread {
    private final AgentRunner runner;
    private final Thread thread;

    private AgentThread(Agent agent, IdleStrategy idleStrategy) {
        this.runner = new AgentRunner(idleStrategy, errorHandler(agent.roleName()), null, agent);
        this.thread = AgentRunner.startOnThread(runner,
                r -> Thread.ofPlatform().name(agent.roleName()).daemon().unstarted(r));
    }

    /**
     * Starts an agent on a platform daemon thread of its own, named {@code agent.roleName()}.
     *
     * @param agent        the agent; it must end itself with an expected {@link AgentTerminationException}
     * @param idleStrategy how the thread idles between duty cycles that did no work; used by that thread only
     * @return the running agent
     */
    public static AgentThread start(Agent agent, IdleStrategy idleStrategy) {
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(idleStrategy, "idleStrategy");
        return new AgentThread(agent, idleStrategy);
    }

    /**
     * The error handler of every agent of the project, for an {@link AgentRunner} or an
     * {@link org.agrona.concurrent.AgentInvoker}: a bug must neither stop the agent silently nor flood the
     * log. The first error prints its stack; later ones print a line each, at most one a second.
     *
     * @param role the agent's role name, printed with each report
     * @return a new handler; call it from one thread at a time (the agent's)
     */
    public static ErrorHandler errorHandler(String role) {
        Objects.requireNonNull(role, "role");
        return new ErrorHandler() {
            private long errors;
            private long lastReportNanos;

            @Override
            public void onError(Throwable t) {
                errors++;
                long now = System.nanoTime();
                if (errors == 1) {
                    System.err.println("gdasync agent " + role + " caught an unexpected error; it keeps running");
                    t.printStackTrace();
                    lastReportNanos = now;
                } else if (now - lastReportNanos >= 1_000_000_000L) {
                    System.err.println("gdasync agent " + role + ": unexpected error #" + errors + ": " + t);
                    lastReportNanos = now;
                }
            }
        };
    }

    /** @return the agent's thread */
    public Thread thread() {
        return thread;
    }

    /** @return whether the calling thread is the agent's */
    public boolean isCurrentThread() {
        return Thread.currentThread() == thread;
    }

    /** @return whether the agent has ended: its last duty cycle and {@code onClose} have run */
    public boolean isClosed() {
        return runner.isClosed();
    }

    /**
     * Unparks the agent's thread, cutting short a park of its idle strategy (or making its next park return
     * at once). Use it after posting work when the idle strategy parks without a {@link Wakeup}.
     */
    public void wake() {
        LockSupport.unpark(thread);
    }

    /**
     * Waits for the agent to end, after its owner asked it to: wakes the thread, then joins it. Called from
     * the agent's own thread it returns at once, and the agent ends after the current duty cycle. An
     * interrupted caller stops waiting, with its interrupt status set.
     */
    public void close() {
        wake();
        if (isCurrentThread()) {
            return;
        }
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "AgentThread{" + thread.getName() + (runner.isClosed() ? ", closed" : "") + "}";
    }
}
