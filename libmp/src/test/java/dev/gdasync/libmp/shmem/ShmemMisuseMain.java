package dev.gdasync.libmp.shmem;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.testutil.Misuse;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The misuse suite of shmem between two PE processes (run by {@link ShmemMisuseProcessTest}): puts, gets, p/g and
 * atomics out of a symmetric object's bounds, on memory outside the heap, misaligned or to a PE that does not exist,
 * and collective allocations the PEs disagree on. Each case asserts the exact message, that it came at once, that
 * every byte of the guard blocks around the target and of the target itself is unchanged on both PEs, and that the
 * heap still works (a put and get of the target, and an allocation, after the refusals).
 */
public final class ShmemMisuseMain {
    private static final int BLOCK = 256;
    private static final byte GUARD = (byte) 0xA5;
    private static final byte TARGET = (byte) 0x3C;

    private ShmemMisuseMain() {
    }

    /**
     * @param args none
     */
    public static void main(String[] args) {
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(Duration.ofSeconds(60));
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot, cfg);
             Shmem s = Shmem.init(mp, 1L << 20); Arena arena = Arena.ofConfined()) {
            new Suite(s, arena).run();
        }
    }

    private static final class Suite {
        final Shmem s;
        final int me;
        final int peer;
        final MemorySegment before;
        final MemorySegment target;
        final MemorySegment after;
        final MemorySegment local;
        final Misuse m = new Misuse();

        Suite(Shmem s, Arena arena) {
            this.s = s;
            me = s.myPe();
            peer = 1 - me;
            before = s.malloc(BLOCK);
            target = s.malloc(BLOCK);
            after = s.malloc(BLOCK);
            before.fill(GUARD);
            target.fill(TARGET);
            after.fill(GUARD);
            local = arena.allocate(4 * BLOCK, 64);
            s.barrierAll();
        }

        /** Every byte of the three blocks on this PE, after a barrier (what the peer did has landed). */
        String canaries() {
            s.barrierAll();
            for (int i = 0; i < BLOCK; i++) {
                if (before.get(JAVA_BYTE, i) != GUARD || after.get(JAVA_BYTE, i) != GUARD) {
                    return "PE " + me + ": a guard byte changed at " + i;
                }
                if (target.get(JAVA_BYTE, i) != TARGET) {
                    return "PE " + me + ": the target changed at byte " + i;
                }
            }
            return null;
        }

        /** A segment at the target's offset + from, of bytes, whatever the target's own bounds. */
        MemorySegment span(long from, long bytes) {
            return MemorySegment.ofAddress(target.address() + from).reinterpret(bytes);
        }

        /** Heap offsets as messages give them: the suite's first block lies at the heap's first user offset. */
        long off(MemorySegment m) {
            return m.address() - base;
        }

        String hex(long address) {
            return "0x" + Long.toHexString(address);
        }

        /** The refusal of a range outside one live block. */
        String notInBlock(String what, long bytes, MemorySegment at) {
            return what + ": " + bytes + " bytes at heap offset " + off(at) + " are not inside one live block of the"
                    + " symmetric heap (freed, never allocated, or past a block's end)";
        }

        String notInHeap(String what, MemorySegment m) {
            return what + " " + hex(m.address()) + " (" + m.byteSize() + " bytes) is not in the symmetric heap ["
                    + hex(before.address()) + ", " + hex(before.address() + (1L << 20)) + ")";
        }

        String misaligned(String what, MemorySegment m) {
            return what + " " + hex(m.address()) + " (" + m.byteSize() + " bytes) is not 8-byte aligned";
        }

        String shortElement(String what, MemorySegment m) {
            return what + " " + hex(m.address()) + " (" + m.byteSize() + " bytes) is shorter than its 8-byte element:"
                    + " pass a segment of at least 8 bytes";
        }

        long base;

        void run() {
            // Offsets count from the heap's memory, whose header (two agreement areas of a record per PE, and the
            // stream barrier's line) is 192 bytes on 2 PEs; the suite's first malloc is the first block after it,
            // where the user heap that messages give as a range starts.
            base = before.address() - 192;
            local.fill((byte) 0x77);
            Misuse.Check canaries = this::canaries;
            m.expect("put-past-the-block-end", IllegalArgumentException.class,
                    notInBlock("dest", 32, span(BLOCK - 16, 32)),
                    () -> s.put(span(BLOCK - 16, 32), local.asSlice(0, 32), peer), canaries);
            m.expect("putNbi-past-the-block-end", IllegalArgumentException.class,
                    notInBlock("dest", 16, span(BLOCK - 8, 16)),
                    () -> s.putNbi(span(BLOCK - 8, 16), local.asSlice(0, 16), peer), canaries);
            m.expect("get-past-the-block-end", IllegalArgumentException.class,
                    notInBlock("source", 32, span(BLOCK - 16, 32)),
                    () -> s.get(local.asSlice(0, 32), span(BLOCK - 16, 32), peer), canaries);
            m.expect("put-before-the-heap", IllegalArgumentException.class,
                    notInHeap("dest", MemorySegment.ofAddress(before.address() - 4096 * 16).reinterpret(8)),
                    () -> s.put(MemorySegment.ofAddress(before.address() - 4096 * 16).reinterpret(8),
                            local.asSlice(0, 8), peer), canaries);
            m.expect("put-to-non-symmetric-memory", IllegalArgumentException.class, notInHeap("dest", local.asSlice(0, 8)),
                    () -> s.put(local.asSlice(0, 8), local.asSlice(8, 8), peer), canaries);
            m.expect("get-from-non-symmetric-memory", IllegalArgumentException.class, notInHeap("source", local.asSlice(8, 8)),
                    () -> s.get(local.asSlice(0, 8), local.asSlice(8, 8), peer), canaries);
            m.expect("atomic-on-non-symmetric-memory", IllegalArgumentException.class,
                    notInHeap("the atomic word", local.asSlice(0, 8)),
                    () -> s.atomicFetchAdd(local.asSlice(0, 8), 1, peer), canaries);
            m.expect("atomic-straddling-the-block-end", IllegalArgumentException.class,
                    misaligned("the atomic word", span(BLOCK - 4, 8)),
                    () -> s.atomicAdd(span(BLOCK - 4, 8), 1, peer), canaries);
            m.expect("atomic-misaligned", IllegalArgumentException.class, misaligned("the atomic word", target.asSlice(4, 8)),
                    () -> s.atomicCompareSwap(target.asSlice(4, 8), 0, 1, peer), canaries);
            m.expect("p-to-a-pe-that-does-not-exist", IllegalArgumentException.class, "PE 2 is out of range: PEs are 0..1",
                    () -> s.pLong(target, 1, 2), canaries);
            m.expect("g-straddling-the-block-end", IllegalArgumentException.class, misaligned("source", span(BLOCK - 4, 8)),
                    () -> s.gLong(span(BLOCK - 4, 8), peer), canaries);
            m.expect("put-signal-word-straddling-the-block-end", IllegalArgumentException.class,
                    misaligned("the atomic word", span(BLOCK - 4, 8)),
                    () -> s.putSignal(target.asSlice(0, 8), local.asSlice(0, 8), span(BLOCK - 4, 8), 1,
                            ShmemSignalOp.SET, peer), canaries);
            m.expect("p-into-a-4-byte-destination", IllegalArgumentException.class, shortElement("dest", target.asSlice(0, 4)),
                    () -> s.pLong(target.asSlice(0, 4), 1, peer), canaries);
            m.expect("g-from-a-4-byte-source", IllegalArgumentException.class, shortElement("source", target.asSlice(0, 4)),
                    () -> s.gLong(target.asSlice(0, 4), peer), canaries);
            m.expect("malloc-sizes-differ", IllegalArgumentException.class, "collective malloc #4: PE " + peer
                    + " called malloc #4 with " + (me == 0 ? 128 : 64) + " bytes, PE " + me + " called malloc with "
                    + (me == 0 ? 64 : 128) + " bytes: every PE makes the same collective calls with the same arguments;"
                    + " nothing was changed",
                    () -> s.malloc(me == 0 ? 64 : 128), canaries, () -> offsetOf(s.malloc(64)) == 3L * BLOCK
                            ? null : "the refused malloc left something allocated");
            m.expect("free-of-a-non-block", IllegalArgumentException.class, "collective free #6: PE " + peer
                    + " called free #6 with " + (me == 0 ? "the block at heap offset " + off(after) : "no live block")
                    + ", PE " + me + " called free with " + (me == 0 ? "no live block" : "the block at heap offset "
                    + off(after)) + ": every PE makes the same collective calls with the same arguments; nothing was"
                    + " changed",
                    () -> s.free(me == 0 ? target.asSlice(64) : after), canaries);
            // still usable: a put and a get of the whole target, then a malloc, all on both PEs
            m.expect("still-usable", IllegalStateException.class, "usable", () -> {
                s.put(target, target, peer);
                s.barrierAll();
                long[] got = new long[BLOCK / 8];
                s.get(got, target, peer);
                for (long w : got) {
                    if (w != 0x3C3C3C3C3C3C3C3CL) {
                        throw new AssertionError("the peer's target holds " + Long.toHexString(w));
                    }
                }
                s.malloc(8);
                throw new IllegalStateException("usable");
            }, canaries);
            m.done();
        }

        /** A block's place relative to the first block of the suite. */
        long offsetOf(MemorySegment block) {
            return block.address() - before.address();
        }
    }
}
