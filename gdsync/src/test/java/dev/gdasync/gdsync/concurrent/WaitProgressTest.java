package dev.gdasync.gdsync.concurrent;

import dev.gdasync.gdsync.memop.HostMemops;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitPolicy;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WaitProgressTest {

    @Test
    void aHostWaitRunsTheRegisteredHooksUntilOneOfThemWritesItsWord() {
        try (Arena arena = Arena.ofConfined()) {
            MemoryWord word = MemoryWord.word32(arena.allocate(4, 4), 0, "word");
            AtomicInteger calls = new AtomicInteger();
            // Nothing but the hook writes the word: the wait ends only if the waiting thread runs it.
            IntSupplier hook = () -> {
                if (calls.incrementAndGet() == 100) {
                    word.set32(1, true);
                    return 1;
                }
                return 0;
            };
            WaitProgress.add(hook);
            try {
                HostMemops.await32(word, 1, WaitCondition.GEQ, WaitPolicy.defaults(),
                        new BackoffIdler(WaitPolicy.defaults().backoff()), () -> false);
            } finally {
                WaitProgress.remove(hook);
            }
            assertEquals(1, word.getAcquire32());
            assertTrue(calls.get() >= 100, calls.get() + " hook calls");
        }
    }

    @Test
    void aRemovedHookIsNoLongerRun() {
        AtomicInteger calls = new AtomicInteger();
        IntSupplier hook = () -> {
            calls.incrementAndGet();
            return 1;
        };
        WaitProgress.add(hook);
        assertTrue(WaitProgress.run() >= 1);
        WaitProgress.remove(hook);
        int before = calls.get();
        WaitProgress.run();
        assertEquals(before, calls.get());
        WaitProgress.remove(hook); // removing again does nothing
    }
}
