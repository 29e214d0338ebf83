package dev.gdasync.libmp.coll.msccl;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Which messages of a program may be written by their sender straight into the receiver's destination buffer
 * instead of a connection slot, saving the receiver's copy out of the slot (NCCL's direct mode). A message may when
 * its receiving step only stores it ({@code r}) or stores and forwards it ({@code rcs}) into the input or output
 * buffer, and every other step of the receiving rank that reads or writes those chunks is ordered with the write:
 * it finished before the sending step started, or it starts only after the receiving step finished. Order is what
 * the program guarantees by itself in one tile: a block's steps in turn, a step after the step it depends on, a
 * receive after its matching send. The same answer on every rank, since every rank analyses the whole program.
 *
 * <p>The same order says which ranks a rank hears from, directly or through others, in every call
 * ({@link #precedes}): a sender uses it to know, without reading it, that its receiver finished the call before the
 * last. The analysis is quadratic in the program's steps, so programs of more than {@value #MAX_EVENTS} steps in all
 * are left on slots and read the done word.
 */
final class DirectPlacement {
    static final int MAX_EVENTS = 4096;

    private final MscclProgram program;
    /** Per gpu, tb, step: the first event id of each block. */
    private final int[][] first;
    /** Per event: whether it is a receive that lands directly. */
    private final BitSet direct = new BitSet();
    /** Per gpu: the gpus some of whose steps finish before some step of it starts (in one call). */
    private BitSet[] precedes;
    /** Per sending event: the event of its matching receive, or -1. */
    private final int[] receiverOf;
    private final int[] gpuOf;
    private final int[] tbOf;
    private final int[] stepOf;

    private DirectPlacement(MscclProgram program) {
        this.program = program;
        int n = program.gpus().size();
        first = new int[n][];
        int events = 0;
        for (int g = 0; g < n; g++) {
            List<MscclProgram.ThreadBlock> tbs = program.gpus().get(g).tbs();
            first[g] = new int[tbs.size()];
            for (int t = 0; t < tbs.size(); t++) {
                first[g][t] = events;
                events += tbs.get(t).steps().size();
            }
        }
        receiverOf = new int[events];
        gpuOf = new int[events];
        tbOf = new int[events];
        stepOf = new int[events];
        java.util.Arrays.fill(receiverOf, -1);
        for (int g = 0; g < n; g++) {
            List<MscclProgram.ThreadBlock> tbs = program.gpus().get(g).tbs();
            for (int t = 0; t < tbs.size(); t++) {
                for (int s = 0; s < tbs.get(t).steps().size(); s++) {
                    int e = first[g][t] + s;
                    gpuOf[e] = g;
                    tbOf[e] = t;
                    stepOf[e] = s;
                }
            }
        }
    }

    /**
     * @param program a validated program
     * @return its placement (no message lands directly if the program is too large to analyse)
     */
    static DirectPlacement of(MscclProgram program) {
        DirectPlacement p = new DirectPlacement(program);
        p.match();
        if (p.receiverOf.length <= MAX_EVENTS) {
            p.analyse();
        }
        return p;
    }

    private int event(int gpu, int tb, int step) {
        return first[gpu][tb] + step;
    }

    private MscclProgram.Step step(int e) {
        return program.gpus().get(gpuOf[e]).tbs().get(tbOf[e]).steps().get(stepOf[e]);
    }

    /** Pairs the k-th sending step of each connection with its k-th receiving step (the validator matched them). */
    private void match() {
        for (int g = 0; g < program.gpus().size(); g++) {
            for (MscclProgram.ThreadBlock tb : program.gpus().get(g).tbs()) {
                if (tb.send() < 0) {
                    continue;
                }
                MscclProgram.ThreadBlock rtb = program.gpus().get(tb.send()).tbs()
                        .get(program.tbConnectedTo(tb.send(), g, tb.chan(), false));
                List<Integer> receives = new ArrayList<>();
                for (MscclProgram.Step st : rtb.steps()) {
                    if (st.type().receives()) {
                        receives.add(event(tb.send(), rtb.id(), st.s()));
                    }
                }
                int k = 0;
                for (MscclProgram.Step st : tb.steps()) {
                    if (st.type().sends() && k < receives.size()) {
                        receiverOf[event(g, tb.id(), st.s())] = receives.get(k++);
                    }
                }
            }
        }
    }

    private void analyse() {
        int events = receiverOf.length;
        int[] senderOf = new int[events];
        java.util.Arrays.fill(senderOf, -1);
        for (int e = 0; e < events; e++) {
            if (receiverOf[e] >= 0) {
                senderOf[receiverOf[e]] = e;
            }
        }
        BitSet[] before = new BitSet[events];
        precedes = new BitSet[program.gpus().size()];
        for (int g = 0; g < precedes.length; g++) {
            precedes[g] = new BitSet();
        }
        for (int e = 0; e < events; e++) {
            before[e] = ancestors(e, senderOf);
            for (int x = before[e].nextSetBit(0); x >= 0; x = before[e].nextSetBit(x + 1)) {
                precedes[gpuOf[e]].set(gpuOf[x]);
            }
        }
        for (int r = 0; r < events; r++) {
            MscclProgram.Step st = step(r);
            boolean storeOnly = st.type() == StepType.RECV || st.type() == StepType.RECV_COPY_SEND;
            if (!storeOnly || st.dstbuf() == Buffer.SCRATCH || senderOf[r] < 0) {
                continue;
            }
            int s = senderOf[r];
            boolean ordered = true;
            int g = gpuOf[r];
            for (int x = 0; x < events && ordered; x++) {
                if (x != r && gpuOf[x] == g && touches(x, g, st.dstbuf(), st.dstoff(), st.cnt())) {
                    ordered = before[s].get(x) || before[x].get(r);
                }
            }
            if (ordered) {
                direct.set(r);
            }
        }
    }

    /** @return the events that finish before event e starts (in one tile) */
    private BitSet ancestors(int e, int[] senderOf) {
        BitSet seen = new BitSet();
        int[] stack = new int[receiverOf.length + 1];
        int top = 0;
        stack[top++] = e;
        while (top > 0) {
            int x = stack[--top];
            MscclProgram.Step st = step(x);
            int[] preds = {stepOf[x] > 0 ? x - 1 : -1,
                    st.depid() >= 0 ? event(gpuOf[x], st.depid(), st.deps()) : -1, senderOf[x]};
            for (int p : preds) {
                if (p >= 0 && !seen.get(p)) {
                    seen.set(p);
                    stack[top++] = p;
                }
            }
        }
        return seen;
    }

    /** @return whether step x of gpu g reads or writes any of chunks [off, off + cnt) of buffer b */
    private boolean touches(int x, int g, Buffer b, int off, int cnt) {
        MscclProgram.Step st = step(x);
        StepType t = st.type();
        boolean readsSrc = t == StepType.SEND || t == StepType.RECV_REDUCE_SEND || t == StepType.RECV_REDUCE_COPY
                || t == StepType.RECV_REDUCE_COPY_SEND || t == StepType.COPY || t == StepType.REDUCE;
        boolean usesDst = t.receives() && t != StepType.RECV_REDUCE_SEND || t == StepType.COPY
                || t == StepType.REDUCE;
        return readsSrc && overlaps(g, st.srcbuf(), st.srcoff(), st.cnt(), b, off, cnt)
                || usesDst && overlaps(g, st.dstbuf(), st.dstoff(), st.cnt(), b, off, cnt);
    }

    private boolean overlaps(int g, Buffer a, int aOff, int aCnt, Buffer b, int bOff, int bCnt) {
        if (a == null || space(a) != space(b)) {
            return false;
        }
        int x = index(g, a, aOff);
        int y = index(g, b, bOff);
        return x < y + bCnt && y < x + aCnt;
    }

    /** The memory a buffer names: in place, input and output are one buffer. */
    private int space(Buffer b) {
        return b == Buffer.SCRATCH ? 2 : program.inPlace() ? 0 : b.ordinal();
    }

    /**
     * @return chunk c of buffer b as an index into its space (in place, allgather's input and reduce-scatter's output
     *         are the rank's block of the one buffer)
     */
    private int index(int g, Buffer b, int c) {
        int per = program.nchunksperloop() / program.ngpus();
        if (program.inPlace() && b == Buffer.INPUT && program.collective() == Collective.ALLGATHER
                || program.inPlace() && b == Buffer.OUTPUT && program.collective() == Collective.REDUCE_SCATTER) {
            return g * per + c;
        }
        return c;
    }

    /** @return whether the receiving step (gpu, tb, step) finds its message already in its destination */
    boolean landsDirectly(int gpu, int tb, int step) {
        return direct.get(event(gpu, tb, step));
    }

    /**
     * @return the receiving step of the message that sending step (gpu, tb, step) sends, if it lands directly: its
     *         destination buffer and first chunk as {@code {buffer ordinal, chunk}}; null otherwise
     */
    int[] directTarget(int gpu, int tb, int step) {
        int r = receiverOf[event(gpu, tb, step)];
        if (r < 0 || !direct.get(r)) {
            return null;
        }
        MscclProgram.Step st = step(r);
        return new int[] {st.dstbuf().ordinal(), st.dstoff()};
    }

    /** @return whether every message of the program lands directly in its receiver's buffer */
    boolean allDirect() {
        for (int e = 0; e < receiverOf.length; e++) {
            if (step(e).type().receives() && !direct.get(e)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether a step of {@code peer} finishes before some step of {@code gpu} starts, in every call of the program:
     * then, once {@code gpu} finished a call, {@code peer} had started it, so it had finished the call before.
     *
     * @return whether that holds (false also for programs too large to analyse)
     */
    boolean precedes(int peer, int gpu) {
        return precedes != null && precedes[gpu].get(peer);
    }

    /** @return how many receives land directly (for tests and the documentation's claims) */
    int directCount() {
        return direct.cardinality();
    }
}
