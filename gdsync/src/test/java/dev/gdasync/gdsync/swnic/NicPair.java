package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.ucx.UcxLibrary;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Two software NICs in one JVM, each with a region, a registration and a queue pair, connected to
 * each other: the in-process fixture of the queue pair tests.
 */
final class NicPair implements AutoCloseable {
    final SoftwareNic a;
    final SoftwareNic b;
    final HostRegion ra;
    final HostRegion rb;
    final MemoryRegion ma;
    final MemoryRegion mb;
    final QueuePair qa;
    final QueuePair qb;

    NicPair(Path base, int regionBytes, int accessA, int accessB) {
        this(config(base), QueuePairConfig.DEFAULT, regionBytes, accessA, accessB);
    }

    NicPair(SwNicConfig config, QueuePairConfig qpConfig, int regionBytes, int accessA, int accessB) {
        a = SoftwareNic.open(config);
        b = SoftwareNic.open(config);
        ra = a.allocateHost(regionBytes);
        rb = b.allocateHost(regionBytes);
        ma = a.register(ra, accessA);
        mb = b.register(rb, accessB);
        qa = a.createQueuePair(qpConfig);
        qb = b.createQueuePair(qpConfig);
        qa.connect(qb.endpoint());
        qb.connect(qa.endpoint());
    }

    static SwNicConfig config(Path base) {
        return SwNicConfig.defaults().withShmBase(base).withJobId("unit");
    }

    MemorySegment sa() {
        return ra.segment();
    }

    MemorySegment sb() {
        return rb.segment();
    }

    /** Skips the calling test class, saying why, where UCX cannot be used. */
    static void assumeUcx() {
        Optional<String> reason = UcxLibrary.unavailableReason();
        reason.ifPresent(r -> System.out.println("SKIPPED (UCX): " + r));
        assumeTrue(reason.isEmpty(), reason.orElse(""));
    }

    /** Polls until one completion arrives, failing after five seconds. */
    static Completion awaitOne(CompletionQueue cq) {
        Completion c = new Completion();
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (cq.poll(c) == 0) {
            if (System.nanoTime() > deadline) {
                fail("no completion on " + cq.name() + " within 5 s");
            }
            Thread.onSpinWait();
        }
        return c;
    }

    /** Asserts that no completion is available now. */
    static void assertEmpty(CompletionQueue cq) {
        Completion c = new Completion();
        if (cq.poll(c) != 0) {
            fail("unexpected completion on " + cq.name() + ": " + c);
        }
    }

    @Override
    public void close() {
        a.close();
        b.close();
    }
}
