package dev.gdasync.ki.cuda;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Scratch memory: whole pages, registered once, never shared by two running launches. */
class ScratchPoolTest {
    private final Arena arena = Arena.ofConfined();
    private final List<MemorySegment> registered = new ArrayList<>();
    private final ScratchPool pool = new ScratchPool(arena, s -> {
        registered.add(s);
        return s.address() + 1;
    });

    @AfterEach
    void free() {
        arena.close();
    }

    @Test
    void blocksArePagesRegisteredOnceAndReused() {
        ScratchPool.Block a = pool.acquire(100);
        assertEquals(4096, a.segment().byteSize());
        assertEquals(0, a.segment().address() % 4096);
        assertEquals(a.segment().address() + 1, a.deviceAddress());
        pool.release(a);
        assertSame(a, pool.acquire(4000));
        assertEquals(1, registered.size());
    }

    @Test
    void aBlockInUseIsNeverHandedOutAgain() {
        ScratchPool.Block a = pool.acquire(64);
        ScratchPool.Block b = pool.acquire(64);
        assertNotSame(a, b);
        assertEquals(2, pool.allocated());
    }

    @Test
    void theSmallestFreeBlockThatFitsIsTaken() {
        ScratchPool.Block big = pool.acquire(10_000);
        ScratchPool.Block small = pool.acquire(10);
        assertEquals(12288, big.segment().byteSize());
        pool.release(big);
        pool.release(small);
        assertSame(small, pool.acquire(20));
        assertSame(big, pool.acquire(5000));
        assertEquals(0, pool.free());
        assertThrows(IllegalArgumentException.class, () -> pool.acquire(0));
    }
}
