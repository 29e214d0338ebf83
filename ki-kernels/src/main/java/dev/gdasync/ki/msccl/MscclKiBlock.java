package dev.gdasync.ki.msccl;

import dev.gdasync.gdsync.ki.MscclTableLayout;
import dev.gdasync.gdsync.ki.Reduction;
import dev.gdasync.gdsync.ki.ShmemKiLayout;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.shmem.ShmemDevice;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

import static dev.gdasync.gdsync.ki.MscclTableLayout.HEADER_BYTES;
import static dev.gdasync.gdsync.ki.MscclTableLayout.STEP_BYTES;
import static dev.gdasync.gdsync.ki.MscclTableLayout.TB_BYTES;

/**
 * The host mirror of {@code msccl_interpreter.cuh} in its KI form: one thread block of an MSCCL-IR program, run by a
 * block thread of the host KI executor over the program's kernel table (libmp's {@code MscclDeviceTable}, encoded
 * for one rank: {@code encodeRank}) and a shmem KI launch's state. Its transport is the shmem device API
 * ({@link ShmemDevice}, the mirror of {@code shmem.cuh}): a message is a put-with-signal of a staging slot into the
 * receiving block's slot with the flag as its signal (two templated writes rung in order), an acknowledgement a p of
 * the consumed count into the sender's word, and every wait (semaphore, flag, free slot) a bounded
 * {@link ShmemDevice#waitUntil}. Semaphores are WRITE64 (release) and WAIT64 GEQ (acquire) on words of this rank's
 * heap, with the values of the host and stream interpreters.
 *
 * <p>The table, as the kernel reads it ({@link MscclTableLayout}): a 64-byte header (magic, version, blocks, tiles,
 * tile and chunk elements, slots, slot bytes, type, operator, epoch base, the semaphores' heap offset), a 96-byte
 * record per block (first step, steps, flags, its receive region, the receiving peer block's region, its
 * acknowledgement word, the sending peer block's acknowledgement word — all heap offsets, the same on every rank —,
 * the rank's input, output and scratch as offsets from the heap's base, a status word, then the KI form's send and
 * receive PEs and its staging region), and a 16-byte record per step.
 *
 * <p>Applications launch it through {@code HostKiExecutor.msccl}, which checks the launch with {@link #check} and runs
 * {@link #run} on every block's thread.
 */
public final class MscclKiBlock {
    /** The step types' names in MSCCL-IR, by code. */
    private static final String[] TYPES = {"s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop"};
    /** In place of a step type: the wait for the last acknowledgement, after the block's last step. */
    private static final int AFTER_LAST_STEP = -1;
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final ShmemDevice dev;
    private final long heap;
    private final long h;
    private final int block;
    private final int ntb;
    private final int tiles;
    private final long tileElems;
    private final long chunkElems;
    private final int slots;
    private final long slotBytes;
    private final int dtype;
    private final int op;
    private final long base;
    private final long sem;
    private final long tb;

    private MscclKiBlock(ShmemDevice dev, long heap, long program, int block) {
        this.dev = dev;
        this.heap = heap;
        this.h = program;
        this.block = block;
        this.ntb = u32(h + MscclTableLayout.H_NTB);
        this.tiles = u32(h + MscclTableLayout.H_TILES);
        this.tileElems = u64(h + MscclTableLayout.H_TILE_ELEMS);
        this.chunkElems = u64(h + MscclTableLayout.H_CHUNK_ELEMS);
        this.slots = u32(h + MscclTableLayout.H_SLOTS);
        this.slotBytes = u32(h + MscclTableLayout.H_SLOT_BYTES);
        this.dtype = u32(h + MscclTableLayout.H_DTYPE);
        this.op = u32(h + MscclTableLayout.H_OP);
        this.base = u64(h + MscclTableLayout.H_EPOCH_BASE);
        this.sem = u64(h + MscclTableLayout.H_SEM_OFFSET);
        this.tb = h + HEADER_BYTES + (long) TB_BYTES * block;
    }

    /**
     * Checks a program table as the kernel's entry does.
     *
     * @param program   the table ({@code MscclDeviceTable.encodeRank}), native and 8-byte aligned
     * @param blocks    the blocks of the launch
     * @param firstTile the first tile the launch runs
     * @param endTile   one past its last tile
     * @throws IllegalArgumentException if it is not a KI-form table for this many blocks, or the tiles are not its
     */
    public static void check(MemorySegment program, int blocks, int firstTile, int endTile) {
        long a = program.address();
        if (!program.isNative() || program.byteSize() < HEADER_BYTES + (long) TB_BYTES * blocks || (a & 7) != 0
                || u32(a + MscclTableLayout.H_MAGIC) != MscclTableLayout.MAGIC
                || u32(a + MscclTableLayout.H_VERSION) != MscclTableLayout.VERSION
                || u32(a + MscclTableLayout.H_NTB) != blocks) {
            throw new IllegalArgumentException(program + " is not an MSCCL kernel table of " + blocks
                    + " thread blocks (encode it with MscclDeviceTable.encodeRank)");
        }
        int tiles = u32(a + MscclTableLayout.H_TILES);
        if (firstTile < 0 || endTile < firstTile || endTile > tiles) {
            throw new IllegalArgumentException("tiles [" + firstTile + ", " + endTile + ") are outside the table's "
                    + tiles + " tiles");
        }
    }

    /**
     * Runs block {@code block}'s steps for tiles [firstTile, endTile), on the block's thread.
     *
     * @param dev       the block's shmem context
     * @param state     the address of the launch's shmem KI state
     * @param program   the address of the program table ({@link #check}ed)
     * @param block     the block, its thread block in the program
     * @param firstTile the first tile
     * @param endTile   one past the last tile
     * @throws KiException if a wait timed out or the launch was aborted (the block's status names the step)
     */
    public static void run(ShmemDevice dev, long state, long program, int block, int firstTile, int endTile) {
        new MscclKiBlock(dev, u64(state + ShmemKiLayout.S_HEAP), program, block).run(firstTile, endTile);
    }

    private void run(int firstTile, int endTile) {
        int first = u32(tb + MscclTableLayout.TB_FIRST_STEP);
        int nsteps = u32(tb + MscclTableLayout.TB_NSTEPS);
        long recvRegion = u64(tb + MscclTableLayout.TB_RECV_REGION);
        long sendRegion = u64(tb + MscclTableLayout.TB_SEND_REGION);
        long ackWord = u64(tb + MscclTableLayout.TB_ACK_WORD);
        long peerAck = u64(tb + MscclTableLayout.TB_PEER_ACK_WORD);
        int sendPe = u32(tb + MscclTableLayout.TB_KI_SEND_PE);
        int recvPe = u32(tb + MscclTableLayout.TB_KI_RECV_PE);
        long staging = u64(tb + MscclTableLayout.TB_KI_STAGING);
        long steps = h + HEADER_BYTES + (long) TB_BYTES * ntb;
        int sendsPerTile = 0;
        int recvsPerTile = 0;
        for (int s = 0; s < nsteps; s++) {
            int type = u8(steps + (long) STEP_BYTES * (first + s) + MscclTableLayout.ST_TYPE);
            sendsPerTile += sends(type) ? 1 : 0;
            recvsPerTile += receives(type) ? 1 : 0;
        }
        long recvSeq = (long) firstTile * recvsPerTile;
        long sendSeq = (long) firstTile * sendsPerTile;
        long sentBefore = sendSeq;
        long flags = slots * slotBytes;
        for (int tile = firstTile; tile < endTile; tile++) {
            long elems = Math.min(tileElems, chunkElems - tile * tileElems);
            for (int s = 0; s < nsteps; s++) {
                long st = steps + (long) STEP_BYTES * (first + s);
                int type = u8(st + MscclTableLayout.ST_TYPE);
                int depid = ALL.get(ValueLayout.JAVA_SHORT_UNALIGNED, st + MscclTableLayout.ST_DEPID);
                int deps = ALL.get(ValueLayout.JAVA_SHORT_UNALIGNED, st + MscclTableLayout.ST_DEPS);
                int cnt = ALL.get(ValueLayout.JAVA_SHORT_UNALIGNED, st + MscclTableLayout.ST_CNT) & 0xffff;
                if (depid >= 0) {
                    int depSteps = u32(h + HEADER_BYTES + (long) TB_BYTES * depid + MscclTableLayout.TB_NSTEPS);
                    waitGeq(sem + 8L * depid, base + (long) tile * depSteps + deps + 1, s, type, tile,
                            Awaited.SEMAPHORE, depid, deps);
                }
                long rq = recvSeq + 1;
                long sq = sendSeq + 1;
                long bytes = cnt * elems * elemBytes();
                if (receives(type)) {
                    waitGeq(recvRegion + flags + 8 * ((rq - 1) % slots), base + rq, s, type, tile, Awaited.MESSAGE,
                            rq, recvPe);
                }
                if (sends(type) && sq > slots) {
                    waitGeq(ackWord, base + sq - slots, s, type, tile, Awaited.FREE_SLOT, sendPe, 0);
                }
                long in = receives(type) ? heap + recvRegion + ((rq - 1) % slots) * slotBytes : 0;
                long out = sends(type) ? heap + staging + ((sq - 1) % slots) * slotBytes : 0;
                execute(st, type, cnt, tile, elems, in, out);
                if (sends(type)) {
                    long slot = (sq - 1) % slots;
                    dev.putSignalNbi(segment(sendRegion + slot * slotBytes, bytes),
                            segment(staging + slot * slotBytes, bytes), segment(sendRegion + flags + 8 * slot, 8),
                            base + sq, false, sendPe);
                    sendSeq = sq;
                }
                if (receives(type)) {
                    dev.p(segment(peerAck, 8), base + rq, recvPe);
                    recvSeq = rq;
                }
                if (u8(st + MscclTableLayout.ST_HASDEP) != 0) {
                    LONG.setRelease(ALL, heap + sem + 8L * block, base + (long) tile * nsteps + s + 1);
                }
            }
        }
        if (sendSeq > sentBefore) {
            // Every message of this launch acknowledged: its staging slots and the receiver's slots are free again.
            waitGeq(ackWord, base + sendSeq, nsteps, AFTER_LAST_STEP, 0, Awaited.LAST_ACK, sendPe, sendSeq);
        }
    }

    /** What a wait waits for; named, with its two numbers, only when the wait times out. */
    private enum Awaited {
        /** x: the block, y: its step. */
        SEMAPHORE,
        /** x: the message's number, y: the sending PE. */
        MESSAGE,
        /** x: the receiving PE. */
        FREE_SLOT,
        /** x: the receiving PE, y: the last message's number. */
        LAST_ACK
    }

    /**
     * A bounded WAIT64 GEQ on a heap word; a timeout names the step (or {@link #AFTER_LAST_STEP}), its type and tile
     * and what it waited for, and records the step in the block's status. The message is built only then: this runs
     * for every step of every tile.
     */
    private void waitGeq(long offset, long value, int step, int type, int tile, Awaited what, long x, long y) {
        try {
            dev.waitUntil(segment(offset, 8), ShmemDevice.CMP_GE, value);
        } catch (KiException e) {
            LONG.setVolatile(ALL, tb + MscclTableLayout.TB_STATUS, 1L + step);
            String at = type == AFTER_LAST_STEP ? "tb " + block + " after its last step"
                    : "tb " + block + " step " + step + " (" + TYPES[type] + ", tile " + tile + " of " + tiles + ")";
            String awaited = switch (what) {
                case SEMAPHORE -> "tb " + x + " step " + y + " (its semaphore)";
                case MESSAGE -> "message " + x + " from PE " + y;
                case FREE_SLOT -> "a free slot to PE " + x;
                case LAST_ACK -> "PE " + x + " to acknowledge message " + y;
            };
            throw new KiException("MSCCL PE " + dev.myPe() + " " + at + " waiting for " + awaited + ": "
                    + e.getMessage(), e);
        }
    }

    private MemorySegment segment(long heapOffset, long bytes) {
        return MemorySegment.ofAddress(heap + heapOffset).reinterpret(bytes);
    }

    /** One step on one tile (the kernel's {@code gds_msccl_execute}): piece j of a message is chunk off + j's tile. */
    private void execute(long st, int type, int cnt, int tile, long elems, long in, long out) {
        int srcbuf = u8(st + MscclTableLayout.ST_SRCBUF);
        int dstbuf = u8(st + MscclTableLayout.ST_DSTBUF);
        int srcoff = ALL.get(ValueLayout.JAVA_SHORT_UNALIGNED, st + MscclTableLayout.ST_SRCOFF) & 0xffff;
        int dstoff = ALL.get(ValueLayout.JAVA_SHORT_UNALIGNED, st + MscclTableLayout.ST_DSTOFF) & 0xffff;
        long e = elemBytes();
        long len = elems * e;
        for (int j = 0; j < cnt; j++) {
            long src = srcbuf == MscclTableLayout.BUF_NONE ? 0 : piece(srcbuf, srcoff + j, tile);
            long dst = dstbuf == MscclTableLayout.BUF_NONE ? 0 : piece(dstbuf, dstoff + j, tile);
            long rin = in + j * len;
            long rout = out + j * len;
            switch (type) {
                case MscclTableLayout.STEP_SEND -> copy(src, rout, len);
                case MscclTableLayout.STEP_RECV -> copy(rin, dst, len);
                case MscclTableLayout.STEP_RECV_COPY_SEND -> {
                    copy(rin, dst, len);
                    copy(rin, rout, len);
                }
                case MscclTableLayout.STEP_RECV_REDUCE_SEND -> combine(rout, src, rin, elems);
                case MscclTableLayout.STEP_RECV_REDUCE_COPY -> combine(dst, src, rin, elems);
                case MscclTableLayout.STEP_RECV_REDUCE_COPY_SEND -> {
                    combine(dst, src, rin, elems);
                    copy(dst, rout, len);
                }
                case MscclTableLayout.STEP_COPY -> copy(src, dst, len);
                case MscclTableLayout.STEP_REDUCE -> combine(dst, dst, src, elems);
                default -> {
                    // nop: only its dependency
                }
            }
        }
        VarHandle.fullFence();
    }

    private long piece(int buf, int chunk, int tile) {
        return heap + u64(tb + MscclTableLayout.TB_BUF + 8L * buf)
                + ((long) chunk * chunkElems + (long) tile * tileElems) * elemBytes();
    }

    private int elemBytes() {
        return MscclTableLayout.elementBytes(dtype);
    }

    private static void copy(long from, long to, long len) {
        if (from != to) {
            MemorySegment.copy(ALL, from, ALL, to, len);
        }
    }

    /** {@code dst[i] = a[i] ∘ b[i]} ({@link Reduction}, as libmp's ReduceOp and the kernel: integers wrap). */
    private void combine(long dst, long a, long b, long elems) {
        int e = elemBytes();
        for (long i = 0; i < elems * e; i += e) {
            switch (dtype) {
                case MscclTableLayout.DTYPE_INT32 ->
                        ALL.set(I32, dst + i, Reduction.combine(op, ALL.get(I32, a + i), ALL.get(I32, b + i)));
                case MscclTableLayout.DTYPE_INT64 ->
                        ALL.set(I64, dst + i, Reduction.combine(op, ALL.get(I64, a + i), ALL.get(I64, b + i)));
                case MscclTableLayout.DTYPE_FLOAT32 ->
                        ALL.set(F32, dst + i, Reduction.combine(op, ALL.get(F32, a + i), ALL.get(F32, b + i)));
                default -> ALL.set(F64, dst + i, Reduction.combine(op, ALL.get(F64, a + i), ALL.get(F64, b + i)));
            }
        }
    }

    private static boolean sends(int type) {
        return MscclTableLayout.sends(type);
    }

    private static boolean receives(int type) {
        return MscclTableLayout.receives(type);
    }

    private static int u8(long address) {
        return ALL.get(ValueLayout.JAVA_BYTE, address) & 0xff;
    }

    private static int u32(long address) {
        return ALL.get(I32, address);
    }

    private static long u64(long address) {
        return ALL.get(I64, address);
    }
}
