package dev.gdasync.libmp.coll.msccl;

import java.util.List;

/**
 * One validated MSCCL-IR program ({@code <algo>}): immutable, built only by {@link MscclParser}.
 *
 * @param source         where it was read from (a file name), for messages
 * @param name           the {@code name} attribute
 * @param proto          the {@code proto} attribute (Simple, LL or LL128; the host interpreter moves whole tiles
 *                       for all three)
 * @param nchannels      channels: thread blocks on different channels use different connections to a peer
 * @param nchunksperloop chunks the collective's larger buffer is cut into
 * @param ngpus          ranks
 * @param collective     what it computes
 * @param inPlace        whether it expects the in-place buffer layout
 * @param minBytes       the smallest call it is selected for (bytes of the call's count, inclusive)
 * @param maxBytes       the first size it is no longer selected for (exclusive); {@link Long#MAX_VALUE} if unbounded
 * @param gpus           one per rank, in rank order
 */
public record MscclProgram(String source, String name, String proto, int nchannels, int nchunksperloop, int ngpus,
                           Collective collective, boolean inPlace, long minBytes, long maxBytes, List<Gpu> gpus) {
    /** Immutable copies. */
    public MscclProgram {
        gpus = List.copyOf(gpus);
    }

    /**
     * One rank's part ({@code <gpu>}).
     *
     * @param id      the rank
     * @param iChunks declared input chunks ({@code i_chunks}; 0 where the program does not use the input)
     * @param oChunks declared output chunks
     * @param sChunks scratch chunks the runtime provides
     * @param tbs     its thread blocks, in id order
     */
    public record Gpu(int id, int iChunks, int oChunks, int sChunks, List<ThreadBlock> tbs) {
        /** Immutable copies. */
        public Gpu {
            tbs = List.copyOf(tbs);
        }
    }

    /**
     * A thread block ({@code <tb>}): a sequence of steps with at most one send and one receive connection.
     *
     * @param id    its index in the gpu
     * @param send  the peer it sends to, or -1
     * @param recv  the peer it receives from, or -1
     * @param chan  its channel
     * @param steps the steps, in order
     */
    public record ThreadBlock(int id, int send, int recv, int chan, List<Step> steps) {
        /** Immutable copies. */
        public ThreadBlock {
            steps = List.copyOf(steps);
        }
    }

    /**
     * A step ({@code <step>}).
     *
     * @param s      its index in the thread block
     * @param type   what it does
     * @param srcbuf the source buffer (null where the type has none)
     * @param srcoff the source's first chunk
     * @param dstbuf the destination buffer (null where the type has none)
     * @param dstoff the destination's first chunk
     * @param cnt    chunks
     * @param depid  the thread block it waits for, or -1
     * @param deps   the step of that block it waits for, or -1
     * @param hasdep whether another block waits for this step (it then signals its semaphore)
     */
    public record Step(int s, StepType type, Buffer srcbuf, int srcoff, Buffer dstbuf, int dstoff, int cnt, int depid,
                       int deps, boolean hasdep) {
    }

    /**
     * @param gpu     a rank of the program
     * @param peer    another rank
     * @param chan    a channel
     * @param sending true: the block of {@code gpu} that sends to {@code peer}; false: the one that receives from it
     * @return that block's id
     * @throws IllegalStateException if there is none (the validator matched every connection, so not for a loaded
     *                               program)
     */
    int tbConnectedTo(int gpu, int peer, int chan, boolean sending) {
        for (ThreadBlock tb : gpus.get(gpu).tbs()) {
            if ((sending ? tb.send() : tb.recv()) == peer && tb.chan() == chan) {
                return tb.id();
            }
        }
        throw new IllegalStateException(this + ": gpu " + gpu + " has no thread block for rank " + peer);
    }

    /** @return the most chunks one step moves */
    public int maxCnt() {
        int m = 1;
        for (Gpu g : gpus) {
            for (ThreadBlock tb : g.tbs()) {
                for (Step st : tb.steps()) {
                    m = Math.max(m, st.cnt());
                }
            }
        }
        return m;
    }

    @Override
    public String toString() {
        return "MSCCL program '" + name + "' (" + collective.xml() + (inPlace ? ", in place" : ", out of place") + ", "
                + ngpus + " ranks, " + nchunksperloop + " chunks, from " + source + ")";
    }
}
