package dev.gdasync.libmp.shmem;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SA model: puts, puts with signal, quiets, barriers and signal waits rung and awaited by streams, the CPU only
 * queueing them, on host streams; {@link ShmemOnStreamGpuTest} runs the same checks on CUDA streams where a GPU is
 * present (its name puts it in the GPU bundle).
 */
@Timeout(300)
class ShmemOnStreamTest {
    @TempDir
    Path base;

    /**
     * On each PE's stream: write iteration i's payload into a heap source, putSignalOnStream it (SET i) to the next
     * PE, wait on the stream for this PE's own signal to be i, check the payload from the previous PE in a stream
     * task, acknowledge with an ADD signal, and wait for the next PE's acknowledgement before reusing the source.
     * The CPU only queues; it checks the stream's count of mismatches at the end.
     */
    static void ringOfSignals(Shmem shmem, Stream stream, int iterations) {
        int me = shmem.myPe();
        int n = shmem.nPes();
        int next = (me + 1) % n;
        int prev = (me + n - 1) % n;
        int[] sizes = {8, 64, 1000, 4096, 40_000};
        int max = 40_000;
        MemorySegment src = shmem.calloc(max / 8, 8);
        MemorySegment data = shmem.calloc(max / 8, 8);
        MemorySegment sig = shmem.calloc(1, 8);
        MemorySegment ack = shmem.calloc(1, 8);
        AtomicLong mismatches = new AtomicLong();
        AtomicLong checked = new AtomicLong();
        for (int i = 1; i <= iterations; i++) {
            long it = i;
            int words = sizes[i % sizes.length] / 8;
            stream.launch(() -> {
                for (int k = 0; k < words; k++) {
                    src.setAtIndex(JAVA_LONG, k, it * 100_003 + k);
                }
            });
            shmem.putSignalOnStream(data, src.asSlice(0, 8L * words), sig, i, ShmemSignalOp.SET, next, stream);
            shmem.signalWaitUntilOnStream(sig, ShmemCmp.EQ, i, stream);
            stream.launch(() -> {
                for (int k = 0; k < words; k++) {
                    if (data.getAtIndex(JAVA_LONG, k) != it * 100_003 + k) {
                        mismatches.incrementAndGet();
                    }
                }
                checked.addAndGet(words);
            });
            shmem.putSignalOnStream(ack, MemorySegment.NULL, ack, 1, ShmemSignalOp.ADD, prev, stream);
            shmem.signalWaitUntilOnStream(ack, ShmemCmp.GE, i, stream);
        }
        shmem.quietOnStream(stream);
        stream.synchronize();
        assertEquals(0, mismatches.get(), "payload words that did not match their signal's iteration, of "
                + checked.get());
        assertEquals(iterations, sig.get(JAVA_LONG, 0));
        assertEquals(iterations, ack.get(JAVA_LONG, 0));
    }

    /**
     * Round after round, each PE's stream puts the round number into its slot at every PE, then barriers; a stream
     * task then finds every PE's slot holding the round, and a second barrier keeps the next round's puts out until
     * every PE checked.
     */
    static void barriers(Shmem shmem, Stream stream, int rounds) {
        int me = shmem.myPe();
        int n = shmem.nPes();
        MemorySegment slots = shmem.calloc(n, 8);
        MemorySegment mine = shmem.calloc(1, 8);
        AtomicLong wrong = new AtomicLong();
        for (int r = 1; r <= rounds; r++) {
            long round = r;
            stream.launch(() -> mine.set(JAVA_LONG, 0, round));
            for (int p = 0; p < n; p++) {
                shmem.putOnStream(slots.asSlice(8L * me, 8), mine, p, stream);
            }
            shmem.barrierAllOnStream(stream);
            stream.launch(() -> {
                for (int p = 0; p < n; p++) {
                    if (slots.getAtIndex(JAVA_LONG, p) != round) {
                        wrong.incrementAndGet();
                    }
                }
            });
            shmem.barrierAllOnStream(stream);
        }
        stream.synchronize();
        assertEquals(0, wrong.get(), "slots that did not hold the round after the stream's barrier");
    }

    private void onHostStreams(int n, Function<Shmem, Void> body) throws Exception {
        ShmemRanks.run(n, base, 1 << 20, body::apply);
    }

    @Test
    void putSignalOnHostStreamsDeliversDataBeforeTheSignal() throws Exception {
        onHostStreams(3, shmem -> {
            try (HostStream stream = HostStream.create("shmem-sa-" + shmem.myPe())) {
                ringOfSignals(shmem, stream, 600);
            }
            shmem.barrierAll();
            return null;
        });
    }

    @Test
    void barrierAllOnHostStreamsSeparatesRounds() throws Exception {
        onHostStreams(4, shmem -> {
            try (HostStream stream = HostStream.create("shmem-barrier-" + shmem.myPe())) {
                barriers(shmem, stream, 100);
            }
            shmem.barrierAll();
            return null;
        });
    }

    @Test
    void badInputOnStreamsIsRefusedAndQueuesNothing() throws Exception {
        onHostStreams(2, shmem -> {
            int peer = 1 - shmem.myPe();
            MemorySegment block = shmem.calloc(8, 8);
            MemorySegment sig = shmem.calloc(1, 8);
            try (HostStream stream = HostStream.create("shmem-bad-" + shmem.myPe())) {
                IllegalArgumentException notHeap = assertThrows(IllegalArgumentException.class,
                        () -> shmem.putOnStream(block, MemorySegment.ofArray(new long[2]), peer, stream));
                assertTrue(notHeap.getMessage().contains("source"), notHeap.getMessage());
                assertThrows(IllegalArgumentException.class,
                        () -> shmem.putOnStream(block.asSlice(32), block, peer, stream));
                assertThrows(IllegalArgumentException.class, () -> shmem.putOnStream(block, block, 2, stream));
                IllegalArgumentException lt = assertThrows(IllegalArgumentException.class,
                        () -> shmem.signalWaitUntilOnStream(sig, ShmemCmp.LT, 1, stream));
                assertTrue(lt.getMessage().contains("EQ or GE only"), lt.getMessage());
                assertThrows(IllegalArgumentException.class,
                        () -> shmem.putSignalOnStream(block, block.asSlice(0, 8), sig.asSlice(4), 1, ShmemSignalOp.SET,
                                peer, stream));
                assertThrows(NullPointerException.class, () -> shmem.quietOnStream(null));
                stream.synchronize();
            }
            HostStream closed = HostStream.create("shmem-closed");
            closed.close();
            assertThrows(IllegalStateException.class, () -> shmem.putOnStream(block, block, peer, closed));
            assertThrows(IllegalStateException.class,
                    () -> shmem.putSignalOnStream(block, block, sig, 1, ShmemSignalOp.ADD, peer, closed));
            // Nothing refused was left prepared in the queue pair: the CPU may still put to the peer.
            shmem.pLong(block.asSlice(8), 5, peer);
            shmem.barrierAll();
            assertEquals(0, block.get(JAVA_LONG, 0), "nothing refused arrived");
            assertEquals(5, block.get(JAVA_LONG, 8));
            assertEquals(0, sig.get(JAVA_LONG, 0));
            return null;
        });
    }
}
