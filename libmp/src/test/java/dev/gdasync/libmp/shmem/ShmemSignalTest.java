package dev.gdasync.libmp.shmem;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Put-with-signal: the data is always visible once the signal is, for SET and ADD, every size, own PE included. */
@Timeout(300)
class ShmemSignalTest {
    /** Sizes cycled through: single bytes, odd lengths, a whole staging buffer and more (two pieces). */
    private static final int[] SIZES = {1, 7, 8, 64, 1000, 4096, 65_536, 250_001, 1 << 20, (1 << 20) + 4099};

    @TempDir
    Path base;

    /** Random bytes; iteration i's payload starts at {@code 1 + (i * 7919) % 4093}, so iterations' payloads differ. */
    private static final MemorySegment RANDOM = random((1 << 21) + 8192);

    private static MemorySegment random(int bytes) {
        byte[] b = new byte[bytes];
        new java.util.Random(16).nextBytes(b);
        return MemorySegment.ofArray(b);
    }

    private static MemorySegment payload(long i, long size) {
        return RANDOM.asSlice(1 + (i * 7919) % 4093, size);
    }

    /** @return how many bytes of {@code got} differ from {@code want} */
    private static long mismatches(MemorySegment got, MemorySegment want) {
        if (got.mismatch(want) < 0) {
            return 0;
        }
        long n = 0;
        for (long k = 0; k < want.byteSize(); k++) {
            n += got.get(JAVA_BYTE, k) == want.get(JAVA_BYTE, k) ? 0 : 1;
        }
        return n;
    }

    /**
     * Each PE putSignals (SET to the iteration) to the next PE of a ring and checks, each time its own signal shows
     * an iteration, every byte of the payload that came with it; then acknowledges with a signal ADD so the writer
     * may overwrite. Blocking and non-blocking forms alternate; sizes cycle from 1 B to past 1 MiB.
     */
    @Test
    void dataIsVisibleBeforeItsSetSignalOnARing() throws Exception {
        int iterations = 3000;
        int max = SIZES[SIZES.length - 1];
        ShmemRanks.run(3, base, 4L << 20, shmem -> {
            int me = shmem.myPe();
            int n = shmem.nPes();
            int next = (me + 1) % n;
            int prev = (me + n - 1) % n;
            MemorySegment data = shmem.calloc(max, 1);
            MemorySegment sig = shmem.calloc(1, 8);
            MemorySegment ack = shmem.calloc(1, 8);
            long mismatches = 0;
            long checked = 0;
            for (int i = 1; i <= iterations; i++) {
                // The two sizes past a staging buffer every 25 iterations only: they dominate the time.
                int size = SIZES[i % 25 == 0 ? 8 + (i / 25) % 2 : i % 8];
                MemorySegment src = payload(i, size);
                if (i % 2 == 0) {
                    shmem.putSignal(data, src, sig, i, ShmemSignalOp.SET, next);
                } else {
                    shmem.putSignalNbi(data, src, sig, i, ShmemSignalOp.SET, next);
                }
                long seen = shmem.signalWaitUntil(sig, ShmemCmp.EQ, i);
                assertEquals(i, seen);
                // What came from prev this iteration has the same size (the size depends on i only).
                mismatches += mismatches(data.asSlice(0, size), src);
                checked += size;
                shmem.putSignal(ack, MemorySegment.NULL, ack, 1, ShmemSignalOp.ADD, prev);
                shmem.signalWaitUntil(ack, ShmemCmp.GE, i);
            }
            assertEquals(0, mismatches, "payload bytes that did not match the signal's iteration, of " + checked);
            shmem.barrierAll();
        });
    }

    /**
     * Every PE but 0 putSignals its slice into PE 0's buffer with a signal ADD of 1, round after round; PE 0 waits
     * for the counter to reach the round's total and then finds every slice of that round complete.
     */
    @Test
    void everySliceIsThereOnceTheAddSignalsCountIt() throws Exception {
        int rounds = 300;
        int slice = 24_000;
        ShmemRanks.run(4, base, 1 << 20, shmem -> {
            int me = shmem.myPe();
            int n = shmem.nPes();
            MemorySegment buf = shmem.calloc((long) slice * n, 1);
            MemorySegment counter = shmem.calloc(1, 8);
            long mismatches = 0;
            for (int r = 1; r <= rounds; r++) {
                if (me != 0) {
                    shmem.putSignalNbi(buf.asSlice((long) slice * me), payload(r * 8L + me, slice), counter, 1,
                            ShmemSignalOp.ADD, 0);
                } else {
                    long total = shmem.signalWaitUntil(counter, ShmemCmp.GE, (long) r * (n - 1));
                    assertEquals((long) r * (n - 1), total, "no PE may run ahead: the round's barrier holds them");
                    for (int p = 1; p < n; p++) {
                        mismatches += mismatches(buf.asSlice((long) slice * p, slice), payload(r * 8L + p, slice));
                    }
                }
                shmem.barrierAll();
            }
            assertEquals(0, mismatches, "bytes of a counted slice that were not that round's");
            assertEquals(me == 0 ? (long) rounds * (n - 1) : 0, shmem.signalFetch(counter));
        });
    }

    /** To its own PE a put-with-signal is a copy then a release store or atomic add; bad input sends nothing. */
    @Test
    void ownPeSignalsAndBadInput() throws Exception {
        ShmemRanks.run(2, base, 1 << 16, shmem -> {
            int me = shmem.myPe();
            int peer = 1 - me;
            MemorySegment data = shmem.calloc(64, 1);
            MemorySegment sig = shmem.calloc(2, 8);
            shmem.putSignal(data, MemorySegment.ofArray(new byte[] {1, 2, 3}), sig, 5, ShmemSignalOp.SET, me);
            shmem.putSignal(data.asSlice(3), MemorySegment.ofArray(new byte[] {4}), sig, 2, ShmemSignalOp.ADD, me);
            assertEquals(7, shmem.signalFetch(sig));
            assertEquals(4, data.get(JAVA_BYTE, 3));
            shmem.barrierAll();
            MemorySegment src = MemorySegment.ofArray(new byte[] {9, 9});
            IllegalArgumentException misaligned = assertThrows(IllegalArgumentException.class,
                    () -> shmem.putSignal(data, src, sig.asSlice(4), 1, ShmemSignalOp.SET, peer));
            assertTrue(misaligned.getMessage().contains("8-byte aligned"), misaligned.getMessage());
            try (Arena a = Arena.ofConfined()) {
                MemorySegment outside = a.allocate(8, 8);
                IllegalArgumentException notHeap = assertThrows(IllegalArgumentException.class,
                        () -> shmem.putSignal(data, src, outside, 1, ShmemSignalOp.SET, peer));
                assertTrue(notHeap.getMessage().contains("not in the symmetric heap"), notHeap.getMessage());
            }
            IllegalArgumentException past = assertThrows(IllegalArgumentException.class,
                    () -> shmem.putSignal(data.asSlice(63), src, sig, 1, ShmemSignalOp.SET, peer));
            assertTrue(past.getMessage().contains("not inside one live block"), past.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> shmem.putSignal(data, src, sig, 1, ShmemSignalOp.ADD, 2));
            assertThrows(NullPointerException.class, () -> shmem.putSignal(data, src, sig, 1, null, peer));
            shmem.barrierAll();
            assertEquals(7, shmem.signalFetch(sig), "no refused signal arrived");
            assertEquals(0, shmem.signalFetch(sig.asSlice(8)));
            assertEquals(0, data.get(JAVA_BYTE, 63), "no refused data arrived");
            assertEquals(1, data.get(JAVA_BYTE, 0));
        });
    }
}
