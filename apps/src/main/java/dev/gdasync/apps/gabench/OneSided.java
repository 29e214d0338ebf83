package dev.gdasync.apps.gabench;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.MpWindow;
import dev.gdasync.libmp.ga.Distribution;
import dev.gdasync.libmp.ga.GaBuffer;
import dev.gdasync.libmp.ga.GaType;
import dev.gdasync.libmp.ga.GlobalArray;
import dev.gdasync.libmp.ga.GlobalArrays;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The one-sided methods on both ranks: the two global arrays, a raw window of the same size, and rank 0's buffers
 * (plain native memory for {@code ga}, {@link GaBuffer}s for {@code ga-reg}, registered memory for {@code raw}), each a
 * source for puts and a destination for gets. Created and closed collectively; only rank 0 transfers.
 */
final class OneSided implements AutoCloseable {
    static final int TARGET = 1;

    private final Mp mp;
    private final GlobalArrays ga;
    private final Geometry geo;
    private final GlobalArray contig;
    private final GlobalArray strided;
    private final MemorySegment windowMemory;
    private final MpWindow window;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment plainSrc;
    private final MemorySegment plainDst;
    private final MemorySegment check;
    private final GaBuffer regSrc;
    private final GaBuffer regDst;
    private final MemorySegment rawMemory;
    private final MpRegistration rawReg;
    private final int maxInFlight;
    private final ArrayDeque<MpRequest> inFlight = new ArrayDeque<>();

    OneSided(Mp mp, GlobalArrays ga, Geometry geo) {
        this.mp = mp;
        this.ga = ga;
        this.geo = geo;
        int n = geo.blockElements();
        contig = ga.create("gabench-contig", GaType.LONG, Distribution.irregular(2, new int[] {2 * n}, new int[][] {{0, n}}));
        int rows = geo.blockRows();
        strided = ga.create("gabench-strided", GaType.LONG, Distribution.irregular(2,
                new int[] {2 * rows, geo.rowBytes() / Geometry.ELEMENT}, new int[][] {{0, rows}, {0}}));
        windowMemory = mp.allocate(geo.windowBytes());
        window = mp.windowCreate(windowMemory);
        boolean initiator = mp.rank() == 0;
        long max = initiator ? geo.maxBytes() : Geometry.ELEMENT;
        plainSrc = arena.allocate(max, 64);
        plainDst = arena.allocate(max, 64);
        check = arena.allocate(max, 64);
        regSrc = ga.registeredBuffer(max);
        regDst = ga.registeredBuffer(max);
        rawMemory = mp.allocate(2 * max);
        rawReg = mp.register(rawMemory);
        // The same cap on transfers in flight as the array runtime's, so that strided raw and GA post alike.
        maxInFlight = Math.max(1, Math.min(256, mp.requestPoolSize() / 4));
    }

    /** @return the buffer a method puts from */
    MemorySegment source(String method, int bytes) {
        return switch (method) {
            case "ga" -> plainSrc.asSlice(0, bytes);
            case "ga-reg" -> regSrc.segment().asSlice(0, bytes);
            case "raw" -> rawMemory.asSlice(0, bytes);
            default -> throw new IllegalArgumentException("not a one-sided method: " + method);
        };
    }

    /** @return the buffer a method gets into */
    MemorySegment destination(String method, int bytes) {
        return switch (method) {
            case "ga" -> plainDst.asSlice(0, bytes);
            case "ga-reg" -> regDst.segment().asSlice(0, bytes);
            case "raw" -> rawMemory.asSlice(geo.maxBytes(), bytes);
            default -> throw new IllegalArgumentException("not a one-sided method: " + method);
        };
    }

    /**
     * Runs one rep: {@code iters} blocking puts or gets of one patch.
     *
     * @return microseconds per operation
     */
    double time(String method, String layout, String op, int bytes, int iters) {
        boolean put = op.equals("put");
        MemorySegment buf = put ? source(method, bytes) : destination(method, bytes);
        boolean strided = layout.equals("strided");
        long start = System.nanoTime();
        for (int i = 0; i < iters; i++) {
            if (method.equals("raw")) {
                raw(put, strided, bytes, buf);
            } else {
                array(put, strided, bytes, buf);
            }
        }
        return (System.nanoTime() - start) / 1e3 / iters;
    }

    private void array(boolean put, boolean strided, int bytes, MemorySegment buf) {
        GlobalArray a;
        int[] lo;
        int[] hi;
        if (strided) {
            int rows = geo.blockRows();
            int col = geo.columnOffset() / Geometry.ELEMENT;
            a = this.strided;
            lo = new int[] {rows, col};
            hi = new int[] {rows + geo.runs(bytes) - 1, col + geo.run(bytes) / Geometry.ELEMENT - 1};
        } else {
            int n = geo.blockElements();
            a = contig;
            lo = new int[] {n};
            hi = new int[] {n + bytes / Geometry.ELEMENT - 1};
        }
        if (put) {
            a.put(lo, hi, buf, null);
        } else {
            a.get(lo, hi, buf, null);
        }
    }

    /** What a user writes by hand: one iput or iget per row run, a bounded number in flight, then wait for all. */
    private void raw(boolean put, boolean strided, int bytes, MemorySegment buf) {
        int runs = strided ? geo.runs(bytes) : 1;
        int run = strided ? geo.run(bytes) : bytes;
        for (int i = 0; i < runs; i++) {
            MemorySegment part = buf.asSlice((long) i * run, run);
            long at = strided ? geo.runOffset(i) : 0;
            inFlight.add(put ? mp.iput(part, rawReg, TARGET, at, window, 0) : mp.iget(part, rawReg, TARGET, at, window));
            if (inFlight.size() >= maxInFlight) {
                mp.wait(inFlight.poll());
            }
        }
        while (!inFlight.isEmpty()) {
            mp.wait(inFlight.poll());
        }
    }

    /**
     * Checks that the last put of a method left the source's bytes in rank 1's block: reads the patch back (the array's
     * staged get for the array methods, raw gets for raw) into a buffer of its own and compares.
     *
     * @throws IllegalStateException naming the first differing byte
     */
    void verifyPut(String method, String layout, int bytes) {
        MemorySegment got = check.asSlice(0, bytes);
        got.fill((byte) 0x5A);
        if (method.equals("raw")) {
            MemorySegment into = rawMemory.asSlice(geo.maxBytes(), bytes);
            into.fill((byte) 0x5A);
            raw(false, layout.equals("strided"), bytes, into);
            got.copyFrom(into);
        } else {
            array(false, layout.equals("strided"), bytes, got);
        }
        compare(source(method, bytes), got, method + " " + layout + " put of " + bytes + " bytes");
    }

    /** Checks that a method's last get delivered the bytes its put left there. */
    void verifyGet(String method, String layout, int bytes) {
        compare(source(method, bytes), destination(method, bytes), method + " " + layout + " get of " + bytes + " bytes");
    }

    /** Fills a method's put source with a pattern unique to the generation. */
    void prepare(String method, int bytes, long generation) {
        MemorySegment src = source(method, bytes);
        for (long i = 0; i < bytes / Geometry.ELEMENT; i++) {
            src.setAtIndex(JAVA_LONG, i, generation * 0x9E37_79B9_7F4A_7C15L + i);
        }
    }

    /** Fills a method's get destination with junk, so that a get that moved nothing fails its check. */
    void spoil(String method, int bytes) {
        destination(method, bytes).fill((byte) 0xA5);
    }

    private static void compare(MemorySegment want, MemorySegment got, String what) {
        long at = want.mismatch(got);
        if (at >= 0) {
            throw new IllegalStateException("data check failed: " + what + " differs at byte " + at);
        }
    }

    @Override
    public void close() {
        regSrc.close();
        regDst.close();
        strided.destroy();
        contig.destroy();
        mp.windowDestroy(window);
        mp.deregister(rawReg);
        mp.free(rawMemory);
        mp.free(windowMemory);
        arena.close();
    }
}
