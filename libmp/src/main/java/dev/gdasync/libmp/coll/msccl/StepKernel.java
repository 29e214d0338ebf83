package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * The data work of one step on one tile, the same for the host interpreter's thread blocks and the host tasks of
 * the stream interpreter: piece j of a message is the tile of chunk {@code off + j}. The stream interpreter passes
 * slices; the host interpreter passes (segment, offset) pairs, since its messages may land in a peer's buffer.
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

    /**
     * The host interpreter's form: the same work on pieces named by (segment, offset), piece j at offset + j · stride,
     * so that a message may lie in a slot (stride: the tile) or in the receiver's own buffer (stride: the chunk),
     * and no slice is made but for a reduction's operands.
     *
     * @param in        the received message, or null if the step receives nothing or its message already lies in
     *                  its destination (it landed directly: a {@code r} then has nothing to do)
     * @param out       where the message it sends goes, or null if it sends nothing
     */
    static void execute(RunPlan plan, MscclProgram.Step st, int tile, MemorySegment in, long inOff, long inStride,
                        MemorySegment out, long outOff, long outStride) {
        long len = plan.tileBytes(tile);
        long elems = plan.tileElems(tile);
        long stride = plan.chunkBytes();
        DataType type = plan.type();
        ReduceOp op = plan.op();
        MemorySegment src = st.srcbuf() == null ? null : plan.base(st.srcbuf());
        long srcOff = st.srcbuf() == null ? 0 : plan.offset(st.srcbuf(), st.srcoff(), tile);
        MemorySegment dst = st.dstbuf() == null ? null : plan.base(st.dstbuf());
        long dstOff = st.dstbuf() == null ? 0 : plan.offset(st.dstbuf(), st.dstoff(), tile);
        for (int j = 0; j < st.cnt(); j++) {
            long s = srcOff + j * stride;
            long d = dstOff + j * stride;
            long i = inOff + j * inStride;
            long o = outOff + j * outStride;
            switch (st.type()) {
                case SEND -> MemorySegment.copy(src, s, out, o, len);
                case RECV -> {
                    if (in != null) {
                        MemorySegment.copy(in, i, dst, d, len);
                    }
                }
                case RECV_COPY_SEND -> {
                    if (in != null) {
                        MemorySegment.copy(in, i, dst, d, len);
                        MemorySegment.copy(in, i, out, o, len);
                    } else {
                        MemorySegment.copy(dst, d, out, o, len);
                    }
                }
                case RECV_REDUCE_SEND -> {
                    MemorySegment.copy(src, s, out, o, len);
                    op.apply(type, out.asSlice(o, len), in.asSlice(i, len), elems);
                }
                case RECV_REDUCE_COPY -> reduceInto(dst, d, src, s, in.asSlice(i, len), len, elems, type, op);
                case RECV_REDUCE_COPY_SEND -> {
                    reduceInto(dst, d, src, s, in.asSlice(i, len), len, elems, type, op);
                    MemorySegment.copy(dst, d, out, o, len);
                }
                case COPY -> {
                    if (src.address() + s != dst.address() + d) {
                        MemorySegment.copy(src, s, dst, d, len);
                    }
                }
                case REDUCE -> op.apply(type, dst.asSlice(d, len), src.asSlice(s, len), elems);
                case NOP -> {
                    // only its dependency
                }
            }
        }
    }

    /** dst = src ∘ in, on (segment, offset) pieces. */
    private static void reduceInto(MemorySegment dst, long d, MemorySegment src, long s, MemorySegment in, long len,
                                   long elems, DataType type, ReduceOp op) {
        if (src.address() + s != dst.address() + d) {
            MemorySegment.copy(src, s, dst, d, len);
        }
        op.apply(type, dst.asSlice(d, len), in, elems);
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
