package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * The data work of one step on one tile, the same for the host interpreter's thread blocks and the host tasks of
 * the stream interpreter: piece j of a message is the tile of chunk {@code off + j}.
 */
final class StepKernel {
    private StepKernel() {
    }

    /**
     * @param in  the received message (a slot), or null if the step receives nothing
     * @param out the message to send (a staging slot), or null if the step sends nothing
     */
    static void execute(RunPlan plan, MscclProgram.Step st, int tile, MemorySegment in, MemorySegment out) {
        long len = plan.tileBytes(tile);
        long elems = plan.tileElems(tile);
        DataType type = plan.type();
        ReduceOp op = plan.op();
        for (int j = 0; j < st.cnt(); j++) {
            MemorySegment src = st.srcbuf() == null ? null : plan.piece(st.srcbuf(), st.srcoff() + j, tile);
            MemorySegment dst = st.dstbuf() == null ? null : plan.piece(st.dstbuf(), st.dstoff() + j, tile);
            MemorySegment inPiece = in == null ? null : in.asSlice(j * len, len);
            MemorySegment outPiece = out == null ? null : out.asSlice(j * len, len);
            switch (st.type()) {
                case SEND -> MemorySegment.copy(src, 0, outPiece, 0, len);
                case RECV -> MemorySegment.copy(inPiece, 0, dst, 0, len);
                case RECV_COPY_SEND -> {
                    MemorySegment.copy(inPiece, 0, dst, 0, len);
                    MemorySegment.copy(inPiece, 0, outPiece, 0, len);
                }
                case RECV_REDUCE_SEND -> {
                    MemorySegment.copy(src, 0, outPiece, 0, len);
                    op.apply(type, outPiece, inPiece, elems);
                }
                case RECV_REDUCE_COPY -> reduceInto(dst, src, inPiece, len, elems, type, op);
                case RECV_REDUCE_COPY_SEND -> {
                    reduceInto(dst, src, inPiece, len, elems, type, op);
                    MemorySegment.copy(dst, 0, outPiece, 0, len);
                }
                case COPY -> {
                    if (src.address() != dst.address()) {
                        MemorySegment.copy(src, 0, dst, 0, len);
                    }
                }
                case REDUCE -> op.apply(type, dst, src, elems);
                case NOP -> {
                    // only its dependency
                }
            }
        }
    }

    /** dst = src ∘ in. */
    private static void reduceInto(MemorySegment dst, MemorySegment src, MemorySegment in, long len, long elems,
                                   DataType type, ReduceOp op) {
        if (src.address() != dst.address()) {
            MemorySegment.copy(src, 0, dst, 0, len);
        }
        op.apply(type, dst, in, elems);
    }
}
