package dev.gdasync.libmp.mpj;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The rendezvous area's blocks: first fit, merging, and MPJ's buffers held while receivers read them in place. */
class RendezvousPoolTest {

    @Test
    void freedNeighboursMergeAndAreAllocatedAgain() {
        RendezvousPool pool = new RendezvousPool(4096);
        long a = pool.allocate(1000);
        long b = pool.allocate(1000);
        long c = pool.allocate(1000);
        assertEquals(3 * 1024, pool.used());
        pool.release(b, 1000);
        pool.release(a, 1000);
        assertEquals(-1, pool.allocate(3000), "only 2 KiB are free in one piece, and 1 KiB at the end");
        assertEquals(a, pool.allocate(2000), "the two freed neighbours merged");
        pool.release(c, 1000);
    }

    @Test
    void aBlockMpjFreedStaysHeldUntilItsLastReaderIsDone() {
        RendezvousPool pool = new RendezvousPool(2048);
        long at = pool.allocate(2048);
        pool.holdForReader(at);
        pool.holdForReader(at); // sent to two ranks
        pool.ownerFreed(at, 2048);
        assertEquals(2048, pool.used(), "MPJ freed it, but two ranks read it");
        pool.readerDone(at);
        assertEquals(2048, pool.used(), "one rank still reads it");
        assertEquals(-1, pool.allocate(64));
        pool.readerDone(at);
        assertEquals(0, pool.used());
        assertEquals(at, pool.allocate(2048));
    }

    @Test
    void aBlockWhoseReaderIsDoneFirstIsFreedWhenMpjFreesIt() {
        RendezvousPool pool = new RendezvousPool(1024);
        long at = pool.allocate(1024);
        pool.holdForReader(at);
        pool.readerDone(at);
        assertEquals(1024, pool.used(), "MPJ still holds its buffer");
        pool.ownerFreed(at, 1024);
        assertEquals(0, pool.used());
    }

    @Test
    void aBlockNoReaderHoldsIsFreedWhenMpjFreesIt() {
        RendezvousPool pool = new RendezvousPool(1024);
        long at = pool.allocate(100);
        pool.ownerFreed(at, 100);
        assertEquals(0, pool.used());
    }
}
