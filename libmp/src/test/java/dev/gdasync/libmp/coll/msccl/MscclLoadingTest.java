package dev.gdasync.libmp.coll.msccl;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Parsing every attribute, rejecting every malformed case with its message, loading all or nothing, selecting. */
class MscclLoadingTest {
    private static final MscclParser PARSER = new MscclParser(MscclLimits.defaults());
    private static final String RING = IrGenerator.ringAllreduce(4, 1, "");

    @TempDir
    Path dir;

    static MscclProgram parse(String xml) {
        return PARSER.parse(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)), "test.xml");
    }

    @Test
    void referenceProgramsParseWithEveryAttribute() {
        MscclProgram rdh = PARSER.parse(MscclRanks.resource("reference/allreduce_rdh_4gpu_simple.xml"));
        assertEquals("allreduce_recursive_doubling_halving", rdh.name());
        assertEquals(Collective.ALLREDUCE, rdh.collective());
        assertTrue(rdh.inPlace());
        assertEquals(4, rdh.nchunksperloop());
        assertEquals(2, rdh.maxCnt());
        MscclProgram.Step st = rdh.gpus().get(1).tbs().get(1).steps().get(2);
        assertEquals(new MscclProgram.Step(2, StepType.SEND, Buffer.INPUT, 0, Buffer.INPUT, 0, 2, 0, 3, false), st);
        assertTrue(rdh.gpus().get(0).tbs().get(0).steps().get(3).hasdep());
        MscclProgram a2a = PARSER.parse(MscclRanks.resource("reference/alltoall_allpairs_4gpu_simple.xml"));
        assertFalse(a2a.inPlace());
        assertEquals(6, a2a.gpus().get(0).tbs().size());
        assertEquals(StepType.COPY, a2a.gpus().get(0).tbs().get(3).steps().get(1).type());
        MscclProgram scratch = parse(IrGenerator.scratchAllreduce(3));
        assertEquals(2, scratch.gpus().get(0).sChunks());
        assertEquals(StepType.NOP, scratch.gpus().get(0).tbs().get(2).steps().get(0).type());
        MscclProgram ranged = parse(IrGenerator.ringAllreduce(2, 2, " minBytes=\"16\" maxBytes=\"4096\""));
        assertEquals(16, ranged.minBytes());
        assertEquals(4096, ranged.maxBytes());
        assertEquals(Long.MAX_VALUE, parse(RING).maxBytes());
    }

    /** (what is changed, the change, a part of the message). */
    static Stream<Arguments> malformed() {
        String step0 = "<step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\"";
        return Stream.of(
                Arguments.of("not XML", RING.substring(0, 200), "not well-formed XML"),
                Arguments.of("root", "<gpu id=\"0\"/>", "expected <algo>, found <gpu>"),
                Arguments.of("unknown attribute", RING.replace(step0, step0 + " colour=\"red\""),
                        "gpu 0 tb 0 step 0: <step> has unknown attribute colour"),
                Arguments.of("step type", RING.replace(step0.replace("\"s\" srcbuf", "\"s\" srcbuf"),
                        step0.replace("type=\"s\"", "type=\"xs\"")), "gpu 0 tb 0 step 0: type='xs' is not one of"),
                Arguments.of("missing cnt", RING.replaceFirst(" cnt=\"1\"", ""), "gpu 0 tb 0 step 0: <step> lacks attribute cnt"),
                Arguments.of("number", RING.replaceFirst("srcoff=\"0\"", "srcoff=\"zero\""), "srcoff='zero' is not an integer"),
                Arguments.of("coll", RING.replace("coll=\"allreduce\"", "coll=\"broadcast\""),
                        "coll='broadcast' is not one of allreduce, allgather, alltoall, reduce_scatter"),
                Arguments.of("proto", RING.replace("proto=\"Simple\"", "proto=\"LL256\""), "proto='LL256' is not one of"),
                Arguments.of("size range", RING.replace("inplace=\"1\"", "inplace=\"1\" minBytes=\"100\" maxBytes=\"50\""),
                        "size range minBytes=100 maxBytes=50 is empty"),
                Arguments.of("ngpus", RING.replace("ngpus=\"4\"", "ngpus=\"3\""), "ngpus=3 but the file has 4 <gpu> elements"),
                Arguments.of("gpu order", RING.replace("<gpu id=\"1\"", "<gpu id=\"5\""), "<gpu> number 1 has id 5"),
                Arguments.of("send peer", RING.replaceFirst("send=\"1\"", "send=\"7\""), "gpu 0 tb 0: send=7 is not a rank 0..3 or -1"),
                Arguments.of("self", RING.replaceFirst("send=\"1\"", "send=\"0\""), "gpu 0 tb 0: send=0 is the gpu itself"),
                Arguments.of("channel", RING.replaceFirst("chan=\"0\"", "chan=\"1\""), "gpu 0 tb 0: chan=1 is outside 0..0"),
                Arguments.of("chunk range", RING.replaceFirst("srcoff=\"0\"", "srcoff=\"4\""),
                        "gpu 0 tb 0 step 0: src chunks 4..4 of buffer i are outside its 4 chunks"),
                Arguments.of("i_chunks", RING.replaceFirst("i_chunks=\"4\"", "i_chunks=\"3\""),
                        "gpu 0: i_chunks=3 but allreduce of 4 chunks on 4 ranks has 4"),
                Arguments.of("no send connection", RING.replaceFirst("send=\"1\"", "send=\"-1\""),
                        "gpu 0 tb 0 step 0: s sends but the thread block has send=-1"),
                Arguments.of("dependency on a silent step", RING.replaceFirst("depid=\"-1\" deps=\"-1\"", "depid=\"0\" deps=\"1\""),
                        "depends on its own thread block"),
                Arguments.of("depid without deps", RING.replaceFirst("depid=\"-1\" deps=\"-1\"", "depid=\"0\" deps=\"-1\""),
                        "depid=0 and deps=-1 must both be -1 or both name a step"),
                Arguments.of("cnt mismatch", RING.replaceFirst("cnt=\"1\"", "cnt=\"2\"").replaceFirst("srcoff=\"0\"", "srcoff=\"0\""),
                        "gpu 0 tb 0 sends chunk counts [2, 1, 1, 1, 1, 1] to gpu 1 on channel 0 but gpu 1 tb 0 receives [1, 1, 1, 1, 1, 1]"),
                Arguments.of("steps out of order", RING.replaceFirst("<step s=\"1\"", "<step s=\"2\""),
                        "gpu 0 tb 0: <step> number 1 has s=2"),
                Arguments.of("text", RING.replaceFirst("<tb ", "hello <tb "), "unexpected text 'hello'"),
                Arguments.of("two programs", RING + RING.substring(0, 40), "not well-formed XML"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedProgramsAreRejectedWithTheirMessage(String what, String xml, String part) {
        MscclFormatException e = assertThrows(MscclFormatException.class, () -> parse(xml));
        assertTrue(e.getMessage().startsWith("test.xml:"), e.getMessage());
        assertTrue(e.getMessage().contains(part), what + ": '" + e.getMessage() + "' lacks '" + part + "'");
    }

    @Test
    void dependencyRulesNameTheStep() {
        String scratch = IrGenerator.scratchAllreduce(3);
        // The reducer's nop waits for tb 0 step 1; make that step stop signalling.
        String silent = scratch.replaceFirst("dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"",
                "dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"");
        assertMessage(silent, "gpu 0 tb 2 step 0: depends on tb 0 step 1, which has hasdep=0 and so never signals");
        assertMessage(scratch.replaceFirst("cnt=\"0\" depid=\"0\" deps=\"1\"", "cnt=\"0\" depid=\"9\" deps=\"1\""),
                "gpu 0 tb 2 step 0: depends on tb 9 but gpu 0 has 3 thread blocks");
        assertMessage(scratch.replaceFirst("cnt=\"0\" depid=\"0\" deps=\"1\"", "cnt=\"0\" depid=\"0\" deps=\"5\""),
                "depends on tb 0 step 5 but that block has 2 steps");
        assertMessage(scratch.replaceFirst("s_chunks=\"2\"", "s_chunks=\"1\""),
                "gpu 0 tb 1 step 1: dst chunks 1..1 of buffer s are outside its 1 chunks (s_chunks)");
        String twoOnOne = IrGenerator.hierarchicalAllreduce().replaceFirst("<tb id=\"1\" send=\"2\" recv=\"2\" chan=\"1\"",
                "<tb id=\"1\" send=\"1\" recv=\"2\" chan=\"0\"");
        assertMessage(twoOnOne, "gpu 0 tb 1: send=1 on channel 0 is already tb 0's connection");
        MscclLimits tight = new MscclLimits(1024, 32, 1, 4096, 65_536);
        MscclFormatException e = assertThrows(MscclFormatException.class, () -> new MscclParser(tight).parse(
                new ByteArrayInputStream(scratch.getBytes(StandardCharsets.UTF_8)), "tight.xml"));
        assertEquals("tight.xml: gpu 0: thread blocks=3 is outside 0..1", e.getMessage());
    }

    private static void assertMessage(String xml, String part) {
        MscclFormatException e = assertThrows(MscclFormatException.class, () -> parse(xml));
        assertTrue(e.getMessage().contains(part), "'" + e.getMessage() + "' lacks '" + part + "'");
    }

    @Test
    void loadingIsAllOrNothingAndReadsTheEnvironment() throws Exception {
        Path good = IrGenerator.write(dir, "a_ring.xml", RING);
        Path bad = IrGenerator.write(dir, "b_bad.xml", RING.replace("ngpus=\"4\"", "ngpus=\"2\""));
        MscclFormatException e = assertThrows(MscclFormatException.class,
                () -> MscclPrograms.load(List.of(good, bad), MscclLimits.defaults()));
        assertTrue(e.getMessage().startsWith(bad.toString()), e.getMessage());
        assertEquals(1, MscclPrograms.load(List.of(good), MscclLimits.defaults()).programs().size());
        String before = System.getProperty(MscclPrograms.PROPERTY);
        try {
            Path sub = dir.resolve("sub");
            java.nio.file.Files.createDirectories(sub);
            IrGenerator.write(sub, "x.xml", IrGenerator.scratchAllreduce(2));
            IrGenerator.write(sub, "notes.txt", "not a program");
            System.setProperty(MscclPrograms.PROPERTY, good + java.io.File.pathSeparator + sub);
            MscclPrograms p = MscclPrograms.fromEnvironment();
            assertEquals(List.of("ring_allreduce_1ch", "scratch_allreduce"),
                    p.programs().stream().map(MscclProgram::name).toList());
            System.setProperty(MscclPrograms.PROPERTY, dir.resolve("missing.xml").toString());
            assertThrows(java.io.UncheckedIOException.class, MscclPrograms::fromEnvironment);
        } finally {
            if (before == null) {
                System.clearProperty(MscclPrograms.PROPERTY);
            } else {
                System.setProperty(MscclPrograms.PROPERTY, before);
            }
        }
    }

    @Test
    void selectionFollowsCollectiveInPlaceRanksDivisibilityAndHalfOpenRanges() {
        MscclProgram small = parse(IrGenerator.ringAllreduce(4, 1, " maxBytes=\"1024\""));
        MscclProgram large = parse(IrGenerator.ringAllreduce(4, 2, " minBytes=\"1024\""));
        MscclPrograms ps = MscclPrograms.of(List.of(small, large));
        assertEquals(small, ps.select(Collective.ALLREDUCE, true, 4, 1008, 252).orElseThrow());
        assertEquals(large, ps.select(Collective.ALLREDUCE, true, 4, 1024, 256).orElseThrow());
        assertTrue(ps.select(Collective.ALLREDUCE, true, 4, 4, 1).isEmpty(), "fewer elements than chunks");
        assertTrue(ps.select(Collective.ALLREDUCE, true, 4, 1028, 257).isEmpty(), "257 not a multiple of 8");
        assertTrue(ps.select(Collective.ALLREDUCE, false, 4, 64, 16).isEmpty(), "out of place");
        assertTrue(ps.select(Collective.ALLREDUCE, true, 3, 64, 16).isEmpty(), "3 ranks");
        assertTrue(ps.select(Collective.ALLGATHER, true, 4, 64, 16).isEmpty(), "allgather");
        assertTrue(MscclPrograms.none().select(Collective.ALLREDUCE, true, 4, 64, 16).isEmpty());
    }
}
