package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.ucx.UcxLibrary;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Two software NICs in one JVM, each with a region, a registration and a queue pair, connected to
 * each other: the in-process fixture of the queue pair tests.
 */
public final class NicPair implements AutoCloseable {
    public final Nic a;
    public final Nic b;
    public final Region ra;
    public final Region rb;
    public final MemoryRegion ma;
    public final MemoryRegion mb;
    public final QueuePair qa;
    public final QueuePair qb;

    NicPair(Path base, int regionBytes, int accessA, int accessB) {
        this(config(base), QueuePairConfig.DEFAULT, regionBytes, accessA, accessB);
    }

    NicPair(SwNicConfig config, QueuePairConfig qpConfig, int regionBytes, int accessA, int accessB) {
        this(() -> SoftwareNic.open(config), qpConfig, regionBytes, accessA, accessB);
    }

    /**
     * Two NICs of any provider.
     *
     * @param nics        opens one NIC (called twice)
     * @param qpConfig    the queue pairs' settings
     * @param regionBytes each side's region
     * @param accessA     the access of side a's registration
     * @param accessB     the access of side b's registration
     */
    public NicPair(Supplier<Nic> nics, QueuePairConfig qpConfig, int regionBytes, int accessA, int accessB) {
        a = nics.get();
        b = nics.get();
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

    /** @return side a as a software NIC (the fixtures of the software NIC's own tests) */
    SoftwareNic swA() {
        return (SoftwareNic) a;
    }

    /** @return side b as a software NIC */
    SoftwareNic swB() {
        return (SoftwareNic) b;
    }

    /** @return side a's region as a software NIC's shared-memory region */
    HostRegion hostA() {
        return (HostRegion) ra;
    }

    /** @return side b's region as a software NIC's shared-memory region */
    HostRegion hostB() {
        return (HostRegion) rb;
    }

    public MemorySegment sa() {
        return ra.segment();
    }

    public MemorySegment sb() {
        return rb.segment();
    }

    /** Skips the calling test class, saying why, where UCX cannot be used. */
    static void assumeUcx() {
        Optional<String> reason = UcxLibrary.unavailableReason();
        reason.ifPresent(r -> System.out.println("SKIPPED (UCX): " + r));
        assumeTrue(reason.isEmpty(), reason.orElse(""));
    }

    /** Polls until one completion arrives, failing after five seconds. */
    public static Completion awaitOne(CompletionQueue cq) {
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
    public static void assertEmpty(CompletionQueue cq) {
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
