package dev.gdasync.libmp.coll.msccl;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The rules a parsed program must follow before it may run: limits, ids in order, peers and channels in range,
 * the buffers and chunk ranges each step type needs, dependencies that exist and signal, one thread block per
 * connection, and for every connection the sender's steps matching the receiver's one for one. The first broken
 * rule is an {@link MscclFormatException} naming the source, gpu, thread block and step.
 */
final class MscclValidator {
    private final MscclLimits limits;

    MscclValidator(MscclLimits limits) {
        this.limits = limits;
    }

    void validate(MscclProgram p) {
        String src = p.source() + ": ";
        range(src, "ngpus", p.ngpus(), 1, limits.maxGpus());
        range(src, "nchannels", p.nchannels(), 1, limits.maxChannels());
        range(src, "nchunksperloop", p.nchunksperloop(), 1, limits.maxChunks());
        if (p.collective().splitsByRank() && p.nchunksperloop() % p.ngpus() != 0) {
            throw new MscclFormatException(src + p.collective().xml() + " needs nchunksperloop (" + p.nchunksperloop()
                    + ") to be a multiple of ngpus (" + p.ngpus() + ")");
        }
        if (p.gpus().size() != p.ngpus()) {
            throw new MscclFormatException(src + "ngpus=" + p.ngpus() + " but the file has " + p.gpus().size()
                    + " <gpu> elements");
        }
        int in = p.collective().inputChunks(p.nchunksperloop(), p.ngpus());
        int out = p.collective().outputChunks(p.nchunksperloop(), p.ngpus());
        for (int g = 0; g < p.ngpus(); g++) {
            MscclProgram.Gpu gpu = p.gpus().get(g);
            String at = src + "gpu " + gpu.id() + ": ";
            if (gpu.id() != g) {
                throw new MscclFormatException(src + "<gpu> number " + g + " has id " + gpu.id()
                        + ": gpus must be listed as 0.." + (p.ngpus() - 1));
            }
            declared(at, "i_chunks", gpu.iChunks(), in, p);
            declared(at, "o_chunks", gpu.oChunks(), out, p);
            range(at, "s_chunks", gpu.sChunks(), 0, limits.maxChunks());
            range(at, "thread blocks", gpu.tbs().size(), 0, limits.maxThreadBlocks());
            validateGpu(p, gpu, at, in, out);
        }
        matchConnections(p, src);
    }

    private void validateGpu(MscclProgram p, MscclProgram.Gpu gpu, String at, int in, int out) {
        Map<Long, Integer> sendConn = new HashMap<>();
        Map<Long, Integer> recvConn = new HashMap<>();
        for (int t = 0; t < gpu.tbs().size(); t++) {
            MscclProgram.ThreadBlock tb = gpu.tbs().get(t);
            String tat = at.substring(0, at.length() - 2) + " tb " + tb.id() + ": ";
            if (tb.id() != t) {
                throw new MscclFormatException(at + "<tb> number " + t + " has id " + tb.id()
                        + ": thread blocks must be listed as 0..n-1");
            }
            peer(tat, "send", tb.send(), gpu.id(), p.ngpus());
            peer(tat, "recv", tb.recv(), gpu.id(), p.ngpus());
            range(tat, "chan", tb.chan(), 0, p.nchannels() - 1);
            range(tat, "steps", tb.steps().size(), 0, limits.maxSteps());
            unique(tat, "send", tb.send(), tb.chan(), t, sendConn);
            unique(tat, "recv", tb.recv(), tb.chan(), t, recvConn);
            for (int s = 0; s < tb.steps().size(); s++) {
                MscclProgram.Step st = tb.steps().get(s);
                String sat = tat.substring(0, tat.length() - 2) + " step " + st.s() + ": ";
                if (st.s() != s) {
                    throw new MscclFormatException(tat + "<step> number " + s + " has s=" + st.s()
                            + ": steps must be numbered 0..n-1 in order");
                }
                step(p, gpu, tb, st, sat, in, out);
            }
        }
    }

    private void step(MscclProgram p, MscclProgram.Gpu gpu, MscclProgram.ThreadBlock tb, MscclProgram.Step st,
                      String at, int in, int out) {
        StepType type = st.type();
        if (type.sends() && tb.send() < 0) {
            throw new MscclFormatException(at + type.xml() + " sends but the thread block has send=-1");
        }
        if (type.receives() && tb.recv() < 0) {
            throw new MscclFormatException(at + type.xml() + " receives but the thread block has recv=-1");
        }
        if (type != StepType.NOP) {
            range(at, "cnt", st.cnt(), 1, p.nchunksperloop());
            // What each type reads locally (src) and writes locally (dst).
            boolean readsSrc = type == StepType.SEND || type == StepType.RECV_REDUCE_SEND
                    || type == StepType.RECV_REDUCE_COPY || type == StepType.RECV_REDUCE_COPY_SEND
                    || type == StepType.COPY || type == StepType.REDUCE;
            boolean writesDst = type != StepType.SEND && type != StepType.RECV_REDUCE_SEND;
            if (readsSrc) {
                chunks(at, "src", st.srcbuf(), st.srcoff(), st.cnt(), p, gpu, in, out);
            }
            if (writesDst) {
                chunks(at, "dst", st.dstbuf(), st.dstoff(), st.cnt(), p, gpu, in, out);
            }
        }
        if ((st.depid() < 0) != (st.deps() < 0)) {
            throw new MscclFormatException(at + "depid=" + st.depid() + " and deps=" + st.deps()
                    + " must both be -1 or both name a step");
        }
        if (st.depid() >= 0) {
            if (st.depid() >= gpu.tbs().size()) {
                throw new MscclFormatException(at + "depends on tb " + st.depid() + " but gpu " + gpu.id() + " has "
                        + gpu.tbs().size() + " thread blocks");
            }
            if (st.depid() == tb.id()) {
                throw new MscclFormatException(at + "depends on its own thread block (steps of a block run in order)");
            }
            MscclProgram.ThreadBlock dep = gpu.tbs().get(st.depid());
            if (st.deps() >= dep.steps().size()) {
                throw new MscclFormatException(at + "depends on tb " + st.depid() + " step " + st.deps()
                        + " but that block has " + dep.steps().size() + " steps");
            }
            if (!dep.steps().get(st.deps()).hasdep()) {
                throw new MscclFormatException(at + "depends on tb " + st.depid() + " step " + st.deps()
                        + ", which has hasdep=0 and so never signals");
            }
        }
    }

    private static void chunks(String at, String which, Buffer buf, int off, int cnt, MscclProgram p,
                               MscclProgram.Gpu gpu, int in, int out) {
        if (buf == null) {
            throw new MscclFormatException(at + "needs " + which + "buf");
        }
        int size = switch (buf) {
            case INPUT -> in;
            case OUTPUT -> out;
            case SCRATCH -> gpu.sChunks();
        };
        if (off < 0 || off > size - cnt) {
            throw new MscclFormatException(at + which + " chunks " + off + ".." + (off + cnt - 1) + " of buffer "
                    + buf.xml() + " are outside its " + size + " chunks"
                    + (buf == Buffer.SCRATCH ? " (s_chunks)" : " (" + p.collective().xml() + " of "
                    + p.nchunksperloop() + " chunks on " + p.ngpus() + " ranks)"));
        }
    }

    /** For every (sender, receiver, channel), the k-th send must carry as many chunks as the k-th receive. */
    private static void matchConnections(MscclProgram p, String src) {
        Map<String, MscclProgram.ThreadBlock> senders = new HashMap<>();
        Map<String, MscclProgram.ThreadBlock> receivers = new HashMap<>();
        for (MscclProgram.Gpu g : p.gpus()) {
            for (MscclProgram.ThreadBlock tb : g.tbs()) {
                if (tb.send() >= 0) {
                    senders.put(g.id() + ">" + tb.send() + "/" + tb.chan(), tb);
                }
                if (tb.recv() >= 0) {
                    receivers.put(tb.recv() + ">" + g.id() + "/" + tb.chan(), tb);
                }
            }
        }
        for (Map.Entry<String, MscclProgram.ThreadBlock> e : senders.entrySet()) {
            String[] k = e.getKey().split("[>/]");
            MscclProgram.ThreadBlock s = e.getValue();
            MscclProgram.ThreadBlock r = receivers.get(e.getKey());
            List<Integer> sent = cnts(s, true);
            List<Integer> got = r == null ? List.of() : cnts(r, false);
            if (!sent.equals(got)) {
                throw new MscclFormatException(src + "gpu " + k[0] + " tb " + s.id() + " sends chunk counts " + sent
                        + " to gpu " + k[1] + " on channel " + k[2] + " but "
                        + (r == null ? "no thread block of gpu " + k[1] + " receives from gpu " + k[0]
                        + " on that channel" : "gpu " + k[1] + " tb " + r.id() + " receives " + got));
            }
        }
        for (Map.Entry<String, MscclProgram.ThreadBlock> e : receivers.entrySet()) {
            if (!senders.containsKey(e.getKey())) {
                String[] k = e.getKey().split("[>/]");
                List<Integer> got = cnts(e.getValue(), false);
                if (!got.isEmpty()) {
                    throw new MscclFormatException(src + "gpu " + k[1] + " tb " + e.getValue().id() + " receives "
                            + got + " from gpu " + k[0] + " on channel " + k[2]
                            + " but no thread block of gpu " + k[0] + " sends to it on that channel");
                }
            }
        }
    }

    private static List<Integer> cnts(MscclProgram.ThreadBlock tb, boolean sends) {
        List<Integer> c = new ArrayList<>();
        for (MscclProgram.Step st : tb.steps()) {
            if (sends ? st.type().sends() : st.type().receives()) {
                c.add(st.cnt());
            }
        }
        return c;
    }

    private static void unique(String at, String dir, int peer, int chan, int tb, Map<Long, Integer> seen) {
        if (peer < 0) {
            return;
        }
        Integer other = seen.putIfAbsent(((long) peer << 32) | chan, tb);
        if (other != null) {
            throw new MscclFormatException(at + dir + "=" + peer + " on channel " + chan + " is already tb " + other
                    + "'s connection: one thread block per (peer, channel) and direction");
        }
    }

    private static void peer(String at, String name, int peer, int self, int ngpus) {
        if (peer < -1 || peer >= ngpus) {
            throw new MscclFormatException(at + name + "=" + peer + " is not a rank 0.." + (ngpus - 1) + " or -1");
        }
        if (peer == self) {
            throw new MscclFormatException(at + name + "=" + peer + " is the gpu itself");
        }
    }

    private static void declared(String at, String name, int declared, int shape, MscclProgram p) {
        if (declared != 0 && declared != shape) {
            throw new MscclFormatException(at + name + "=" + declared + " but " + p.collective().xml() + " of "
                    + p.nchunksperloop() + " chunks on " + p.ngpus() + " ranks has " + shape);
        }
    }

    private static void range(String at, String name, long v, long lo, long hi) {
        if (v < lo || v > hi) {
            throw new MscclFormatException(at + name + "=" + v + " is outside " + lo + ".." + hi);
        }
    }
}
