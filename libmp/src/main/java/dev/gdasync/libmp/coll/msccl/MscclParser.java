package dev.gdasync.libmp.coll.msccl;

import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Reads MSCCL-IR XML with the JDK's StAX parser (DTDs and external entities off) into an {@link MscclProgram} and
 * hands it to {@link MscclValidator}; every error is an {@link MscclFormatException} naming the source, line,
 * gpu, thread block and step. Unknown attributes are refused (a misspelt one would otherwise be ignored).
 */
public final class MscclParser {
    private static final Set<String> ALGO = Set.of("name", "proto", "nchannels", "nchunksperloop", "ngpus", "coll",
            "inplace", "outofplace", "minBytes", "maxBytes", "redop");
    private static final Set<String> GPU = Set.of("id", "i_chunks", "o_chunks", "s_chunks");
    private static final Set<String> TB = Set.of("id", "send", "recv", "chan");
    private static final Set<String> STEP = Set.of("s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt",
            "depid", "deps", "hasdep");

    private final MscclLimits limits;

    /** @param limits what programs may use */
    public MscclParser(MscclLimits limits) {
        this.limits = Objects.requireNonNull(limits, "limits must not be null");
    }

    /**
     * @param file an MSCCL-IR file
     * @return the validated program
     * @throws MscclFormatException if it is malformed or breaks a rule
     * @throws UncheckedIOException if it cannot be read
     */
    public MscclProgram parse(Path file) {
        Objects.requireNonNull(file, "file must not be null");
        try (InputStream in = Files.newInputStream(file)) {
            return parse(in, file.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read MSCCL-IR file " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * @param in     the XML
     * @param source its name for messages
     * @return the validated program
     * @throws MscclFormatException if it is malformed or breaks a rule
     */
    public MscclProgram parse(InputStream in, String source) {
        Objects.requireNonNull(in, "in must not be null");
        Objects.requireNonNull(source, "source must not be null");
        XMLInputFactory f = XMLInputFactory.newFactory();
        f.setProperty(XMLInputFactory.SUPPORT_DTD, false);
        f.setProperty(XMLInputFactory.IS_SUPPORTING_EXTERNAL_ENTITIES, false);
        XMLStreamReader r = null;
        try {
            r = f.createXMLStreamReader(in);
            MscclProgram p = new Reader(r, source).algo();
            new MscclValidator(limits).validate(p);
            return p;
        } catch (XMLStreamException e) {
            int line = e.getLocation() == null ? -1 : e.getLocation().getLineNumber();
            throw new MscclFormatException(source + ":" + line + ": not well-formed XML: " + e.getMessage(), e);
        } finally {
            if (r != null) {
                try {
                    r.close();
                } catch (XMLStreamException ignored) {
                    // the stream is closed by the caller
                }
            }
        }
    }

    /** One pass over one document; {@code where} tracks gpu/tb/step for messages. */
    private static final class Reader {
        private final XMLStreamReader r;
        private final String source;
        private String where = "";

        Reader(XMLStreamReader r, String source) {
            this.r = r;
            this.source = source;
        }

        MscclProgram algo() throws XMLStreamException {
            next();
            expect("algo");
            checkAttributes(ALGO);
            String name = attr("name", null);
            String proto = attr("proto", "Simple");
            if (!Set.of("Simple", "LL", "LL128").contains(proto)) {
                throw error("proto='" + proto + "' is not one of Simple, LL, LL128");
            }
            int nchannels = intAttr("nchannels", null);
            int nchunks = intAttr("nchunksperloop", null);
            int ngpus = intAttr("ngpus", null);
            String coll = attr("coll", null);
            Collective c = Collective.ofXml(coll);
            if (c == null) {
                throw error("coll='" + coll + "' is not one of allreduce, allgather, alltoall, reduce_scatter");
            }
            boolean inPlace = boolAttr("inplace", null);
            String outOfPlace = attr("outofplace", "");
            if (!outOfPlace.isEmpty() && parseBool("outofplace", outOfPlace) == inPlace) {
                throw error("inplace='" + (inPlace ? 1 : 0) + "' contradicts outofplace='" + outOfPlace + "'");
            }
            String redop = attr("redop", "");
            if (!redop.isEmpty() && !Set.of("sum", "prod", "max", "min").contains(redop)) {
                throw error("redop='" + redop + "' is not one of sum, prod, max, min");
            }
            long minBytes = longAttr("minBytes", "0");
            long maxBytes = longAttr("maxBytes", "0");
            if (maxBytes == 0) {
                maxBytes = Long.MAX_VALUE;
            }
            if (minBytes < 0 || maxBytes <= minBytes) {
                throw error("size range minBytes=" + minBytes + " maxBytes=" + attr("maxBytes", "0")
                        + " is empty (need 0 <= minBytes < maxBytes, or maxBytes 0 for no upper bound)");
            }
            List<MscclProgram.Gpu> gpus = new ArrayList<>();
            while (next() == XMLStreamConstants.START_ELEMENT) {
                gpus.add(gpu());
            }
            expectEnd("algo");
            if (next() != XMLStreamConstants.END_DOCUMENT) {
                throw error("content after </algo>: one program per file");
            }
            return new MscclProgram(source, name, proto, nchannels, nchunks, ngpus, c, inPlace, minBytes, maxBytes,
                    gpus);
        }

        private MscclProgram.Gpu gpu() throws XMLStreamException {
            expect("gpu");
            where = "";
            checkAttributes(GPU);
            int id = intAttr("id", null);
            where = "gpu " + id + ": ";
            int i = intAttr("i_chunks", "0");
            int o = intAttr("o_chunks", "0");
            int s = intAttr("s_chunks", "0");
            List<MscclProgram.ThreadBlock> tbs = new ArrayList<>();
            while (next() == XMLStreamConstants.START_ELEMENT) {
                tbs.add(tb(id));
            }
            expectEnd("gpu");
            where = "";
            return new MscclProgram.Gpu(id, i, o, s, tbs);
        }

        private MscclProgram.ThreadBlock tb(int gpu) throws XMLStreamException {
            expect("tb");
            checkAttributes(TB);
            int id = intAttr("id", null);
            where = "gpu " + gpu + " tb " + id + ": ";
            int send = intAttr("send", "-1");
            int recv = intAttr("recv", "-1");
            int chan = intAttr("chan", "0");
            List<MscclProgram.Step> steps = new ArrayList<>();
            while (next() == XMLStreamConstants.START_ELEMENT) {
                steps.add(step(gpu, id));
            }
            expectEnd("tb");
            where = "gpu " + gpu + ": ";
            return new MscclProgram.ThreadBlock(id, send, recv, chan, steps);
        }

        private MscclProgram.Step step(int gpu, int tb) throws XMLStreamException {
            expect("step");
            int s = intAttr("s", null);
            where = "gpu " + gpu + " tb " + tb + " step " + s + ": ";
            checkAttributes(STEP);
            String typeName = attr("type", null);
            StepType type = StepType.ofXml(typeName);
            if (type == null) {
                throw error("type='" + typeName + "' is not one of s, r, rcs, rrs, rrc, rrcs, cpy, re, nop");
            }
            Buffer src = buffer("srcbuf");
            Buffer dst = buffer("dstbuf");
            MscclProgram.Step st = new MscclProgram.Step(s, type, src, intAttr("srcoff", "-1"), dst,
                    intAttr("dstoff", "-1"), intAttr("cnt", type == StepType.NOP ? "0" : null), intAttr("depid", "-1"),
                    intAttr("deps", "-1"), boolAttr("hasdep", "0"));
            if (next() != XMLStreamConstants.END_ELEMENT) {
                throw error("<step> must be empty");
            }
            where = "gpu " + gpu + " tb " + tb + ": ";
            return st;
        }

        private Buffer buffer(String attribute) {
            String v = attr(attribute, "");
            if (v.isEmpty()) {
                return null;
            }
            Buffer b = Buffer.ofXml(v);
            if (b == null) {
                throw error(attribute + "='" + v + "' is not one of i, o, s");
            }
            return b;
        }

        /** Moves to the next element start or end, skipping whitespace, comments and processing instructions. */
        private int next() throws XMLStreamException {
            while (r.hasNext()) {
                int e = r.next();
                switch (e) {
                    case XMLStreamConstants.START_ELEMENT, XMLStreamConstants.END_ELEMENT,
                         XMLStreamConstants.END_DOCUMENT -> {
                        return e;
                    }
                    case XMLStreamConstants.CHARACTERS, XMLStreamConstants.SPACE -> {
                        if (!r.isWhiteSpace()) {
                            throw error("unexpected text '" + r.getText().strip() + "'");
                        }
                    }
                    default -> {
                        // comments, processing instructions
                    }
                }
            }
            return XMLStreamConstants.END_DOCUMENT;
        }

        private void expect(String element) {
            if (r.getEventType() != XMLStreamConstants.START_ELEMENT || !element.equals(r.getLocalName())) {
                String got = r.getEventType() == XMLStreamConstants.START_ELEMENT ? "<" + r.getLocalName() + ">"
                        : r.getEventType() == XMLStreamConstants.END_ELEMENT ? "</" + r.getLocalName() + ">"
                        : "the end of the document";
                throw error("expected <" + element + ">, found " + got);
            }
        }

        private void expectEnd(String element) {
            if (r.getEventType() != XMLStreamConstants.END_ELEMENT || !element.equals(r.getLocalName())) {
                throw error("expected </" + element + ">");
            }
        }

        private void checkAttributes(Set<String> allowed) {
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < r.getAttributeCount(); i++) {
                String a = r.getAttributeLocalName(i);
                if (!allowed.contains(a)) {
                    throw error("<" + r.getLocalName() + "> has unknown attribute " + a + " (allowed: "
                            + String.join(", ", allowed.stream().sorted().toList()) + ")");
                }
                seen.add(a);
            }
        }

        private String attr(String name, String dflt) {
            String v = r.getAttributeValue(null, name);
            if (v == null) {
                if (dflt == null) {
                    throw error("<" + r.getLocalName() + "> lacks attribute " + name);
                }
                return dflt;
            }
            return v.strip();
        }

        private int intAttr(String name, String dflt) {
            long v = longAttr(name, dflt);
            if (v != (int) v) {
                throw error(name + "='" + v + "' is out of range");
            }
            return (int) v;
        }

        private long longAttr(String name, String dflt) {
            String v = attr(name, dflt);
            try {
                return Long.parseLong(v);
            } catch (NumberFormatException e) {
                throw error(name + "='" + v + "' is not an integer");
            }
        }

        private boolean boolAttr(String name, String dflt) {
            return parseBool(name, attr(name, dflt));
        }

        private boolean parseBool(String name, String v) {
            return switch (v) {
                case "1", "true" -> true;
                case "0", "false" -> false;
                default -> throw error(name + "='" + v + "' is not 0 or 1");
            };
        }

        private MscclFormatException error(String what) {
            return new MscclFormatException(source + ":" + r.getLocation().getLineNumber() + ": " + where + what);
        }
    }
}
