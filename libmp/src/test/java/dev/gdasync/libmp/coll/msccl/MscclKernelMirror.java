package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.ki.MscclTableLayout;
import dev.gdasync.gdsync.ki.Reduction;
import dev.gdasync.ki.msccl.MscclKernelTable;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code gds_msccl_interpreter} transcribed statement by statement into Java, one thread per CUDA block (all started
 * at once, as a cooperative launch makes them resident), over the same table image and arena: the CPU-side check
 * that {@link MscclDeviceTable}'s encoding and the kernel's protocol (tiles, slots, flags, acknowledgements,
 * semaphores) give the collective's result, since no GPU runs the kernel here. Waits poll with acquire loads and
 * give up after a time bound (the kernel counts polls) by writing 1 + the step into the block's status; signals are
 * release stores after the block's copy, as the kernel's system fence then store.
 */
final class MscclKernelMirror {
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment image;
    private final MemorySegment arena;
    private final long tbs;
    private final long steps;
    private final long waitNanos;
    private final int tiles;
    private final long tileElems;
    private final long chunkElems;
    private final int slots;
    private final long slotBytes;
    private final int dtype;
    private final int op;
    private final long epoch;
    private final long sems;

    private MscclKernelMirror(MscclKernelTable table, MemorySegment arena, long waitNanos) {
        this.image = table.image();
        this.arena = arena;
        this.tbs = table.tbsOffset();
        this.steps = table.stepsOffset();
        this.waitNanos = waitNanos;
        this.tiles = image.get(I32, 12);
        this.tileElems = image.get(I64, 16);
        this.chunkElems = image.get(I64, 24);
        this.slots = image.get(I32, 32);
        this.slotBytes = Integer.toUnsignedLong(image.get(I32, 36));
        this.dtype = image.get(I32, 40);
        this.op = image.get(I32, 44);
        this.epoch = image.get(I64, 48);
        this.sems = image.get(I64, 56);
    }

    /**
     * Runs every block and waits for all of them.
     *
     * @param table     the checked table (its image's status words are written)
     * @param arena     the arena (8-byte aligned words)
     * @param waitNanos how long a wait polls before giving up
     * @return the blocks' failures, as {@link MscclKernelTable#failures} words them
     */
    static List<String> run(MscclKernelTable table, MemorySegment arena, long waitNanos) throws InterruptedException {
        table.clearStatuses();
        MscclKernelMirror m = new MscclKernelMirror(table, arena, waitNanos);
        List<Thread> threads = new ArrayList<>();
        for (int b = 0; b < table.blocks(); b++) {
            int block = b;
            threads.add(Thread.ofPlatform().name("msccl-mirror-" + b).start(() -> m.block(block)));
        }
        for (Thread t : threads) {
            t.join();
        }
        return table.failures(table.image().asSlice(table.tbsOffset()));
    }

    private long tb(int b, long field) {
        return tbs + (long) MscclTableLayout.TB_BYTES * b + field;
    }

    private void block(int b) {
        long firstStep = image.get(I32, tb(b, 0));
        int nsteps = image.get(I32, tb(b, 4));
        int gpuFirst = image.get(I32, tb(b, 8));
        long recvRegion = image.get(I64, tb(b, 16));
        long sendRegion = image.get(I64, tb(b, 24));
        long ackWord = image.get(I64, tb(b, 32));
        long peerAckWord = image.get(I64, tb(b, 40));
        long recvSeq = 0;
        long sendSeq = 0;
        for (int t = 0; t < tiles; t++) {
            long elems = Math.min(chunkElems - (long) t * tileElems, tileElems);
            for (int s = 0; s < nsteps; s++) {
                long st = steps + (firstStep + s) * MscclTableLayout.STEP_BYTES;
                int type = image.get(ValueLayout.JAVA_BYTE, st);
                boolean receives = type >= 1 && type <= 5;
                boolean sends = type == 0 || type == 2 || type == 3 || type == 5;
                long rq = recvSeq + 1;
                long sq = sendSeq + 1;
                long rslot = (rq - 1) % slots;
                long sslot = (sq - 1) % slots;
                boolean ok = true;
                int depid = image.get(I16, st + 10);
                if (depid >= 0) {
                    int dep = gpuFirst + depid;
                    long depSteps = image.get(I32, tb(dep, 4));
                    ok = waitGeq(sems + 8L * dep, t * depSteps + image.get(I16, st + 12) + 1);
                }
                if (ok && receives) {
                    ok = waitGeq(recvRegion + slots * slotBytes + 8 * rslot, epoch + rq);
                }
                if (ok && sends && sq > slots) {
                    ok = waitGeq(ackWord, epoch + sq - slots);
                }
                if (!ok) {
                    image.set(I64, tb(b, MscclTableLayout.TB_STATUS), 1 + s);
                    return;
                }
                long in = receives ? recvRegion + rslot * slotBytes : -1;
                long out = sends ? sendRegion + sslot * slotBytes : -1;
                execute(b, st, type, in, out, t, elems);
                if (sends) {
                    WORD.setRelease(arena, sendRegion + slots * slotBytes + 8 * sslot, epoch + sq);
                }
                if (receives) {
                    WORD.setRelease(arena, peerAckWord, epoch + rq);
                }
                if (image.get(ValueLayout.JAVA_BYTE, st + 3) != 0) {
                    WORD.setRelease(arena, sems + 8L * b, (long) t * nsteps + s + 1);
                }
                if (receives) {
                    recvSeq = rq;
                }
                if (sends) {
                    sendSeq = sq;
                }
            }
        }
    }

    private boolean waitGeq(long word, long value) {
        long deadline = System.nanoTime() + waitNanos;
        for (int i = 0; ; i++) {
            if ((long) WORD.getAcquire(arena, word) - value >= 0) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            if (i < 100) {
                Thread.onSpinWait();
            } else if (i < 200) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(20_000);
            }
        }
    }

    /** gds_msccl_execute: piece j of the message is tile t of chunk off + j. */
    private void execute(int b, long st, int type, long in, long out, int t, long elems) {
        int srcbuf = Byte.toUnsignedInt(image.get(ValueLayout.JAVA_BYTE, st + 1));
        int dstbuf = Byte.toUnsignedInt(image.get(ValueLayout.JAVA_BYTE, st + 2));
        int srcoff = Short.toUnsignedInt(image.get(I16, st + 4));
        int dstoff = Short.toUnsignedInt(image.get(I16, st + 6));
        int cnt = Short.toUnsignedInt(image.get(I16, st + 8));
        long elem = dtype == 0 || dtype == 2 ? 4 : 8;
        for (int j = 0; j < cnt; j++) {
            long src = srcbuf == 255 ? -1
                    : image.get(I64, tb(b, 48 + 8L * srcbuf)) + ((srcoff + j) * chunkElems + t * tileElems) * elem;
            long dst = dstbuf == 255 ? -1
                    : image.get(I64, tb(b, 48 + 8L * dstbuf)) + ((dstoff + j) * chunkElems + t * tileElems) * elem;
            long rin = in < 0 ? -1 : in + j * elems * elem;
            long rout = out < 0 ? -1 : out + j * elems * elem;
            for (long i = 0; i < elems; i++) {
                long o = i * elem;
                switch (type) {
                    case 0 -> copy(src + o, rout + o);
                    case 1 -> copy(rin + o, dst + o);
                    case 2 -> {
                        copy(rin + o, dst + o);
                        copy(rin + o, rout + o);
                    }
                    case 3 -> combine(src + o, rin + o, rout + o);
                    case 4 -> combine(src + o, rin + o, dst + o);
                    case 5 -> {
                        combine(src + o, rin + o, dst + o);
                        copy(dst + o, rout + o);
                    }
                    case 6 -> copy(src + o, dst + o);
                    case 7 -> combine(dst + o, src + o, dst + o);
                    default -> {
                    }
                }
            }
        }
    }

    private void copy(long from, long to) {
        if (dtype == 0 || dtype == 2) {
            arena.set(I32, to, arena.get(I32, from));
        } else {
            arena.set(I64, to, arena.get(I64, from));
        }
    }

    /** to = a op b, in the table's type. */
    private void combine(long a, long b, long to) {
        switch (dtype) {
            case 0 -> arena.set(I32, to, Reduction.combine(op, arena.get(I32, a), arena.get(I32, b)));
            case 1 -> arena.set(I64, to, Reduction.combine(op, arena.get(I64, a), arena.get(I64, b)));
            case 2 -> arena.set(ValueLayout.JAVA_FLOAT_UNALIGNED, to, Reduction.combine(op,
                    arena.get(ValueLayout.JAVA_FLOAT_UNALIGNED, a), arena.get(ValueLayout.JAVA_FLOAT_UNALIGNED, b)));
            default -> arena.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, to, Reduction.combine(op,
                    arena.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, a), arena.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, b)));
        }
    }
}
