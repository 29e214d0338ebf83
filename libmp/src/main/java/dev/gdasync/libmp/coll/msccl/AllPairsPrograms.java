package dev.gdasync.libmp.coll.msccl;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;

/**
 * The built-in algorithms of the stream interpreter, written as MSCCL-IR and run like a loaded program: all pairs,
 * so that they fit every count (one chunk per rank, or one in all for allreduce) and every rank count. Each rank has
 * a thread block per peer that sends its part to that peer and receives the peer's part, and a local thread block
 * that copies its own part and, for the reducing collectives, reduces the received parts in rank order
 * ({@code ((x0 ∘ x1) ∘ x2) …}), so floating-point results are the same bits on every rank. Each rank moves its
 * data to every peer: the blocking built-ins (ring, recursive doubling) move less, but have no stream form.
 * Generated as XML and checked by the same parser and validator as a file.
 */
final class AllPairsPrograms {
    private AllPairsPrograms() {
    }

    /**
     * @param c       the collective
     * @param n       ranks
     * @param inPlace the layout
     * @return the validated program
     */
    static MscclProgram of(Collective c, int n, boolean inPlace) {
        boolean reduces = c == Collective.ALLREDUCE || c == Collective.REDUCE_SCATTER;
        int chunks = c == Collective.ALLREDUCE ? 1 : n;
        StringBuilder x = new StringBuilder();
        x.append("<algo name=\"builtin_allpairs_").append(c.xml()).append("\" proto=\"Simple\" nchannels=\"1\" ")
                .append("nchunksperloop=\"").append(chunks).append("\" ngpus=\"").append(n).append("\" coll=\"")
                .append(c.xml()).append("\" inplace=\"").append(inPlace ? 1 : 0).append("\">\n");
        for (int r = 0; r < n; r++) {
            int in = c == Collective.ALLGATHER ? 1 : chunks;
            int out = c == Collective.REDUCE_SCATTER ? 1 : chunks;
            x.append("<gpu id=\"").append(r).append("\" i_chunks=\"").append(in).append("\" o_chunks=\"").append(out)
                    .append("\" s_chunks=\"").append(reduces ? n : 0).append("\">\n");
            int tb = 0;
            for (int j = 0; j < n; j++) {
                if (j == r) {
                    continue;
                }
                x.append("<tb id=\"").append(tb++).append("\" send=\"").append(j).append("\" recv=\"").append(j)
                        .append("\" chan=\"0\">\n");
                switch (c) {
                    case ALLREDUCE -> {
                        step(x, 0, "s", "i", 0, "s", r, -1, false);
                        step(x, 1, "r", "s", j, "s", j, -1, true);
                    }
                    case REDUCE_SCATTER -> {
                        step(x, 0, "s", "i", j, "s", r, -1, false);
                        step(x, 1, "r", "s", j, "s", j, -1, true);
                    }
                    case ALLGATHER -> {
                        step(x, 0, "s", "i", 0, "o", r, -1, false);
                        step(x, 1, "r", "o", j, "o", j, -1, false);
                    }
                    case ALLTOALL -> {
                        step(x, 0, "s", "i", j, "o", r, -1, false);
                        step(x, 1, "r", "o", j, "o", j, -1, false);
                    }
                }
                x.append("</tb>\n");
            }
            x.append("<tb id=\"").append(tb).append("\" send=\"-1\" recv=\"-1\" chan=\"0\">\n");
            int s = 0;
            switch (c) {
                case ALLGATHER -> step(x, s, "cpy", "i", 0, "o", r, -1, false);
                case ALLTOALL -> step(x, s, "cpy", "i", r, "o", r, -1, false);
                default -> {
                    // Own part into scratch, wait for every peer's part, then reduce in rank order.
                    step(x, s++, "cpy", "i", c == Collective.ALLREDUCE ? 0 : r, "s", r, -1, false);
                    for (int p = 0; p < tb; p++) {
                        step(x, s++, "nop", "s", 0, "s", 0, p, false);
                    }
                    step(x, s++, "cpy", "s", 0, "o", 0, -1, false);
                    for (int k = 1; k < n; k++) {
                        step(x, s++, "re", "s", k, "o", 0, -1, false);
                    }
                }
            }
            x.append("</tb>\n</gpu>\n");
        }
        x.append("</algo>\n");
        return parse(x, "built-in all-pairs " + c.xml());
    }

    /** Checks a generated program with the parser and validator that check files. */
    static MscclProgram parse(StringBuilder xml, String name) {
        return new MscclParser(MscclLimits.defaults()).parse(
                new ByteArrayInputStream(xml.toString().getBytes(StandardCharsets.UTF_8)), name);
    }

    /** One step of one chunk; {@code dep >= 0} waits for step 1 (the receive) of thread block {@code dep}. */
    static void step(StringBuilder x, int s, String type, String src, int srcoff, String dst, int dstoff,
                     int dep, boolean hasdep) {
        step(x, s, type, src, srcoff, dst, dstoff, dep, dep >= 0 ? 1 : -1, hasdep);
    }

    /** One step of one chunk; {@code depid >= 0} waits for step {@code deps} of thread block {@code depid}. */
    static void step(StringBuilder x, int s, String type, String src, int srcoff, String dst, int dstoff,
                     int depid, int deps, boolean hasdep) {
        x.append("<step s=\"").append(s).append("\" type=\"").append(type).append("\" srcbuf=\"").append(src)
                .append("\" srcoff=\"").append(srcoff).append("\" dstbuf=\"").append(dst).append("\" dstoff=\"")
                .append(dstoff).append("\" cnt=\"").append(type.equals("nop") ? 0 : 1).append("\" depid=\"")
                .append(depid).append("\" deps=\"").append(deps).append("\" hasdep=\"")
                .append(hasdep ? 1 : 0).append("\"/>\n");
    }
}
