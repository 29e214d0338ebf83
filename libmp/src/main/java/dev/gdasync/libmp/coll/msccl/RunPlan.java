package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * The geometry of one run on one rank: the chunk and tile sizes, and where chunk c of buffer i, o or s lies. In
 * place follows NCCL's layouts: allreduce and alltoall use one buffer for i and o; allgather's i is the rank's
 * block of o; reduce-scatter's o is the rank's block of i.
 */
final class RunPlan {
    private final MscclProgram program;
    private final MscclProgram.Gpu gpu;
    private final DataType type;
    private final ReduceOp op;
    private MemorySegment input;
    private MemorySegment output;
    private final MemorySegment scratch;
    private final long chunkElems;
    private final long tileElems;
    private final int tiles;
    private final int rank;
    /** Bytes of one rank's block (in-place allgather's input, reduce-scatter's output): N / n chunks. */
    private final long blockBytes;

    /**
     * @param input      the call's input (for in place: the one buffer)
     * @param output     the call's output (for in place: the one buffer)
     * @param chunkElems elements per chunk
     * @param slotBytes  the connection slot size
     */
    RunPlan(MscclProgram program, int rank, DataType type, ReduceOp op, MemorySegment input, MemorySegment output,
            MemorySegment scratch, long chunkElems, long slotBytes) {
        this.program = program;
        this.rank = rank;
        this.gpu = program.gpus().get(rank);
        this.type = type;
        this.op = op;
        this.input = input;
        this.output = output;
        this.scratch = scratch;
        this.chunkElems = chunkElems;
        this.tileElems = Math.min(chunkElems, Math.max(1, slotBytes / ((long) program.maxCnt() * type.bytes())));
        this.tiles = chunkElems == 0 ? 0 : (int) ((chunkElems + tileElems - 1) / tileElems);
        this.blockBytes = (long) (program.nchunksperloop() / program.ngpus()) * chunkElems * type.bytes();
    }

    private RunPlan(RunPlan p, MemorySegment input, MemorySegment output) {
        this.program = p.program;
        this.rank = p.rank;
        this.gpu = p.gpu;
        this.type = p.type;
        this.op = p.op;
        this.input = input;
        this.output = output;
        this.scratch = p.scratch;
        this.chunkElems = p.chunkElems;
        this.tileElems = p.tileElems;
        this.tiles = p.tiles;
        this.blockBytes = p.blockBytes;
    }

    /** @return this geometry over other buffers of the same sizes (a repeated call: nothing is computed again) */
    RunPlan withBuffers(MemorySegment input, MemorySegment output) {
        return new RunPlan(this, input, output);
    }

    /**
     * Points this plan at another call's buffers of the same sizes: the host interpreter's prepared runs reuse their
     * plan, one run at a time (a stream run keeps a plan of its own until the stream passed it).
     */
    void bind(MemorySegment input, MemorySegment output) {
        this.input = input;
        this.output = output;
    }

    MscclProgram program() {
        return program;
    }

    DataType type() {
        return type;
    }

    ReduceOp op() {
        return op;
    }

    /** @return the elements of the collective's larger buffer */
    long bigElems() {
        return chunkElems * program.nchunksperloop();
    }

    int tiles() {
        return tiles;
    }

    /** @return the elements of one chunk's piece in tile t (the last tile may be short) */
    long tileElems(int t) {
        return Math.min(tileElems, chunkElems - (long) t * tileElems);
    }

    long tileBytes(int t) {
        return tileElems(t) * type.bytes();
    }

    /** @return the full tile's bytes */
    long maxTileBytes() {
        return tileElems * type.bytes();
    }

    int steps(int tb) {
        return gpu.tbs().get(tb).steps().size();
    }

    /** Peers in a program are ranks of the communicator it runs on. */
    int commRank(int peer) {
        return peer;
    }

    /** @return the bytes between chunk c and chunk c + 1 of a buffer */
    long chunkBytes() {
        return chunkElems * type.bytes();
    }

    int rank() {
        return rank;
    }

    /** @return the segment buffer {@code buf} of this rank lies in (in place, input and output are one) */
    MemorySegment base(Buffer buf) {
        return switch (buf) {
            case SCRATCH -> scratch;
            case INPUT -> program.inPlace() && program.collective() == Collective.ALLGATHER ? output : input;
            case OUTPUT -> program.inPlace() ? input : output;
        };
    }

    /**
     * @param buf a buffer of rank {@code r} (input or output: a peer's scratch is never written from here)
     * @return whether that rank's published output segment holds it (else its input segment; in place both are
     *         the one buffer)
     */
    boolean baseIsOutput(Buffer buf) {
        return buf == Buffer.OUTPUT && !program.inPlace();
    }

    /** @return where piece {@code tile} of chunk {@code chunk} of this rank's buffer lies in {@link #base} */
    long offset(Buffer buf, int chunk, int tile) {
        return offset(buf, chunk, tile, rank);
    }

    /**
     * @param r a rank of the program (the geometry is the same on every rank but for in-place allgather's input
     *          and reduce-scatter's output, which are the rank's block)
     * @return where piece {@code tile} of chunk {@code chunk} of rank r's buffer lies in its base segment
     */
    long offset(Buffer buf, int chunk, int tile, int r) {
        long at = ((long) chunk * chunkElems + (long) tile * tileElems) * type.bytes();
        Collective c = program.collective();
        if (program.inPlace() && (buf == Buffer.INPUT && c == Collective.ALLGATHER
                || buf == Buffer.OUTPUT && c == Collective.REDUCE_SCATTER)) {
            return at + r * blockBytes;
        }
        return at;
    }

    MemorySegment piece(Buffer buf, int chunk, int tile) {
        return base(buf).asSlice(offset(buf, chunk, tile), tileBytes(tile));
    }
}
