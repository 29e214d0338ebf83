package dev.gdasync.gdsync.concurrent;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.IdleStrategy;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AgentThreadTest {
    /** An idle strategy per agent: it keeps its thread's backoff state. */
    private static IdleStrategy park1ms() {
        return new BackoffIdler(new BackoffPolicy(0, 0, 1_000_000, 1_000_000));
    }

    /** An agent that counts its duty cycles and ends itself once asked to. */
    private static class Counting implements Agent {
        final String role;
        final AtomicInteger cycles = new AtomicInteger();
        final AtomicReference<Thread> closedOn = new AtomicReference<>();
        volatile boolean stopping;

        Counting(String role) {
            this.role = role;
        }

        @Override
        public int doWork() {
            if (stopping) {
                throw new AgentTerminationException("stopped", true);
            }
            cycles.incrementAndGet();
            return 0;
        }

        @Override
        public void onClose() {
            closedOn.set(Thread.currentThread());
        }

        @Override
        public String roleName() {
            return role;
        }
    }

    private static boolean within(long millis, java.util.function.BooleanSupplier condition) {
        long end = System.nanoTime() + millis * 1_000_000;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    @Test
    void runsOnANamedPlatformDaemonThreadUntilItEndsItself() {
        Counting agent = new Counting("gdasync-test-agent");
        AgentThread t = AgentThread.start(agent, park1ms());
        assertEquals("gdasync-test-agent", t.thread().getName());
        assertTrue(t.thread().isDaemon());
        assertFalse(t.thread().isVirtual());
        assertFalse(t.isCurrentThread());
        assertTrue(within(10_000, () -> agent.cycles.get() > 2), "the runner runs duty cycles");

        agent.stopping = true;
        t.close();
        assertFalse(t.thread().isAlive());
        assertTrue(t.isClosed());
        assertSame(t.thread(), agent.closedOn.get(), "onClose runs on the agent's thread");
        assertTrue(t.toString().contains("closed"), t.toString());
    }

    @Test
    void closeFromTheAgentsOwnThreadReturnsAtOnce() throws Exception {
        AtomicReference<AgentThread> self = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean closeReturned = new AtomicBoolean();
        Counting agent = new Counting("gdasync-test-self-close") {
            @Override
            public int doWork() {
                int work = super.doWork();
                AgentThread t = self.get();
                if (t != null && !stopping) {
                    stopping = true;
                    t.close();
                    closeReturned.set(true);
                }
                started.countDown();
                return work;
            }
        };
        AgentThread t = AgentThread.start(agent, park1ms());
        self.set(t);
        assertTrue(started.await(10, TimeUnit.SECONDS));
        t.thread().join(10_000);
        assertFalse(t.thread().isAlive(), "the agent ended after the duty cycle that closed it");
        assertTrue(closeReturned.get());
        assertTrue(t.isClosed());
    }

    @Test
    void anErrorEscapingADutyCycleIsReportedAndTheAgentKeepsRunning() {
        AtomicInteger thrown = new AtomicInteger();
        Counting agent = new Counting("gdasync-test-faulty") {
            @Override
            public int doWork() {
                if (thrown.get() < 3) {
                    thrown.incrementAndGet();
                    throw new IllegalStateException("bug #" + thrown.get());
                }
                return super.doWork();
            }
        };
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        AgentThread t;
        try {
            t = AgentThread.start(agent, park1ms());
            assertTrue(within(10_000, () -> agent.cycles.get() > 2), "the agent kept running");
        } finally {
            System.setErr(err);
        }
        agent.stopping = true;
        t.close();
        String report = captured.toString(StandardCharsets.UTF_8);
        assertTrue(report.contains("gdasync agent gdasync-test-faulty caught an unexpected error"), report);
        assertTrue(report.contains("bug #1") && report.contains("\tat "), "the first error prints its stack:\n" + report);
        assertFalse(report.contains("bug #2"), "later errors within a second are not printed:\n" + report);
    }

    @Test
    void theErrorHandlerRateLimitsLaterErrors() {
        ErrorHandler handler = AgentThread.errorHandler("role");
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            for (int i = 0; i < 100; i++) {
                handler.onError(new RuntimeException("e" + i));
            }
        } finally {
            System.setErr(err);
        }
        String report = captured.toString(StandardCharsets.UTF_8);
        assertTrue(report.contains("e0"), report);
        assertFalse(report.contains("#"), "later errors within a second are not printed:\n" + report);
    }

    @Test
    void aWakeupCutsAParkShort() throws Exception {
        ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
        AtomicBoolean stopping = new AtomicBoolean();
        Wakeup wakeup = new Wakeup(() -> stopping.get() || !queue.isEmpty());
        BackoffIdler idler = new BackoffIdler(new BackoffPolicy(0, 0, 60_000_000_000L, 60_000_000_000L), wakeup);
        Agent agent = new Agent() {
            @Override
            public int doWork() {
                if (stopping.get()) {
                    throw new AgentTerminationException(true);
                }
                Runnable r = queue.poll();
                if (r == null) {
                    return 0;
                }
                r.run();
                return 1;
            }

            @Override
            public String roleName() {
                return "gdasync-test-wakeup";
            }
        };
        AgentThread t = AgentThread.start(agent, idler);
        assertTrue(within(10_000, () -> t.thread().getState() == Thread.State.TIMED_WAITING), "the agent parks");
        for (int i = 0; i < 20; i++) {
            CountDownLatch ran = new CountDownLatch(1);
            queue.offer(ran::countDown);
            wakeup.wake();
            assertTrue(ran.await(10, TimeUnit.SECONDS), "a posted item waited for the 60 s park");
        }
        stopping.set(true);
        wakeup.wake();
        t.close();
        assertTrue(t.isClosed());
    }

    @Test
    void theBackoffIdlerIsAnAgronaIdleStrategy() {
        BackoffIdler idler = new BackoffIdler(new BackoffPolicy(2, 1, 1, 1));
        IdleStrategy s = assertInstanceOf(IdleStrategy.class, idler);
        s.idle(0);
        s.idle(0);
        assertFalse(idler.isSpinning());
        s.idle(0);
        assertTrue(idler.isParking());
        s.idle(1);
        assertTrue(idler.isSpinning(), "work resets the backoff");
        assertEquals("backoff", s.alias());
    }
}
