package dev.gdasync.libmp.comm;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpWindow;
import dev.gdasync.libmp.PutFlags;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The ready handshake's memory (LibMP's comm layer): every rank exposes a window of one 32-bit counter
 * per rank. Rank r announces "my receive from you is posted" to rank p by a put of its running count into
 * p's counter for r; p waits until that counter reaches the count it expects. Counters only grow, so a
 * GEQ wait (wrap-safe) never misses an announcement and announcements need no completion.
 */
final class ReadyTable {
    private final Mp mp;
    private final MemorySegment table;
    private final MpWindow window;
    private final MemorySegment staging;
    private final MpRegistration stagingReg;
    private final MemoryWord[] words;
    /** Announcements sent to each rank. */
    private final int[] sent;
    /** Announcements taken from each rank. */
    private final int[] taken;

    ReadyTable(Mp mp) {
        this.mp = mp;
        int n = mp.size();
        this.table = mp.allocate(4L * n);
        this.window = mp.windowCreate(table);
        this.staging = mp.allocate(4L * n);
        this.stagingReg = mp.register(staging);
        this.words = new MemoryWord[n];
        for (int p = 0; p < n; p++) {
            words[p] = MemoryWord.word32(table, 4L * p, "ready counter of rank " + p + " at rank " + mp.rank());
        }
        this.sent = new int[n];
        this.taken = new int[n];
    }

    /** Stages the next announcement to {@code peer}; returns the source of the put. */
    MemorySegment nextAnnouncement(int peer) {
        sent[peer]++;
        MemorySegment src = staging.asSlice(4L * peer, 4);
        src.set(JAVA_INT, 0, sent[peer]);
        return src;
    }

    MpRegistration stagingRegistration() {
        return stagingReg;
    }

    MpWindow window() {
        return window;
    }

    /** Where this rank's counter lives in every peer's table. */
    long displacementOfThisRank() {
        return 4L * mp.rank();
    }

    static int flags() {
        // Inline: the count is read at post time; NOWAIT: no completion, nothing to reap.
        return PutFlags.INLINE | PutFlags.NOWAIT;
    }

    /** @return the counter {@code peer} writes, and the value the next announcement will bring */
    MemoryWord word(int peer) {
        return words[peer];
    }

    int nextExpected(int peer) {
        return taken[peer] + 1;
    }

    void take(int peer) {
        taken[peer]++;
    }

    boolean isReady(int peer) {
        return words[peer].getAcquire32() - nextExpected(peer) >= 0;
    }
}
