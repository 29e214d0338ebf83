package dev.gdasync.libmp.coll.msccl;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes MSCCL-IR programs for the tests: a ring allreduce over several channels, an allreduce through a scratch
 * buffer with nop chains, a hierarchical (two nodes of two) allreduce, and a dependency cycle.
 */
final class IrGenerator {
    private final StringBuilder xml = new StringBuilder();
    private final List<String> steps = new ArrayList<>();

    private IrGenerator() {
    }

    private IrGenerator algo(String name, int nchannels, int nchunks, int ngpus, String coll, boolean inPlace,
                             String extra) {
        xml.append("<algo name=\"").append(name).append("\" proto=\"Simple\" nchannels=\"").append(nchannels)
                .append("\" nchunksperloop=\"").append(nchunks).append("\" ngpus=\"").append(ngpus)
                .append("\" coll=\"").append(coll).append("\" inplace=\"").append(inPlace ? 1 : 0).append('"')
                .append(extra).append(">\n");
        return this;
    }

    private IrGenerator gpu(int id, int i, int o, int s) {
        xml.append("  <gpu id=\"").append(id).append("\" i_chunks=\"").append(i).append("\" o_chunks=\"").append(o)
                .append("\" s_chunks=\"").append(s).append("\">\n");
        return this;
    }

    private IrGenerator tb(int id, int send, int recv, int chan) {
        xml.append("    <tb id=\"").append(id).append("\" send=\"").append(send).append("\" recv=\"").append(recv)
                .append("\" chan=\"").append(chan).append("\">\n");
        steps.clear();
        return this;
    }

    private IrGenerator step(String type, String srcbuf, int srcoff, String dstbuf, int dstoff, int cnt, int depid,
                             int deps, boolean hasdep) {
        xml.append("      <step s=\"").append(steps.size()).append("\" type=\"").append(type).append("\" srcbuf=\"")
                .append(srcbuf).append("\" srcoff=\"").append(srcoff).append("\" dstbuf=\"").append(dstbuf)
                .append("\" dstoff=\"").append(dstoff).append("\" cnt=\"").append(cnt).append("\" depid=\"")
                .append(depid).append("\" deps=\"").append(deps).append("\" hasdep=\"").append(hasdep ? 1 : 0)
                .append("\"/>\n");
        steps.add(type);
        return this;
    }

    private IrGenerator step(String type, int off) {
        return step(type, "i", off, "i", off, 1, -1, -1, false);
    }

    private IrGenerator endTb() {
        xml.append("    </tb>\n");
        return this;
    }

    private IrGenerator endGpu() {
        xml.append("  </gpu>\n");
        return this;
    }

    private String end() {
        return xml.append("</algo>\n").toString();
    }

    /**
     * Ring allreduce in place, {@code nch} channels each running a ring over its own n chunks.
     *
     * @param extra more algo attributes (a size range)
     */
    static String ringAllreduce(int n, int nch, String extra) {
        IrGenerator g = new IrGenerator().algo("ring_allreduce_" + nch + "ch", nch, n * nch, n, "allreduce", true,
                extra);
        for (int r = 0; r < n; r++) {
            g.gpu(r, n * nch, 0, 0);
            for (int c = 0; c < nch; c++) {
                int b = c * n;
                g.tb(c, (r + 1) % n, (r + n - 1) % n, c);
                g.step("s", b + r);
                for (int k = 1; k <= n - 2; k++) {
                    g.step("rrs", b + Math.floorMod(r - k, n));
                }
                g.step("rrcs", b + Math.floorMod(r + 1, n));
                for (int k = 0; k <= n - 3; k++) {
                    g.step("rcs", b + Math.floorMod(r - k, n));
                }
                g.step("r", b + Math.floorMod(r + 2, n));
                g.endTb();
            }
            g.endGpu();
        }
        return g.end();
    }

    /**
     * Allreduce in place of one chunk through scratch: a thread block per peer sends the input and receives the
     * peer's into its scratch chunk; a last block waits for all of them (a nop chain) and reduces the scratch
     * chunks into the input.
     */
    static String scratchAllreduce(int n) {
        IrGenerator g = new IrGenerator().algo("scratch_allreduce", 1, 1, n, "allreduce", true, "");
        for (int r = 0; r < n; r++) {
            g.gpu(r, 1, 0, n - 1);
            int t = 0;
            for (int p = 0; p < n; p++) {
                if (p == r) {
                    continue;
                }
                g.tb(t, p, p, 0);
                g.step("s", "i", 0, "s", t, 1, -1, -1, false);
                g.step("r", "i", 0, "s", t, 1, -1, -1, true);
                g.endTb();
                t++;
            }
            g.tb(t, -1, -1, 0);
            for (int k = 0; k < n - 2; k++) {
                g.step("nop", "i", 0, "i", 0, 0, k, 1, false);
            }
            for (int k = 0; k < n - 1; k++) {
                int dep = k == 0 ? n - 2 : -1;
                g.step("re", "s", k, "i", 0, 1, dep, dep < 0 ? -1 : 1, false);
            }
            g.endTb();
            g.endGpu();
        }
        return g.end();
    }

    /**
     * Hierarchical allreduce on 2 nodes of 2 ranks (node = rank / 2), 2 chunks: reduce-scatter inside the node
     * (channel 0), allreduce of the owned chunk across nodes (channel 1), allgather inside the node (channel 0).
     */
    static String hierarchicalAllreduce() {
        IrGenerator g = new IrGenerator().algo("hierarchical_allreduce_2x2", 2, 2, 4, "allreduce", true, "");
        for (int r = 0; r < 4; r++) {
            int mine = r % 2;
            int other = 1 - mine;
            int partner = r ^ 1;
            int counterpart = r ^ 2;
            g.gpu(r, 2, 0, 0);
            g.tb(0, partner, partner, 0);
            g.step("s", other);
            g.step("rrc", "i", mine, "i", mine, 1, -1, -1, true);
            g.step("s", "i", mine, "i", mine, 1, 1, 1, false);
            g.step("r", other);
            g.endTb();
            g.tb(1, counterpart, counterpart, 1);
            g.step("s", "i", mine, "i", mine, 1, 0, 1, false);
            g.step("rrc", "i", mine, "i", mine, 1, -1, -1, true);
            g.endTb();
            g.endGpu();
        }
        return g.end();
    }

    /** Two thread blocks of each rank waiting for each other: valid XML, a dependency cycle at run time. */
    static String cycle(int n) {
        IrGenerator g = new IrGenerator().algo("cycle", 1, 1, n, "allreduce", true, "");
        for (int r = 0; r < n; r++) {
            g.gpu(r, 1, 0, 0);
            g.tb(0, -1, -1, 0);
            g.step("nop", "i", 0, "i", 0, 0, 1, 0, true);
            g.endTb();
            g.tb(1, -1, -1, 0);
            g.step("nop", "i", 0, "i", 0, 0, 0, 0, true);
            g.endTb();
            g.endGpu();
        }
        return g.end();
    }

    static Path write(Path dir, String name, String xml) throws IOException {
        Path f = dir.resolve(name);
        Files.writeString(f, xml);
        return f;
    }
}
