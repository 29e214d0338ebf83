package dev.gdasync.ki;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionQueue;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Nic;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/** Two NICs in this process (software NICs, or another provider's), one connected queue pair each, and a registered region per side. */
final class Link implements AutoCloseable {
    static final long REGION = 1 << 20;

    final Side a;
    final Side b;

    /** One end: its NIC, region, registration and queue pair. */
    static final class Side {
        final Nic nic;
        final Region region;
        final MemoryRegion mr;
        final QueuePair qp;

        Side(Nic opened) {
            nic = opened;
            region = nic.allocateHost(REGION);
            mr = nic.register(region, Access.ALL);
            qp = nic.createQueuePair(new QueuePairConfig(1024, 1024, 2048));
        }

        MemorySegment mem() {
            return region.segment();
        }
    }

    Link(Path shmBase, String job) {
        this(() -> SoftwareNic.open(SwNicConfig.defaults().withShmBase(shmBase).withJobId(job)));
    }

    /** @param nics opens one NIC (called twice) */
    Link(Supplier<Nic> nics) {
        a = new Side(nics.get());
        b = new Side(nics.get());
        a.qp.connect(b.qp.endpoint());
        b.qp.connect(a.qp.endpoint());
    }

    /** Fills a buffer with bytes derived from a seed. */
    static void fill(MemorySegment buf, long seed) {
        for (long k = 0; k < buf.byteSize(); k++) {
            buf.set(ValueLayout.JAVA_BYTE, k, (byte) (seed * 31 + k * 7 + (k >>> 8)));
        }
    }

    /** Checks a buffer filled by {@link #fill} with the same seed. */
    static void check(MemorySegment buf, long seed, String what) {
        for (long k = 0; k < buf.byteSize(); k++) {
            byte want = (byte) (seed * 31 + k * 7 + (k >>> 8));
            byte got = buf.get(ValueLayout.JAVA_BYTE, k);
            if (want != got) {
                fail(what + ": byte " + k + " is " + got + ", expected " + want);
            }
        }
    }

    /** Reaps {@code n} completions of a queue within a bound, all successful. */
    static List<Completion> reap(CompletionQueue cq, int n) {
        List<Completion> out = new ArrayList<>();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (out.size() < n) {
            Completion c = new Completion();
            if (cq.poll(c) == 1) {
                assertEquals(true, c.isSuccess(), cq.name() + ": " + c);
                out.add(c);
            } else if (System.nanoTime() > deadline) {
                fail(cq.name() + ": only " + out.size() + " of " + n + " completions within 10 s");
            } else {
                Thread.onSpinWait();
            }
        }
        return out;
    }

    @Override
    public void close() {
        a.nic.close();
        b.nic.close();
    }
}
