package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What a timeout message lists: the work not yet seen reached, waits with their word's current value. */
class QueuedWorkTest {
    @Test
    void itemsAreListedOldestFirstAndDroppedOnceReached() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(64, 8);
            MemoryWord w = MemoryWord.word32(seg, 0, "flag");
            MemoryWord d = MemoryWord.word64(seg, 8, "counter");
            QueuedWork q = new QueuedWork();
            assertEquals("nothing known", q.describe());
            q.addAll(1, MemopBatch.of(new Memop.Write32(w, 1, true), new Memop.Write64(d, 2, false)));
            q.add(2, "event");
            q.addAll(3, MemopBatch.of(new Memop.Wait32(w, 5, WaitCondition.GEQ), new Memop.Wait64(d, 9, WaitCondition.EQ)));
            q.add(4, "host task t");
            w.set32(3, true);
            assertEquals("WRITE32 1 (0x1) to " + w + "; WRITE64 2 (0x2) to " + d + "; event; WAIT32 GEQ 5 (0x5) on " + w
                    + " (now 3 (0x3)); WAIT64 EQ 9 (0x9) on " + d + " (now 0 (0x0)); host task t", q.describe());
            q.reachedBefore(3);
            assertEquals("WAIT32 GEQ 5 (0x5) on " + w + " (now 3 (0x3)); WAIT64 EQ 9 (0x9) on " + d + " (now 0 (0x0)); "
                    + "host task t", q.describe());
            q.clear();
            assertEquals("nothing known", q.describe());
        }
    }

    @Test
    void onlyTheFirstItemsAreKeptAndTheRestCounted() {
        QueuedWork q = new QueuedWork();
        for (int i = 0; i < QueuedWork.LIMIT + 5; i++) {
            q.add(i, "item " + i);
        }
        String s = q.describe();
        assertEquals(true, s.startsWith("item 0; item 1; "), s);
        assertEquals(true, s.endsWith("item " + (QueuedWork.LIMIT - 1) + "; and 5 more"), s);
        q.reachedBefore(Long.MAX_VALUE);
        assertEquals("nothing known", q.describe());
    }

    @Test
    void otherMemopsAreNamed() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(64, 8);
            assertEquals("WRITE_MEMORY 3 bytes to 0x" + Long.toHexString(seg.address() + 4),
                    QueuedWork.describe(new Memop.WriteMemory(seg, 4, new byte[3], false)));
            assertEquals("BARRIER SYSTEM", QueuedWork.describe(new Memop.Barrier(dev.gdasync.gdsync.memop.BarrierScope.SYSTEM)));
        }
    }
}
