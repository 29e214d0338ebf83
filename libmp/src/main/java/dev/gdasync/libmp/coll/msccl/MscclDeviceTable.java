package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.ki.MscclTableLayout;
import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

import static dev.gdasync.gdsync.ki.MscclTableLayout.HEADER_BYTES;
import static dev.gdasync.gdsync.ki.MscclTableLayout.STEP_BYTES;
import static dev.gdasync.gdsync.ki.MscclTableLayout.TB_BYTES;

/**
 * The table of the kernel interpreter ({@code gds_msccl_interpreter} in ki-kernels' {@code msccl_interpreter.cuh}):
 * a 64-byte header, a 96-byte record per thread block of the launch and a 16-byte record per step, with every
 * address a byte offset into one arena, in gdsync's {@link MscclTableLayout} (the format's one definition, which
 * ki-kernels reads and a test compares with the C structs). This encoding runs all ranks of a program in one launch
 * on one device (the rank's blocks follow each other); each rank's input, output and scratch, each block's connection
 * region and the semaphores are laid out in the arena as {@link Layout} says.
 *
 * <p>The kernel has not run yet (no GPU was lent to this work): the table is tested against the program here, the
 * kernel is compiled and assembled by ki-kernels' build.
 */
public final class MscclDeviceTable {
    private static final long NONE = MscclTableLayout.NONE;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;

    private MscclDeviceTable() {
    }

    /**
     * Where things lie in the arena.
     *
     * @param arenaBytes the arena's size
     * @param input      each rank's input buffer
     * @param output     each rank's output buffer (the input for in-place allreduce and alltoall)
     * @param region     each launch block's connection region (slots, flags, acknowledgement word)
     * @param semaphores the semaphores, one 64-bit word per launch block
     */
    public record Layout(long arenaBytes, long[] input, long[] output, long[] region, long semaphores) {
    }

    /**
     * The encoded table.
     *
     * @param header the header
     * @param tbs    the thread-block records, rank after rank
     * @param steps  the step records
     * @param layout the arena's layout
     */
    public record Encoded(MemorySegment header, MemorySegment tbs, MemorySegment steps, Layout layout) {
    }

    /**
     * Encodes a program for one launch running all its ranks.
     *
     * @param p         the program
     * @param type      the element type
     * @param op        the operator
     * @param bigElems  the elements of the collective's larger buffer (a multiple of nchunksperloop)
     * @param slots     slots per connection
     * @param slotBytes bytes per slot, a multiple of 8
     * @param epoch     the run's number (flags and acknowledgements carry it in their upper 32 bits)
     * @param arena     where the table is allocated
     * @return the table
     * @throws IllegalArgumentException if the count does not fit the program
     */
    public static Encoded encode(MscclProgram p, DataType type, ReduceOp op, long bigElems, int slots, int slotBytes,
                                 long epoch, Arena arena) {
        Objects.requireNonNull(p, "p must not be null");
        Objects.requireNonNull(type, "type must not be null");
        Objects.requireNonNull(op, "op must not be null");
        Objects.requireNonNull(arena, "arena must not be null");
        if (bigElems < p.nchunksperloop() || bigElems % p.nchunksperloop() != 0) {
            throw new IllegalArgumentException(bigElems + " elements do not divide into " + p + "'s "
                    + p.nchunksperloop() + " chunks");
        }
        if (slots < 1 || slotBytes < 8 || slotBytes % 8 != 0) {
            throw new IllegalArgumentException("slots " + slots + " and slotBytes " + slotBytes
                    + " must be >= 1 and a positive multiple of 8");
        }
        int n = p.ngpus();
        long elem = type.bytes();
        long chunkElems = bigElems / p.nchunksperloop();
        long tileElems = Math.min(chunkElems, Math.max(1, slotBytes / ((long) p.maxCnt() * elem)));
        long tiles = (chunkElems + tileElems - 1) / tileElems;
        int ntb = 0;
        int nsteps = 0;
        int[] first = new int[n];
        for (MscclProgram.Gpu g : p.gpus()) {
            first[g.id()] = ntb;
            ntb += g.tbs().size();
            for (MscclProgram.ThreadBlock tb : g.tbs()) {
                nsteps += tb.steps().size();
            }
        }
        // The arena: per rank input, output (unless in place: one buffer), scratch; then regions; then semaphores.
        long inBytes = p.collective().inputChunks(p.nchunksperloop(), n) * chunkElems * elem;
        long outBytes = p.collective().outputChunks(p.nchunksperloop(), n) * chunkElems * elem;
        long regionBytes = align((long) slots * slotBytes + 8L * slots + 8);
        long at = 0;
        long[] input = new long[n];
        long[] output = new long[n];
        long[] scratch = new long[n];
        for (int r = 0; r < n; r++) {
            long big = Math.max(inBytes, outBytes);
            if (p.inPlace()) {
                long per = (long) (p.nchunksperloop() / n) * chunkElems * elem;
                input[r] = p.collective() == Collective.ALLGATHER ? at + r * per : at;
                output[r] = p.collective() == Collective.REDUCE_SCATTER ? at + r * per : at;
                at = align(at + big);
            } else {
                input[r] = at;
                output[r] = align(at + inBytes);
                at = align(output[r] + outBytes);
            }
            scratch[r] = at;
            at = align(at + p.gpus().get(r).sChunks() * chunkElems * elem);
        }
        long[] region = new long[ntb];
        for (int b = 0; b < ntb; b++) {
            region[b] = at;
            at += regionBytes;
        }
        long semaphores = at;
        at += 8L * ntb;
        Layout layout = new Layout(align(at), input, output, region, semaphores);

        MemorySegment header = arena.allocate(HEADER_BYTES, 64);
        header.set(I32, MscclTableLayout.H_MAGIC, MscclTableLayout.MAGIC);
        header.set(I32, MscclTableLayout.H_VERSION, MscclTableLayout.VERSION);
        header.set(I32, MscclTableLayout.H_NTB, ntb);
        header.set(I32, MscclTableLayout.H_TILES, (int) tiles);
        header.set(I64, MscclTableLayout.H_TILE_ELEMS, tileElems);
        header.set(I64, MscclTableLayout.H_CHUNK_ELEMS, chunkElems);
        header.set(I32, MscclTableLayout.H_SLOTS, slots);
        header.set(I32, MscclTableLayout.H_SLOT_BYTES, slotBytes);
        header.set(I32, MscclTableLayout.H_DTYPE, typeCode(type));
        header.set(I32, MscclTableLayout.H_OP, op.code());
        header.set(I64, MscclTableLayout.H_EPOCH_BASE, epoch << 32);
        header.set(I64, MscclTableLayout.H_SEM_OFFSET, semaphores);

        MemorySegment tbs = arena.allocate((long) TB_BYTES * Math.max(1, ntb), 64);
        MemorySegment steps = arena.allocate((long) STEP_BYTES * Math.max(1, nsteps), 64);
        int b = 0;
        int s = 0;
        long flagsAndAck = (long) slots * slotBytes + 8L * slots;
        for (MscclProgram.Gpu g : p.gpus()) {
            for (MscclProgram.ThreadBlock tb : g.tbs()) {
                long rec = (long) TB_BYTES * b;
                tbs.set(I32, rec + MscclTableLayout.TB_FIRST_STEP, s);
                tbs.set(I32, rec + MscclTableLayout.TB_NSTEPS, tb.steps().size());
                tbs.set(I32, rec + MscclTableLayout.TB_GPU_FIRST, first[g.id()]);
                tbs.set(I32, rec + MscclTableLayout.TB_FLAGS, (tb.send() >= 0 ? MscclTableLayout.TB_SENDS : 0)
                        | (tb.recv() >= 0 ? MscclTableLayout.TB_RECEIVES : 0));
                tbs.set(I64, rec + MscclTableLayout.TB_RECV_REGION, tb.recv() >= 0 ? region[b] : NONE);
                tbs.set(I64, rec + MscclTableLayout.TB_SEND_REGION, tb.send() >= 0
                        ? region[first[tb.send()] + p.tbConnectedTo(tb.send(), g.id(), tb.chan(), false)] : NONE);
                tbs.set(I64, rec + MscclTableLayout.TB_ACK_WORD, region[b] + flagsAndAck);
                tbs.set(I64, rec + MscclTableLayout.TB_PEER_ACK_WORD, tb.recv() >= 0
                        ? region[first[tb.recv()] + p.tbConnectedTo(tb.recv(), g.id(), tb.chan(), true)] + flagsAndAck
                        : NONE);
                tbs.set(I64, rec + MscclTableLayout.TB_BUF + 8L * MscclTableLayout.BUF_INPUT, input[g.id()]);
                tbs.set(I64, rec + MscclTableLayout.TB_BUF + 8L * MscclTableLayout.BUF_OUTPUT, output[g.id()]);
                tbs.set(I64, rec + MscclTableLayout.TB_BUF + 8L * MscclTableLayout.BUF_SCRATCH, scratch[g.id()]);
                for (MscclProgram.Step st : tb.steps()) {
                    long o = (long) STEP_BYTES * s++;
                    steps.set(ValueLayout.JAVA_BYTE, o + MscclTableLayout.ST_TYPE, (byte) stepCode(st.type()));
                    steps.set(ValueLayout.JAVA_BYTE, o + MscclTableLayout.ST_SRCBUF, (byte) bufferCode(st.srcbuf()));
                    steps.set(ValueLayout.JAVA_BYTE, o + MscclTableLayout.ST_DSTBUF, (byte) bufferCode(st.dstbuf()));
                    steps.set(ValueLayout.JAVA_BYTE, o + MscclTableLayout.ST_HASDEP, (byte) (st.hasdep() ? 1 : 0));
                    steps.set(I16, o + MscclTableLayout.ST_SRCOFF, (short) Math.max(0, st.srcoff()));
                    steps.set(I16, o + MscclTableLayout.ST_DSTOFF, (short) Math.max(0, st.dstoff()));
                    steps.set(I16, o + MscclTableLayout.ST_CNT, (short) st.cnt());
                    steps.set(I16, o + MscclTableLayout.ST_DEPID, (short) st.depid());
                    steps.set(I16, o + MscclTableLayout.ST_DEPS, (short) st.deps());
                }
                b++;
            }
        }
        return new Encoded(header, tbs, steps, layout);
    }

    /**
     * Where the KI form's things lie: every offset is from the base of the rank's symmetric heap (the same on every
     * rank for the connection memory), the buffers' offsets wrap around (they lie outside the heap).
     *
     * @param input       the rank's input, as an offset from the heap's base
     * @param output      its output (for in-place layouts the slice of the one buffer the collective writes)
     * @param scratch     its scratch
     * @param regions     the receive regions, one per thread block, {@code regionBytes} apart
     * @param staging     the staging regions (the sources of the puts), likewise
     * @param semaphores  the semaphores, one 64-bit word per thread block
     * @param regionBytes the bytes of a region: slots, then a flag per slot, then the acknowledgement word
     * @param pes         the PE of each rank of the program (its communicator's world ranks)
     */
    public record KiLayout(long input, long output, long scratch, long regions, long staging, long semaphores,
                           long regionBytes, int[] pes) {
    }

    /**
     * Encodes one rank's thread blocks for the KI form (one launch per rank, the connections in a symmetric heap):
     * the header, block and step records of {@link #encode}, in one segment (header, then the blocks, then the
     * steps), with the block records' offsets into the heap and, in the record's last 16 bytes (reserved in the
     * one-device form), the send and receive PEs (two 32-bit words, −1 for none) and the block's staging region.
     *
     * @param p         the program
     * @param rank      the rank whose {@code <gpu>} is encoded
     * @param type      the element type
     * @param op        the operator
     * @param bigElems  the elements of the collective's larger buffer (a multiple of nchunksperloop)
     * @param slots     slots per connection
     * @param slotBytes bytes per slot, a multiple of 8
     * @param epoch     the run's number
     * @param layout    where things lie
     * @param arena     where the table is allocated
     * @return the table
     * @throws IllegalArgumentException if the count does not fit the program
     */
    public static MemorySegment encodeRank(MscclProgram p, int rank, DataType type, ReduceOp op, long bigElems,
                                           int slots, int slotBytes, long epoch, KiLayout layout, Arena arena) {
        Objects.requireNonNull(layout, "layout must not be null");
        Encoded all = encode(p, type, op, bigElems, slots, slotBytes, epoch, arena);
        MscclProgram.Gpu g = p.gpus().get(rank);
        int ntb = g.tbs().size();
        int first = 0;
        for (int r = 0; r < rank; r++) {
            first += p.gpus().get(r).tbs().size();
        }
        int firstStep = ntb == 0 ? 0
                : all.tbs().get(I32, (long) TB_BYTES * first + MscclTableLayout.TB_FIRST_STEP);
        int nsteps = 0;
        for (MscclProgram.ThreadBlock tb : g.tbs()) {
            nsteps += tb.steps().size();
        }
        long tbsAt = HEADER_BYTES;
        long stepsAt = tbsAt + (long) TB_BYTES * ntb;
        MemorySegment t = arena.allocate(stepsAt + (long) STEP_BYTES * Math.max(1, nsteps), 64);
        MemorySegment.copy(all.header(), 0, t, 0, HEADER_BYTES);
        t.set(I32, MscclTableLayout.H_NTB, ntb);
        t.set(I64, MscclTableLayout.H_SEM_OFFSET, layout.semaphores());
        MemorySegment.copy(all.steps(), (long) STEP_BYTES * firstStep, t, stepsAt, (long) STEP_BYTES * nsteps);
        long rb = layout.regionBytes();
        long ack = (long) slots * slotBytes + 8L * slots;
        for (MscclProgram.ThreadBlock tb : g.tbs()) {
            long rec = tbsAt + (long) TB_BYTES * tb.id();
            long from = (long) TB_BYTES * (first + tb.id());
            t.set(I32, rec + MscclTableLayout.TB_FIRST_STEP,
                    all.tbs().get(I32, from + MscclTableLayout.TB_FIRST_STEP) - firstStep);
            t.set(I32, rec + MscclTableLayout.TB_NSTEPS, tb.steps().size());
            t.set(I32, rec + MscclTableLayout.TB_GPU_FIRST, 0);
            t.set(I32, rec + MscclTableLayout.TB_FLAGS, all.tbs().get(I32, from + MscclTableLayout.TB_FLAGS));
            t.set(I64, rec + MscclTableLayout.TB_RECV_REGION, layout.regions() + rb * tb.id());
            t.set(I64, rec + MscclTableLayout.TB_SEND_REGION, tb.send() >= 0
                    ? layout.regions() + rb * p.tbConnectedTo(tb.send(), rank, tb.chan(), false) : NONE);
            t.set(I64, rec + MscclTableLayout.TB_ACK_WORD, layout.regions() + rb * tb.id() + ack);
            t.set(I64, rec + MscclTableLayout.TB_PEER_ACK_WORD, tb.recv() >= 0
                    ? layout.regions() + rb * p.tbConnectedTo(tb.recv(), rank, tb.chan(), true) + ack : NONE);
            t.set(I64, rec + MscclTableLayout.TB_BUF + 8L * MscclTableLayout.BUF_INPUT, layout.input());
            t.set(I64, rec + MscclTableLayout.TB_BUF + 8L * MscclTableLayout.BUF_OUTPUT, layout.output());
            t.set(I64, rec + MscclTableLayout.TB_BUF + 8L * MscclTableLayout.BUF_SCRATCH, layout.scratch());
            t.set(I64, rec + MscclTableLayout.TB_STATUS, 0);
            t.set(I32, rec + MscclTableLayout.TB_KI_SEND_PE, tb.send() >= 0 ? layout.pes()[tb.send()] : -1);
            t.set(I32, rec + MscclTableLayout.TB_KI_RECV_PE, tb.recv() >= 0 ? layout.pes()[tb.recv()] : -1);
            t.set(I64, rec + MscclTableLayout.TB_KI_STAGING, layout.staging() + rb * tb.id());
        }
        return t;
    }

    private static int bufferCode(Buffer b) {
        if (b == null) {
            return MscclTableLayout.BUF_NONE;
        }
        return switch (b) {
            case INPUT -> MscclTableLayout.BUF_INPUT;
            case OUTPUT -> MscclTableLayout.BUF_OUTPUT;
            case SCRATCH -> MscclTableLayout.BUF_SCRATCH;
        };
    }

    private static int stepCode(StepType t) {
        return switch (t) {
            case SEND -> MscclTableLayout.STEP_SEND;
            case RECV -> MscclTableLayout.STEP_RECV;
            case RECV_COPY_SEND -> MscclTableLayout.STEP_RECV_COPY_SEND;
            case RECV_REDUCE_SEND -> MscclTableLayout.STEP_RECV_REDUCE_SEND;
            case RECV_REDUCE_COPY -> MscclTableLayout.STEP_RECV_REDUCE_COPY;
            case RECV_REDUCE_COPY_SEND -> MscclTableLayout.STEP_RECV_REDUCE_COPY_SEND;
            case COPY -> MscclTableLayout.STEP_COPY;
            case REDUCE -> MscclTableLayout.STEP_REDUCE;
            case NOP -> MscclTableLayout.STEP_NOP;
        };
    }

    private static int typeCode(DataType t) {
        return switch (t) {
            case INT32 -> MscclTableLayout.DTYPE_INT32;
            case INT64 -> MscclTableLayout.DTYPE_INT64;
            case FLOAT32 -> MscclTableLayout.DTYPE_FLOAT32;
            case FLOAT64 -> MscclTableLayout.DTYPE_FLOAT64;
        };
    }

    private static long align(long v) {
        return (v + 63) & ~63L;
    }
}
