package dev.gdasync.gdsync.trace;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.memop.HostMemops;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.memop.WaitTally;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.swnic.NicPair;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;

/**
 * Measures the bytes the instrumented hot paths allocate per iteration, with the thread's allocated bytes
 * ({@link com.sun.management.ThreadMXBean#getThreadAllocatedBytes}) after a warm-up long enough for C2, and prints
 * {@code roundTrip=N batch=N}. {@link EventsAllocationTest} runs it in a fresh JVM: a JVM where a recording ran before
 * (another test) has had its event classes instrumented and its hot methods recompiled more than once, which is not
 * what a program that never records sees.
 *
 * <p>Argument: a folder for the software NICs' shared memory.
 */
public final class AllocationProbe {
    /** Warm-up: at least this many iterations and this long, so that C2 compiled the loop's callees. */
    private static final int WARMUP = 300_000;
    private static final long WARMUP_NANOS = 2_000_000_000L;
    /** Measured in windows; the least a window allocated is the answer (see {@link #least}). */
    private static final int WINDOWS = 5;
    private static final int MEASURED = 50_000;

    private AllocationProbe() {
    }

    /**
     * @param args the shared-memory folder
     */
    public static void main(String[] args) {
        Path base = Path.of(args[0]);
        long roundTrip = roundTrip(base);
        long batch = batch();
        System.out.println("roundTrip=" + roundTrip + " batch=" + batch);
    }

    /**
     * Runs {@value #WINDOWS} windows of {@value #MEASURED} iterations and returns the fewest bytes one window allocated
     * per iteration. On a busy machine the JIT may still recompile a callee during one window, whose interpreted or C1
     * code allocates the event objects; an allocation that the code itself makes shows in every window.
     */
    private static long least(Runnable iteration) {
        long least = Long.MAX_VALUE;
        for (int w = 0; w < WINDOWS; w++) {
            long before = allocated();
            for (int i = 0; i < MEASURED; i++) {
                iteration.run();
            }
            least = Math.min(least, (allocated() - before) / MEASURED);
        }
        return least;
    }

    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getThreadAllocatedBytes(Thread.currentThread().threadId());
    }

    /**
     * One round trip on the CPU, the host model's path through the software NIC: post a receive, post a send (rung
     * inline, executed over shared memory, both CQEs written), reap both completions. Every event site of the NIC runs.
     */
    private static long roundTrip(Path base) {
        try (NicPair p = new NicPair(() -> SoftwareNic.open(SwNicConfig.defaults().withShmBase(base).withJobId("alloc")),
                QueuePairConfig.DEFAULT, 4096, Access.ALL, Access.ALL)) {
            RecvWorkRequest recvA = new RecvWorkRequest().sge(p.ma, 1024, 64);
            RecvWorkRequest recvB = new RecvWorkRequest().sge(p.mb, 1024, 64);
            SendWorkRequest sendA = new SendWorkRequest().sge(p.ma, 0, 8);
            SendWorkRequest sendB = new SendWorkRequest().sge(p.mb, 0, 8);
            Completion c = new Completion();
            long warm = 0;
            for (long start = System.nanoTime(); warm < WARMUP || System.nanoTime() - start < WARMUP_NANOS; warm++) {
                roundTrip(p, recvA, recvB, sendA, sendB, c);
            }
            long perIteration = least(() -> roundTrip(p, recvA, recvB, sendA, sendB, c));
            if (p.qa.counters().workRequests() != warm + (long) WINDOWS * MEASURED) {
                throw new IllegalStateException("the counters did not count: " + p.qa.counters());
            }
            return perIteration;
        }
    }

    private static void roundTrip(NicPair p, RecvWorkRequest recvA, RecvWorkRequest recvB, SendWorkRequest sendA,
                                  SendWorkRequest sendB, Completion c) {
        p.qb.postRecv(recvB);
        p.qa.postSend(sendA);
        reap(p.qa.sendCq(), c);
        reap(p.qb.recvCq(), c);
        p.qa.postRecv(recvA);
        p.qb.postSend(sendB);
        reap(p.qb.sendCq(), c);
        reap(p.qa.recvCq(), c);
    }

    private static void reap(CompletionQueue cq, Completion c) {
        while (cq.poll(c) == 0) {
            Thread.onSpinWait();
        }
    }

    /** A host executor's batch, a doorbell-free write and a counted wait that passes at once: no allocation either. */
    private static long batch() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment words = arena.allocate(16, 8);
            MemoryWord flag = MemoryWord.word32(words, 0, "flag");
            WaitTally tally = new WaitTally("test words", 7, true);
            MemopBatch batch = MemopBatch.of(new Memop.Write32(flag, 1, true),
                    new Memop.Wait32(flag, 1, WaitCondition.GEQ, false, null, tally));
            WaitPolicy policy = WaitPolicy.defaults();
            BackoffIdler idler = new BackoffIdler(policy.backoff());
            long warm = 0;
            for (long start = System.nanoTime(); warm < WARMUP || System.nanoTime() - start < WARMUP_NANOS; warm++) {
                HostMemops.execute(batch, policy, idler, () -> false);
            }
            long perBatch = least(() -> HostMemops.execute(batch, policy, idler, () -> false));
            if (tally.waits() != warm + (long) WINDOWS * MEASURED) {
                throw new IllegalStateException("the tally did not count: " + tally);
            }
            return perBatch;
        }
    }
}
