package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.testutil.ThreadRanks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * The rendezvous area's extents on two ranks of one host (threads, each with its own Mp over shared memory): they
 * are made on demand up to the limit, a block is found again from its memory, and the peer maps a block by the
 * address and key a request to send carries, and reads what the owner wrote there.
 */
class AreaExtentsTest {
    @TempDir
    Path base;

    @Test
    void extentsGrowOnDemandUpToTheLimitAndThePeerReadsABlockInPlace() throws Exception {
        AtomicReference<long[]> announced = new AtomicReference<>();
        MpConfig config = MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base))
                .withWaitTimeout(Duration.ofSeconds(20));
        ThreadRanks.run(2, config, "extents", Duration.ofSeconds(60), mp -> {
            if (mp.rank() == 0) {
                AreaExtents extents = new AreaExtents(mp, 4096, 3 * 4096);
                AreaExtents.Place a = extents.allocate(3000);
                assertNotNull(a, "the first extent is made");
                assertEquals(4096, extents.grown());
                AreaExtents.Place b = extents.allocate(1000);
                assertSame(a.extent(), b.extent(), "room is left in the first extent");
                assertEquals(3008, b.offset(), "after the first block, rounded up to 64 bytes");
                AreaExtents.Place big = extents.allocate(6000);
                assertNotSame(a.extent(), big.extent(), "a block larger than an extent gets one of its own size");
                assertEquals(4096 + 6016, extents.grown());
                assertNull(extents.allocate(2000), "a third extent would pass the limit of 12 KiB");
                assertEquals(4096 + 6016, extents.grown(), "nothing was made");
                big.pool().release(big.offset(), 6000);
                assertEquals(big.extent(), extents.allocate(2000).extent(), "freed room is used again");

                MemorySegment block = a.extent().memory().asSlice(a.offset(), 3000);
                AreaExtents.Place found = extents.placeOf(block.asSlice(0, 64));
                assertEquals(a.extent(), found.extent());
                assertEquals(a.offset(), found.offset());
                assertNull(extents.placeOf(mp.allocate(64)), "memory of no extent");
                assertNull(extents.placeOf(MemorySegment.ofArray(new byte[64])), "heap memory");
                for (int i = 0; i < 3000 / 8; i++) {
                    block.set(JAVA_LONG, 8L * i, 0x5EED0000L + i);
                }
                announced.set(new long[] {a.extent().memory().address(), a.offset(), a.rkey()});
            }
            mp.barrier();
            if (mp.rank() == 1) {
                long[] rts = announced.get();
                MemorySegment there = mp.peerMemory(0, rts[0] + rts[1], rts[2], 3000);
                assertNotNull(there, "the NIC maps the peer's extent on one host");
                for (int i = 0; i < 3000 / 8; i++) {
                    assertEquals(0x5EED0000L + i, there.get(JAVA_LONG, 8L * i), "word " + i);
                }
                assertNull(mp.peerMemory(0, rts[0] + rts[1], rts[2], 8192), "not beyond the extent's registration");
            }
            mp.barrier();
        });
    }
}
