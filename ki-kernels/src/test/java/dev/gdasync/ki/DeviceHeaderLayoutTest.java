package dev.gdasync.ki;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.ki.KiTableLayout;
import dev.gdasync.gdsync.ki.MscclTableLayout;
import dev.gdasync.gdsync.ki.Reduction;
import dev.gdasync.gdsync.ki.ShmemKiLayout;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.ki.kernels.KiKernelLayout;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.SequenceLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The C structs of {@code device.cuh}, {@code shmem.cuh} and {@code msccl_interpreter.cuh} against the Java layouts: a
 * probe program compiled with the host C++ compiler prints every struct's size, every field's offset and size and the
 * constants, and dumps a KI table and an MSCCL kernel table that Java wrote with the C structs.
 */
class DeviceHeaderLayoutTest {
    /** Every Java layout the header mirrors. */
    private static final List<StructLayout> STRUCTS = List.of(KiTableLayout.HEADER, KiTableLayout.SEND,
            KiTableLayout.WAIT, KiTableLayout.TEMPLATE, KiKernelLayout.EXCHANGE_CTL, KiKernelLayout.COPY,
            KiKernelLayout.EXCHANGE_WORK, KiKernelLayout.TEMPLATE_ARGS, ShmemKiLayout.PE, ShmemKiLayout.STATE,
            MscclTableLayout.HEADER, MscclTableLayout.TB, MscclTableLayout.STEP);

    @TempDir
    static Path dir;
    private static Path probe;
    private static String skipped;

    @BeforeAll
    static void compileProbe() throws Exception {
        Optional<Path> gxx = NativeTools.onPath("g++");
        if (gxx.isEmpty()) {
            skipped = "no g++ on PATH: the C structs of device.cuh are not checked against the Java layouts";
            System.out.println("DeviceHeaderLayoutTest skipped: " + skipped);
            return;
        }
        probe = dir.resolve("layout_probe");
        NativeTools.Result r = NativeTools.run(List.of(gxx.get().toString(), "-std=c++17", "-Wall", "-Wextra", "-Werror",
                "-I", NativeTools.cudaDir().toString(), "-o", probe.toString(),
                NativeTools.moduleDir().resolve("src/test/cpp/layout_probe.cpp").toString()));
        assertEquals(0, r.exitCode(), "g++ failed on the layout probe:\n" + r.output());
    }

    private static void assumeProbe() {
        Assumptions.assumeTrue(skipped == null, skipped);
    }

    private static List<String> probe(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(probe.toString());
        command.addAll(List.of(args));
        NativeTools.Result r = NativeTools.run(command);
        assertEquals(0, r.exitCode(), "layout probe failed:\n" + r.output());
        return r.output().lines().filter(l -> !l.isBlank()).toList();
    }

    @Test
    void everyStructAndFieldMatchesTheJavaLayout() throws Exception {
        assumeProbe();
        Map<String, Long> sizes = new TreeMap<>();
        Map<String, List<String>> fields = new LinkedHashMap<>();
        for (String line : probe("layout")) {
            String[] w = line.split(" ");
            switch (w[0]) {
                case "struct" -> sizes.put(w[1], Long.parseLong(w[2]));
                case "field" -> fields.computeIfAbsent(w[1], k -> new ArrayList<>()).add(w[2] + "@" + w[3] + "+" + w[4]);
                case "const" -> { }
                default -> throw new AssertionError("unexpected probe line: " + line);
            }
        }
        Map<String, Long> javaSizes = new TreeMap<>();
        for (StructLayout s : STRUCTS) {
            String name = s.name().orElseThrow();
            javaSizes.put(name, s.byteSize());
            assertEquals(javaFields(s), fields.get(name), "fields of " + name + " (name@offset+size)");
        }
        assertEquals(javaSizes, sizes, "struct sizes, Java and C");
    }

    /** A layout's members as name@offset+size (members follow one another); padding is the C side's {@code reserved}. */
    private static List<String> javaFields(StructLayout s) {
        List<String> out = new ArrayList<>();
        long offset = 0;
        for (MemoryLayout m : s.memberLayouts()) {
            String name = m instanceof PaddingLayout ? "reserved" : m.name().orElseThrow();
            out.add(name + "@" + offset + "+" + m.byteSize());
            offset += m.byteSize();
        }
        return out;
    }

    @Test
    void constantsMatchTheJavaSide() throws Exception {
        assumeProbe();
        Map<String, Long> expected = new TreeMap<>();
        expected.put("GDS_KI_MAGIC", Integer.toUnsignedLong(KiTableLayout.MAGIC));
        expected.put("GDS_KI_VERSION", (long) KiTableLayout.VERSION);
        expected.put("GDS_KI_SEND_SIGNALED", (long) KiTableLayout.SEND_SIGNALED);
        expected.put("GDS_KI_SEND_FENCE_SYSTEM", (long) KiTableLayout.SEND_FENCE_SYSTEM);
        expected.put("GDS_KI_TEMPLATE_MLX5", (long) KiTableLayout.TEMPLATE_MLX5);
        expected.put("GDS_KI_FIELD_ABSENT", (long) KiTableLayout.FIELD_ABSENT);
        expected.put("GDS_KI_OK", (long) KiTableLayout.STATUS_OK);
        expected.put("GDS_KI_TIMEOUT", (long) KiTableLayout.STATUS_TIMEOUT);
        expected.put("GDS_KI_INVALID", (long) KiTableLayout.STATUS_INVALID);
        expected.put("GDS_KI_STATUS_CLAIMED", (long) KiTableLayout.STATUS_CLAIMED);
        expected.put("GDS_KI_ABORTED", (long) KiTableLayout.STATUS_ABORTED);
        expected.put("GDS_KI_ABORT_POLLS", (long) KiTableLayout.ABORT_POLLS);
        expected.put("GDS_KI_KIND_NONE", (long) KiTableLayout.KIND_NONE);
        expected.put("GDS_KI_KIND_SEND", (long) KiTableLayout.KIND_SEND);
        expected.put("GDS_KI_KIND_WAIT", (long) KiTableLayout.KIND_WAIT);
        expected.put("GDS_KI_KIND_TEMPLATE", (long) KiTableLayout.KIND_TEMPLATE);
        expected.put("GDS_KI_KIND_BARRIER", (long) KiTableLayout.KIND_BARRIER);
        expected.put("GDS_KI_COND_GEQ", (long) WaitCondition.GEQ.code());
        expected.put("GDS_KI_COND_EQ", (long) WaitCondition.EQ.code());
        expected.put("GDS_KI_COND_AND", (long) WaitCondition.AND.code());
        expected.put("GDS_KI_COND_NOR", (long) WaitCondition.NOR.code());
        expected.put("GDS_KI_ARRIVED_OK", (long) KiKernelLayout.ARRIVED_OK);
        expected.put("GDS_KI_ARRIVED_FAILED", (long) KiKernelLayout.ARRIVED_FAILED);
        expected.put("GDS_SHMEM_MAGIC", (long) ShmemKiLayout.MAGIC);
        expected.put("GDS_SHMEM_VERSION", (long) ShmemKiLayout.VERSION);
        expected.put("GDS_SHMEM_CMP_EQ", (long) ShmemKiLayout.CMP_EQ);
        expected.put("GDS_SHMEM_CMP_LE", (long) ShmemKiLayout.CMP_LE);
        expected.put("GDS_SHMEM_SIGNAL_SET", (long) ShmemKiLayout.SIGNAL_SET);
        expected.put("GDS_SHMEM_SIGNAL_ADD", (long) ShmemKiLayout.SIGNAL_ADD);
        expected.put("GDS_MSCCL_MAGIC", (long) MscclTableLayout.MAGIC);
        expected.put("GDS_MSCCL_VERSION", (long) MscclTableLayout.VERSION);
        expected.put("GDS_MSCCL_NONE", MscclTableLayout.NONE);
        expected.put("GDS_MSCCL_TB_SENDS", (long) MscclTableLayout.TB_SENDS);
        expected.put("GDS_MSCCL_TB_RECEIVES", (long) MscclTableLayout.TB_RECEIVES);
        expected.put("GDS_MSCCL_INT32", (long) MscclTableLayout.DTYPE_INT32);
        expected.put("GDS_MSCCL_INT64", (long) MscclTableLayout.DTYPE_INT64);
        expected.put("GDS_MSCCL_FLOAT32", (long) MscclTableLayout.DTYPE_FLOAT32);
        expected.put("GDS_MSCCL_FLOAT64", (long) MscclTableLayout.DTYPE_FLOAT64);
        expected.put("GDS_MSCCL_OP_SUM", (long) Reduction.SUM);
        expected.put("GDS_MSCCL_OP_PROD", (long) Reduction.PROD);
        expected.put("GDS_MSCCL_OP_MAX", (long) Reduction.MAX);
        expected.put("GDS_MSCCL_OP_MIN", (long) Reduction.MIN);
        expected.put("GDS_MSCCL_BUF_INPUT", (long) MscclTableLayout.BUF_INPUT);
        expected.put("GDS_MSCCL_BUF_OUTPUT", (long) MscclTableLayout.BUF_OUTPUT);
        expected.put("GDS_MSCCL_BUF_SCRATCH", (long) MscclTableLayout.BUF_SCRATCH);
        expected.put("GDS_MSCCL_BUF_NONE", (long) MscclTableLayout.BUF_NONE);
        expected.put("GDS_MSCCL_SEND", (long) MscclTableLayout.STEP_SEND);
        expected.put("GDS_MSCCL_RECV", (long) MscclTableLayout.STEP_RECV);
        expected.put("GDS_MSCCL_RECV_COPY_SEND", (long) MscclTableLayout.STEP_RECV_COPY_SEND);
        expected.put("GDS_MSCCL_RECV_REDUCE_SEND", (long) MscclTableLayout.STEP_RECV_REDUCE_SEND);
        expected.put("GDS_MSCCL_RECV_REDUCE_COPY", (long) MscclTableLayout.STEP_RECV_REDUCE_COPY);
        expected.put("GDS_MSCCL_RECV_REDUCE_COPY_SEND", (long) MscclTableLayout.STEP_RECV_REDUCE_COPY_SEND);
        expected.put("GDS_MSCCL_COPY", (long) MscclTableLayout.STEP_COPY);
        expected.put("GDS_MSCCL_REDUCE", (long) MscclTableLayout.STEP_REDUCE);
        expected.put("GDS_MSCCL_NOP", (long) MscclTableLayout.STEP_NOP);
        Map<String, Long> actual = new TreeMap<>();
        for (String line : probe("layout")) {
            String[] w = line.split(" ");
            if (w[0].equals("const")) {
                actual.put(w[1], Long.parseLong(w[2]));
            }
        }
        assertEquals(expected, actual);
    }

    @Test
    void aTableWrittenByJavaReadsTheSameInC() throws Exception {
        assumeProbe();
        int sends = 3;
        int waits = 2;
        int templates = 2;
        long header = KiTableLayout.HEADER.byteSize();
        long waitOffset = header + sends * KiTableLayout.SEND.byteSize();
        long templateOffset = waitOffset + waits * KiTableLayout.WAIT.byteSize();
        long total = KiTableLayout.bytes(sends, waits, templates);
        Map<String, Long> structural = Map.ofEntries(
                Map.entry("magic", (long) KiTableLayout.MAGIC),
                Map.entry("version", (long) KiTableLayout.VERSION),
                Map.entry("header_bytes", header),
                Map.entry("send_count", (long) sends),
                Map.entry("wait_count", (long) waits),
                Map.entry("send_offset", header),
                Map.entry("wait_offset", waitOffset),
                Map.entry("send_entry_bytes", KiTableLayout.SEND.byteSize()),
                Map.entry("wait_entry_bytes", KiTableLayout.WAIT.byteSize()),
                Map.entry("total_bytes", total),
                Map.entry("template_count", (long) templates),
                Map.entry("template_offset", templateOffset),
                Map.entry("template_entry_bytes", KiTableLayout.TEMPLATE.byteSize()));
        Map<String, String> expected = new TreeMap<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment table = arena.allocate(total, 8);
            // the header: the structure as KiTable.read wants it, distinctive values in the status fields
            int k = 0;
            for (MemoryLayout m : KiTableLayout.HEADER.memberLayouts()) {
                String name = m.name().orElseThrow();
                long value = structural.getOrDefault(name, distinctive(m.byteSize(), 0, 0, k++));
                expected.put("header " + name, put(table, KiTableLayout.HEADER, name, 0, value));
            }
            entries(table, "send", KiTableLayout.SEND, header, sends, 1, expected);
            entries(table, "wait", KiTableLayout.WAIT, waitOffset, waits, 2, expected);
            entries(table, "template", KiTableLayout.TEMPLATE, templateOffset, templates, 3, expected);

            KiTable read = KiTable.read(table);
            assertEquals(sends, read.sendCount());
            assertEquals(waits, read.waitCount());
            assertEquals(templates, read.templateCount());
            assertEquals(expected.get("send 2 db_value"), Long.toUnsignedString(read.send(2).doorbellValue()));
            assertEquals(expected.get("template 1 off_rkey"), Integer.toString(read.template(1).offRkey()));

            Map<String, String> dumped = dumpWithC(table, "dump", "table.bin");
            assertEquals(List.of(), differences(expected, dumped), "fields of the table, Java and C");
            assertEquals(expected.size(), dumped.size());
        }
    }

    @Test
    void anMscclTableWrittenByJavaReadsTheSameInC() throws Exception {
        assumeProbe();
        int blocks = 2;
        int steps = 3;
        Map<String, String> expected = new TreeMap<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment table = arena.allocate(MscclTableLayout.bytes(blocks, steps), 8);
            int k = 0;
            for (MemoryLayout m : MscclTableLayout.HEADER.memberLayouts()) {
                String name = m.name().orElseThrow();
                // the block count is the table's structure: the C side reads that many records
                long value = name.equals("ntb") ? blocks : distinctive(m.byteSize(), 0, 0, k);
                k++;
                expected.put("header " + name, put(table, MscclTableLayout.HEADER, name, 0, value));
            }
            entries(table, "tb", MscclTableLayout.TB, MscclTableLayout.HEADER_BYTES, blocks, 1, expected);
            entries(table, "step", MscclTableLayout.STEP, MscclTableLayout.HEADER_BYTES
                    + (long) MscclTableLayout.TB_BYTES * blocks, steps, 2, expected);
            assertEquals(List.of(), differences(expected, dumpWithC(table, "msccl-dump", "msccl.bin")),
                    "fields of the MSCCL table, Java and C");
        }
    }

    /** Writes the table to a file, has the probe read it with the C structs, and gives back its "what value" lines. */
    private static Map<String, String> dumpWithC(MemorySegment table, String mode, String fileName) throws Exception {
        Path file = dir.resolve(fileName);
        Files.write(file, table.toArray(ValueLayout.JAVA_BYTE));
        Map<String, String> dumped = new TreeMap<>();
        for (String line : probe(mode, file.toString())) {
            int last = line.lastIndexOf(' ');
            dumped.put(line.substring(0, last), line.substring(last + 1));
        }
        return dumped;
    }

    private static List<String> differences(Map<String, String> expected, Map<String, String> dumped) {
        List<String> differences = new ArrayList<>();
        for (String key : expected.keySet()) {
            if (!expected.get(key).equals(dumped.get(key))) {
                differences.add(key + ": Java wrote " + expected.get(key) + ", C read " + dumped.get(key));
            }
        }
        for (String key : dumped.keySet()) {
            if (!expected.containsKey(key)) {
                differences.add(key + ": C read " + dumped.get(key) + ", a field Java does not have");
            }
        }
        return differences;
    }

    /**
     * Writes entries of one kind, a distinctive value in every field (each element of an array field, named
     * {@code name0}, {@code name1}, ...); wait conditions stay valid codes.
     */
    private static void entries(MemorySegment table, String kind, StructLayout layout, long offset, int count, int kindId,
                                Map<String, String> expected) {
        for (int i = 0; i < count; i++) {
            long base = offset + i * layout.byteSize();
            int k = 0;
            for (MemoryLayout m : layout.memberLayouts()) {
                if (m instanceof PaddingLayout) {
                    continue;
                }
                String name = m.name().orElseThrow();
                if (m instanceof SequenceLayout seq) {
                    for (int e = 0; e < seq.elementCount(); e++) {
                        long value = distinctive(seq.elementLayout().byteSize(), kindId, i, k++);
                        VarHandle vh = layout.varHandle(PathElement.groupElement(name), PathElement.sequenceElement(e));
                        vh.set(table, base, value);
                        expected.put(kind + " " + i + " " + name + e, Long.toUnsignedString(value));
                    }
                    continue;
                }
                long value = kind.equals("wait") && name.equals("cond") ? (i + 1) % 4 : distinctive(m.byteSize(), kindId, i, k);
                k++;
                expected.put(kind + " " + i + " " + name, put(table, layout, name, base, value));
            }
        }
    }

    /** A value with the top bit set (signedness shows) that names its kind, entry and field. */
    private static long distinctive(long bytes, int kind, int entry, int field) {
        return switch ((int) bytes) {
            case 1 -> 0x80 | entry << 4 | field & 0xF;
            case 2 -> 0x8000 | kind << 12 | entry << 8 | field << 4 | 0x5;
            case 4 -> 0x8000_0000L | (long) kind << 24 | entry << 16 | field << 8 | 0x5A;
            case 8 -> 0x8000_0000_0000_0000L | (long) kind << 56 | (long) entry << 48 | (long) field << 40 | 0x1234_5678_9AL;
            default -> throw new AssertionError("no " + bytes + "-byte fields");
        };
    }

    /** Stores a field with its own var handle and gives back the value as C prints it (unsigned decimal). */
    private static String put(MemorySegment segment, StructLayout layout, String field, long base, long value) {
        VarHandle vh = layout.varHandle(PathElement.groupElement(field));
        Class<?> type = vh.varType();
        if (type == long.class) {
            vh.set(segment, base, value);
            return Long.toUnsignedString(value);
        } else if (type == int.class) {
            vh.set(segment, base, (int) value);
            return Long.toString(value & 0xFFFF_FFFFL);
        } else if (type == short.class) {
            vh.set(segment, base, (short) value);
            return Long.toString(value & 0xFFFFL);
        } else if (type == byte.class) {
            vh.set(segment, base, (byte) value);
            return Long.toString(value & 0xFFL);
        }
        throw new AssertionError(field + " has type " + type);
    }
}
