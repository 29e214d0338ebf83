package dev.gdasync.ki.msccl;

import dev.gdasync.gdsync.ki.MscclTableLayout;
import dev.gdasync.gdsync.ki.Reduction;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import static dev.gdasync.gdsync.ki.MscclTableLayout.HEADER_BYTES;
import static dev.gdasync.gdsync.ki.MscclTableLayout.STEP_BYTES;
import static dev.gdasync.gdsync.ki.MscclTableLayout.TB_BYTES;

/**
 * The table of the MSCCL-IR kernel interpreter ({@code gds_msccl_interpreter}, {@code msccl_interpreter.cuh}) as one
 * checked image: the 64-byte header, a 96-byte record per block of the launch and a 16-byte record per step, laid out
 * back to back for one copy to the GPU, in the format of gdsync's {@link MscclTableLayout}. libmp's
 * {@code MscclDeviceTable.encode} writes the three parts; this class knows nothing of programs, only the kernel's
 * format, and refuses a table the kernel could not run safely: every
 * arena offset the kernel would load or store (buffers, slots, flags, acknowledgement words, semaphores) must lie in
 * the arena, every message must fit a slot, every dependency must name a block of the same rank. The kernel trusts
 * the table, so these checks are what keeps a bad table from writing outside the arena.
 *
 * <p>Ranks are told apart by the records' {@code gpu_first} (the launch index of the rank's block 0), so messages
 * name rank, thread block and step as the program does.
 */
public final class MscclKernelTable {
    private static final long NONE = MscclTableLayout.NONE;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;

    private final MemorySegment image;
    private final int blocks;
    private final int steps;
    private final long arenaBytes;
    private final int[] rankOf;
    private final int[] firstOf;

    private MscclKernelTable(MemorySegment image, int blocks, int steps, long arenaBytes, int[] rankOf, int[] firstOf) {
        this.image = image;
        this.blocks = blocks;
        this.steps = steps;
        this.arenaBytes = arenaBytes;
        this.rankOf = rankOf;
        this.firstOf = firstOf;
    }

    /**
     * Checks a table and copies it into one image (header, block records, step records), with every status word 0.
     *
     * @param header     the header
     * @param tbs        the block records (at least as many as the header's blocks)
     * @param steps      the step records (every record a block names)
     * @param arenaBytes the arena the table's offsets point into
     * @param arena      where the image is allocated
     * @return the checked image
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the table is malformed or reaches outside the arena (the message names the
     *                                  field, and the rank, block and step where there is one)
     */
    public static MscclKernelTable of(MemorySegment header, MemorySegment tbs, MemorySegment steps, long arenaBytes,
                                      Arena arena) {
        Objects.requireNonNull(header, "header must not be null");
        Objects.requireNonNull(tbs, "tbs must not be null");
        Objects.requireNonNull(steps, "steps must not be null");
        Objects.requireNonNull(arena, "arena must not be null");
        if (header.byteSize() != HEADER_BYTES) {
            throw new IllegalArgumentException("the header must be " + HEADER_BYTES + " bytes, got " + header.byteSize());
        }
        int magic = header.get(I32, MscclTableLayout.H_MAGIC);
        require(magic == MscclTableLayout.MAGIC, "the header's magic is 0x" + Integer.toHexString(magic)
                + ", not 0x" + Integer.toHexString(MscclTableLayout.MAGIC) + " (\"MSCL\")");
        int version = header.get(I32, MscclTableLayout.H_VERSION);
        require(version == MscclTableLayout.VERSION, "the header's version is " + version
                + "; the kernel reads version " + MscclTableLayout.VERSION);
        int ntb = header.get(I32, MscclTableLayout.H_NTB);
        long tiles = Integer.toUnsignedLong(header.get(I32, MscclTableLayout.H_TILES));
        long tileElems = header.get(I64, MscclTableLayout.H_TILE_ELEMS);
        long chunkElems = header.get(I64, MscclTableLayout.H_CHUNK_ELEMS);
        long slots = Integer.toUnsignedLong(header.get(I32, MscclTableLayout.H_SLOTS));
        long slotBytes = Integer.toUnsignedLong(header.get(I32, MscclTableLayout.H_SLOT_BYTES));
        int dtype = header.get(I32, MscclTableLayout.H_DTYPE);
        int op = header.get(I32, MscclTableLayout.H_OP);
        long semaphores = header.get(I64, MscclTableLayout.H_SEM_OFFSET);
        require(ntb >= 1, "the header's block count is " + ntb + "; a launch needs at least 1");
        require(arenaBytes > 0, "the arena must have bytes, got " + arenaBytes);
        require(tileElems >= 1 && chunkElems >= 1 && tileElems <= chunkElems, "tile elements " + tileElems
                + " must be in 1..chunk elements " + chunkElems);
        require(tiles >= 1 && tiles == (chunkElems + tileElems - 1) / tileElems, "tiles " + tiles + " do not cover "
                + chunkElems + " chunk elements in tiles of " + tileElems);
        require(slots >= 1 && slotBytes >= 8 && slotBytes % 8 == 0, "slots " + slots + " and slot bytes " + slotBytes
                + " must be >= 1 and a positive multiple of 8");
        require(dtype >= MscclTableLayout.DTYPE_INT32 && dtype <= MscclTableLayout.DTYPE_FLOAT64,
                "the element type code is " + dtype + "; the kernel knows 0..3 (int32, int64, float32, float64)");
        require(op >= 0 && op < Reduction.OPERATORS,
                "the operator code is " + op + "; the kernel knows 0..3 (sum, prod, max, min)");
        require(semaphores >= 0 && semaphores % 8 == 0 && fits(semaphores, 8L * ntb, arenaBytes), "the semaphores ("
                + ntb + " words at arena offset " + semaphores + ") must be 8-byte aligned and lie in the arena of "
                + arenaBytes + " bytes");
        require(tbs.byteSize() >= (long) TB_BYTES * ntb, "the block records hold " + tbs.byteSize() + " bytes; "
                + ntb + " blocks need " + (long) TB_BYTES * ntb);
        require(steps.byteSize() % STEP_BYTES == 0, "the step records hold " + steps.byteSize()
                + " bytes, not a multiple of " + STEP_BYTES);
        int nsteps = (int) (steps.byteSize() / STEP_BYTES);
        long elem = MscclTableLayout.elementBytes(dtype);
        long regionBytes = slots * slotBytes + 8 * slots;

        // Ranks: a new rank starts wherever gpu_first is the block's own index.
        int[] rankOf = new int[ntb];
        int[] firstOf = new int[ntb];
        List<Integer> rankStarts = new ArrayList<>();
        for (int b = 0; b < ntb; b++) {
            int first = tbs.get(I32, (long) TB_BYTES * b + MscclTableLayout.TB_GPU_FIRST);
            if (first == b) {
                rankStarts.add(b);
            }
            require(!rankStarts.isEmpty() && first == rankStarts.getLast(), "block " + b + "'s gpu_first is " + first
                    + ": a rank's blocks must follow each other, its first block naming itself");
            rankOf[b] = rankStarts.size() - 1;
            firstOf[b] = first;
        }
        for (int b = 0; b < ntb; b++) {
            long rec = (long) TB_BYTES * b;
            String where = "rank " + rankOf[b] + " thread block " + (b - firstOf[b]) + " (launch block " + b + ")";
            long firstStep = Integer.toUnsignedLong(tbs.get(I32, rec + MscclTableLayout.TB_FIRST_STEP));
            long count = Integer.toUnsignedLong(tbs.get(I32, rec + MscclTableLayout.TB_NSTEPS));
            int flags = tbs.get(I32, rec + MscclTableLayout.TB_FLAGS);
            boolean sends = (flags & MscclTableLayout.TB_SENDS) != 0;
            boolean receives = (flags & MscclTableLayout.TB_RECEIVES) != 0;
            require((flags & ~(MscclTableLayout.TB_SENDS | MscclTableLayout.TB_RECEIVES)) == 0, where + ": flags 0x"
                    + Integer.toHexString(flags) + " (only bits 0 and 1 exist)");
            require(firstStep + count <= nsteps, where + ": steps [" + firstStep + ", " + (firstStep + count)
                    + ") are not all among the " + nsteps + " step records");
            long recv = tbs.get(I64, rec + MscclTableLayout.TB_RECV_REGION);
            long send = tbs.get(I64, rec + MscclTableLayout.TB_SEND_REGION);
            long ack = tbs.get(I64, rec + MscclTableLayout.TB_ACK_WORD);
            long peerAck = tbs.get(I64, rec + MscclTableLayout.TB_PEER_ACK_WORD);
            requireWord(where, "its receive region", receives, recv, regionBytes, arenaBytes);
            requireWord(where, "the region it sends into", sends, send, regionBytes, arenaBytes);
            requireWord(where, "its acknowledgement word", true, ack, 8, arenaBytes);
            requireWord(where, "the sender's acknowledgement word", receives, peerAck, 8, arenaBytes);
            long[] buf = {tbs.get(I64, rec + MscclTableLayout.TB_BUF + 8L * MscclTableLayout.BUF_INPUT),
                    tbs.get(I64, rec + MscclTableLayout.TB_BUF + 8L * MscclTableLayout.BUF_OUTPUT),
                    tbs.get(I64, rec + MscclTableLayout.TB_BUF + 8L * MscclTableLayout.BUF_SCRATCH)};
            for (int s = 0; s < count; s++) {
                long st = (firstStep + s) * STEP_BYTES;
                String at = where + " step " + s;
                int type = Byte.toUnsignedInt(steps.get(ValueLayout.JAVA_BYTE, st + MscclTableLayout.ST_TYPE));
                int src = Byte.toUnsignedInt(steps.get(ValueLayout.JAVA_BYTE, st + MscclTableLayout.ST_SRCBUF));
                int dst = Byte.toUnsignedInt(steps.get(ValueLayout.JAVA_BYTE, st + MscclTableLayout.ST_DSTBUF));
                int srcoff = Short.toUnsignedInt(steps.get(I16, st + MscclTableLayout.ST_SRCOFF));
                int dstoff = Short.toUnsignedInt(steps.get(I16, st + MscclTableLayout.ST_DSTOFF));
                int cnt = Short.toUnsignedInt(steps.get(I16, st + MscclTableLayout.ST_CNT));
                int depid = steps.get(I16, st + MscclTableLayout.ST_DEPID);
                require(type < MscclTableLayout.STEP_TYPES, at + ": step type " + type + " (the kernel knows 0.."
                        + (MscclTableLayout.STEP_TYPES - 1) + ")");
                boolean stepReceives = MscclTableLayout.receives(type);
                boolean stepSends = MscclTableLayout.sends(type);
                require(!stepReceives || receives, at + " receives, but the block has no receive connection");
                require(!stepSends || sends, at + " sends, but the block has no send connection");
                require(!(stepReceives || stepSends) || cnt * tileElems * elem <= slotBytes, at + ": a message of "
                        + cnt + " pieces of " + tileElems + " elements of " + elem + " bytes does not fit a slot of "
                        + slotBytes + " bytes");
                requireBuffer(at, "source", src, srcoff, cnt, buf, chunkElems * elem, arenaBytes);
                requireBuffer(at, "destination", dst, dstoff, cnt, buf, chunkElems * elem, arenaBytes);
                require(depid >= -1 && firstOf[b] + (long) depid < ntb
                                && (depid < 0 || rankOf[firstOf[b] + depid] == rankOf[b]),
                        at + ": depid " + depid + " names no thread block of rank " + rankOf[b]);
            }
        }
        long tbsAt = HEADER_BYTES;
        long stepsAt = tbsAt + (long) TB_BYTES * ntb;
        MemorySegment image = arena.allocate(stepsAt + (long) STEP_BYTES * Math.max(1, nsteps), 64);
        image.asSlice(0, HEADER_BYTES).copyFrom(header);
        image.asSlice(tbsAt, (long) TB_BYTES * ntb).copyFrom(tbs.asSlice(0, (long) TB_BYTES * ntb));
        image.asSlice(stepsAt, steps.byteSize()).copyFrom(steps);
        MscclKernelTable t = new MscclKernelTable(image, ntb, nsteps, arenaBytes, rankOf, firstOf);
        t.clearStatuses();
        return t;
    }

    private static void requireWord(String where, String what, boolean used, long offset, long bytes, long arenaBytes) {
        if (!used) {
            return;
        }
        require(offset != NONE && offset % 8 == 0 && fits(offset, bytes, arenaBytes), where + ": " + what
                + " (arena offset " + offset + ", " + bytes + " bytes) must be 8-byte aligned and lie in the arena of "
                + arenaBytes + " bytes");
    }

    private static void requireBuffer(String at, String what, int code, int off, int cnt, long[] buf, long chunkBytes,
                                      long arenaBytes) {
        if (code == MscclTableLayout.BUF_NONE) {
            return;
        }
        require(code <= MscclTableLayout.BUF_SCRATCH, at + ": " + what + " buffer code " + code
                + " (0 input, 1 output, 2 scratch, 255 none)");
        long start = buf[code] + off * chunkBytes;
        require(buf[code] >= 0 && fits(start, cnt * chunkBytes, arenaBytes), at + ": " + what + " chunks [" + off + ", "
                + (off + cnt) + ") of buffer " + code + " (arena offset " + buf[code] + ") reach past the arena of "
                + arenaBytes + " bytes");
    }

    private static boolean fits(long offset, long bytes, long arenaBytes) {
        return offset >= 0 && bytes >= 0 && offset <= arenaBytes - bytes;
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException("MSCCL kernel table: " + message);
        }
    }

    /**
     * Sets every block's status word in the image to 0: a run reports only what it recorded (the launcher calls this
     * before each run, since it copies the records back into the image).
     */
    public void clearStatuses() {
        for (int b = 0; b < blocks; b++) {
            image.set(I64, tbsOffset() + (long) TB_BYTES * b + MscclTableLayout.TB_STATUS, 0);
        }
    }

    /** @return header, block records and step records back to back: copy it to the GPU as one */
    public MemorySegment image() {
        return image;
    }

    /** @return the image offset of the block records (right after the 64-byte header) */
    public long tbsOffset() {
        return HEADER_BYTES;
    }

    /** @return the image offset of the step records */
    public long stepsOffset() {
        return HEADER_BYTES + (long) TB_BYTES * blocks;
    }

    /** @return the blocks of the launch (the grid) */
    public int blocks() {
        return blocks;
    }

    /** @return the step records */
    public int steps() {
        return steps;
    }

    /** @return the arena's bytes */
    public long arenaBytes() {
        return arenaBytes;
    }

    /**
     * @param block a launch block
     * @return its rank
     */
    public int rankOf(int block) {
        return rankOf[block];
    }

    /**
     * @param block a launch block
     * @return its index among its rank's thread blocks
     */
    public int threadBlockOf(int block) {
        return block - firstOf[block];
    }

    /**
     * What the blocks reported in their status words, read from block records as the kernel left them.
     *
     * @param tbs the block records after the run (the image's, or a copy of them)
     * @return one line per block that gave up ("rank 1 thread block 0 gave up at step 3"), empty if none did
     */
    public List<String> failures(MemorySegment tbs) {
        List<String> out = new ArrayList<>();
        for (int b = 0; b < blocks; b++) {
            long status = tbs.get(I64, (long) TB_BYTES * b + MscclTableLayout.TB_STATUS);
            if (status != 0) {
                out.add("rank " + rankOf[b] + " thread block " + threadBlockOf(b) + " gave up waiting at step "
                        + (status - 1));
            }
        }
        return out;
    }

    @Override
    public String toString() {
        return "MSCCL kernel table (" + blocks + " blocks, " + steps + " steps, arena " + arenaBytes + " bytes)";
    }
}
