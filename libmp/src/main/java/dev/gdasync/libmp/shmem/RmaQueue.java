package dev.gdasync.libmp.shmem;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/**
 * One PE's operations in flight on the NIC, and the registered staging memory they move through. Every put copies
 * its source into staging before it is posted, so the caller's buffer is free again when the call returns (local
 * completion at once) and any memory (a Java heap segment too) can be a source. A get lands in staging and is copied
 * to its destination when it completes. Staging is handed out by a bump pointer that goes back to zero once nothing
 * is in flight; when it is used up, or too many requests are in flight, the queue completes everything first (as
 * {@code quiet} does: completing early is always allowed). Not thread-safe: the PE's thread only.
 */
final class RmaQueue {
    private final Mp mp;
    private final MpWindow window;
    private final MemorySegment staging;
    private final MpRegistration stagingReg;
    private final int maxInFlight;
    private final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
    private long used;

    /** A request and, for a get, where its staged bytes go once it completed. */
    private record InFlight(MpRequest request, MemorySegment staged, MemorySegment copyTo) {
    }

    /**
     * @param maxInFlight the most requests this queue keeps in flight before it completes them all; the queues of
     *                    one Mp together stay below its request pool
     */
    RmaQueue(Mp mp, MpWindow window, long stagingBytes, int maxInFlight) {
        this.mp = mp;
        this.window = window;
        this.staging = mp.allocate(stagingBytes);
        try {
            this.stagingReg = mp.register(staging);
        } catch (RuntimeException e) {
            mp.free(staging);
            throw e;
        }
        this.maxInFlight = maxInFlight;
    }

    /** @return the most requests this queue keeps in flight */
    int maxInFlight() {
        return maxInFlight;
    }

    /** @return the largest piece one operation may move; larger transfers are cut into pieces of this size */
    long pieceBytes() {
        return staging.byteSize();
    }

    /** Posts a put of {@code source} (at most {@link #pieceBytes()}) to {@code displacement} of {@code pe}'s heap. */
    void put(MemorySegment source, int pe, long displacement) {
        MemorySegment s = reserve(source.byteSize());
        s.copyFrom(source);
        track(mp.iput(s, stagingReg, pe, displacement, window, 0), s, null);
    }

    /** Posts a get of {@code dest.byteSize()} bytes (at most {@link #pieceBytes()}) from {@code pe}'s heap. */
    void get(MemorySegment dest, int pe, long displacement) {
        MemorySegment s = reserve(dest.byteSize());
        track(mp.iget(s, stagingReg, pe, displacement, window), s, dest);
    }

    /** Posts a fetch-and-add whose old value nobody reads (completed by {@link #quiet}). */
    void add(int pe, long displacement, long addend) {
        MemorySegment s = reserve(8);
        track(mp.ifetchAdd(s, stagingReg, pe, displacement, addend, window), s, null);
    }

    /** Runs a fetch-and-add now and returns the word's old value. */
    long fetchAdd(int pe, long displacement, long addend) {
        MemorySegment s = reserve(8);
        MpRequest r = mp.ifetchAdd(s, stagingReg, pe, displacement, addend, window);
        return completeOne(r, s);
    }

    /** Runs a compare-and-swap now and returns the word's old value. */
    long compareSwap(int pe, long displacement, long compare, long swap) {
        MemorySegment s = reserve(8);
        MpRequest r = mp.icompareSwap(s, stagingReg, pe, displacement, compare, swap, window);
        return completeOne(r, s);
    }

    /**
     * Completes every operation in flight: puts and atomics reached their target, gets were copied to their
     * destinations. If one failed, the others are still waited for (each ends: the NIC fails a dead peer's requests,
     * a wait times out), and the first failure is thrown.
     */
    void quiet() {
        RuntimeException first = null;
        while (!inFlight.isEmpty()) {
            InFlight f = inFlight.poll();
            try {
                mp.wait(f.request);
                if (f.copyTo != null) {
                    f.copyTo.copyFrom(f.staged);
                }
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        used = 0;
        if (first != null) {
            throw first;
        }
    }

    /** @return the number of operations in flight */
    int inFlight() {
        return inFlight.size();
    }

    void close() {
        mp.deregister(stagingReg);
        mp.free(staging);
    }

    private long completeOne(MpRequest r, MemorySegment s) {
        mp.wait(r);
        long old = s.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0);
        if (inFlight.isEmpty()) {
            used = 0;
        }
        return old;
    }

    private void track(MpRequest r, MemorySegment staged, MemorySegment copyTo) {
        inFlight.add(new InFlight(r, staged, copyTo));
    }

    /** @return {@code bytes} of staging, 8-aligned, after completing everything in flight if they do not fit */
    private MemorySegment reserve(long bytes) {
        long at = (used + 7) & -8L;
        if (at + bytes > staging.byteSize() || inFlight.size() >= maxInFlight) {
            quiet();
            at = 0;
        }
        used = at + bytes;
        return staging.asSlice(at, bytes);
    }
}
