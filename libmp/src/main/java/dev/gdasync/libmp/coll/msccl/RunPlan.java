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
    private final MemorySegment input;
    private final MemorySegment output;
    private final MemorySegment scratch;
    private final long chunkElems;
    private final long tileElems;
    private final int tiles;
    private final int rank;

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

    MemorySegment piece(Buffer buf, int chunk, int tile) {
        long elem = type.bytes();
        long at = ((long) chunk * chunkElems + (long) tile * tileElems) * elem;
        long len = tileBytes(tile);
        Collective c = program.collective();
        int per = program.nchunksperloop() / program.ngpus();
        return switch (buf) {
            case SCRATCH -> scratch.asSlice(at, len);
            case INPUT -> program.inPlace() && c == Collective.ALLGATHER
                    ? output.asSlice(at + (long) rank * per * chunkElems * elem, len) : input.asSlice(at, len);
            case OUTPUT -> program.inPlace() && c == Collective.REDUCE_SCATTER
                    ? input.asSlice(at + (long) rank * per * chunkElems * elem, len)
                    : program.inPlace() ? input.asSlice(at, len) : output.asSlice(at, len);
        };
    }
}
