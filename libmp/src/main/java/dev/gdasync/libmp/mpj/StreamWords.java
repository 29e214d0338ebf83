package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.libmp.Mp;

import java.lang.foreign.MemorySegment;

/**
 * The 32-bit words streams and the device tell each other through, in one block of the Mp's memory:
 * <pre>
 *   [rung words: size x 4][completion words: COMPLETIONS x 4]
 * </pre>
 * Rung word {@code p} is written by the streams only: after a stream rang its {@code n}-th send to peer {@code p}, it
 * writes {@code n} there, so the device knows its queue pair to {@code p} is free for the CPU's sends again. A
 * completion word belongs to one wait of a stream on an MPJ request ({@link MpjOnStream#waitOnStream}): {@link #ARMED}
 * while the stream may wait on it, {@link #DONE} once the device completed the request (and MPJ unpacked it), and
 * {@link #FREE} again once the stream passed its wait (the stream writes it). Guarded by the device's lock, but for
 * the stores and loads of the words themselves.
 */
final class StreamWords {
    /** How many waits on MPJ requests may be outstanding on streams at once. */
    static final int COMPLETIONS = 1024;
    static final int FREE = 2;
    static final int ARMED = 0;
    static final int DONE = 1;

    private final MemorySegment memory;
    private final int size;
    private final MemoryWord[] rung;
    private int cursor;

    StreamWords(Mp mp) {
        this.size = mp.size();
        this.memory = mp.allocate(4L * (size + COMPLETIONS));
        this.rung = new MemoryWord[size];
        for (int p = 0; p < size; p++) {
            rung[p] = MemoryWord.word32(memory, 4L * p, "MPJ stream sends rung to rank " + p);
        }
        for (int w = 0; w < COMPLETIONS; w++) {
            completion(w).set32(FREE, false);
        }
    }

    /** @return rung word {@code p} */
    MemoryWord rung(int p) {
        return rung[p];
    }

    private MemoryWord completion(int w) {
        return MemoryWord.word32(memory, 4L * (size + w), "MPJ request completion #" + w);
    }

    /**
     * @return a free completion word, now {@link #ARMED}, or null when every one is held by a stream that has not
     *         passed its wait yet
     */
    MemoryWord arm() {
        for (int i = 0; i < COMPLETIONS; i++) {
            int w = (cursor + i) % COMPLETIONS;
            MemoryWord word = completion(w);
            if (word.getAcquire32() == FREE) {
                cursor = (w + 1) % COMPLETIONS;
                word.set32(ARMED, true);
                return word;
            }
        }
        return null;
    }

    /** Gives back a word {@link #arm} returned that no stream will wait on (its post was refused). */
    static void disarm(MemoryWord word) {
        word.set32(FREE, true);
    }

    /** The request is complete (and unpacked): the stream waiting on the word moves on. */
    static void raise(MemoryWord word) {
        word.set32(DONE, true);
    }
}
