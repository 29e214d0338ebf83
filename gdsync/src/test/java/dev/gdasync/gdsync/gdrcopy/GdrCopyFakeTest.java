package dev.gdasync.gdsync.gdrcopy;

import dev.gdasync.gdsync.cuda.FakeCuda;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The GDRCopy binding and the GPU words in child JVMs: without the library, against the stand-in library
 * (built with gcc at test time and found by name through LD_LIBRARY_PATH), and with the stand-in CUDA driver
 * for the GPU words' context and their copying fallback.
 */
class GdrCopyFakeTest {
    private static final String FALLBACK_LINE = "gdasync: GPU words are not mapped with GDRCopy: ";

    @TempDir
    static Path dir;
    private static Path gdr;
    private static Path gdrV1;
    private static Path gdrDevelName;
    private static Path impostor;
    private static Path cuda;
    private static Path copyPreload;
    private static String skip;
    private static int logs;

    @BeforeAll
    static void build() throws IOException {
        Optional<String> reason = FakeGdr.unavailableReason().or(FakeCuda::unavailableReason);
        if (reason.isPresent()) {
            skip = reason.get();
            return;
        }
        gdr = FakeGdr.build(dir.resolve("gdr"), GdrLibrary.SONAME, false);
        gdrV1 = FakeGdr.build(dir.resolve("gdr-v1"), GdrLibrary.SONAME, true);
        gdrDevelName = FakeGdr.build(dir.resolve("gdr-devel"), GdrLibrary.DEVEL_NAME, false);
        impostor = FakeGdr.buildImpostor(dir.resolve("impostor"));
        cuda = FakeCuda.build(Files.createDirectories(dir.resolve("cuda")));
        copyPreload = FakeGdr.buildCopyPreload(dir.resolve("copy"));
    }

    private static void requireFakes() {
        if (skip != null) {
            System.out.println("SKIPPED (fake libgdrapi): " + skip);
        }
        assumeTrue(skip == null, skip);
    }

    private static boolean machineHasGdrCopy() {
        Optional<String> here = GdrLibrary.problem();
        if (here.isEmpty()) {
            System.out.println("SKIPPED: this machine has a libgdrapi on its library path");
        }
        return here.isEmpty();
    }

    private static Path newLog() {
        return dir.resolve("gdr-" + (++logs) + ".log");
    }

    private static FakeCuda.Child child(List<Path> libraryPath, Map<String, String> env, List<String> options, String... args) {
        return FakeGdr.run(libraryPath, copyPreload, dir, env, options, GdrProbeMain.class, args);
    }

    private static FakeCuda.Child withFake(Map<String, String> env, String... args) {
        requireFakes();
        FakeCuda.Child c = child(List.of(gdr), env, List.of(), args);
        assertOk(c);
        return c;
    }

    private static void assertOk(FakeCuda.Child c) {
        assertFalse(c.stdout().contains("unexpected:"), c::toString);
        assertTrue(c.stdout().contains("end"), c::toString);
        assertEquals(0, c.exitCode(), c::toString);
        assertFalse((c.stdout() + c.stderr()).contains("UnsatisfiedLinkError"), c::toString);
    }

    private static String value(FakeCuda.Child c, String key) {
        return c.stdout().lines().filter(l -> l.startsWith(key + ": ")).map(l -> l.substring(key.length() + 2))
                .findFirst().orElseThrow(() -> new AssertionError("no '" + key + "' in\n" + c));
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }

    // ---- no library, a wrong library, no gdrdrv ----------------------------------------------------------

    @Test
    void withoutTheLibraryTheReasonSaysWhatToDoAndNothingCrashes() {
        assumeTrue(!machineHasGdrCopy(), "this machine has libgdrapi");
        FakeCuda.Child c = FakeGdr.run(List.of(), null, dir, Map.of(), List.of(), GdrProbeMain.class, "probe");
        assertOk(c);
        String expected = "libgdrapi.so.2 not found (nor libgdrapi.so): GDRCopy is not installed or not on the library "
                + "path; install GDRCopy 2.x (its libgdrapi package) or add the folder holding libgdrapi.so.2 to "
                + "LD_LIBRARY_PATH";
        assertEquals(expected, value(c, "reason"), c::toString);
        assertEquals(expected, value(c, "GdrException"), c::toString);
        assertEquals("-1", value(c, "result"), c::toString);
        assertEquals(expected, value(c, "again"), c::toString);
    }

    @Test
    void withoutTheLibraryGpuWordsFallBackToCopiesSayWhyOnceAndStillWait() {
        assumeTrue(!machineHasGdrCopy(), "this machine has libgdrapi");
        requireFakes();
        Path log = newLog();
        FakeCuda.Child c = child(List.of(cuda), Map.of("FAKE_GDR_LOG", log.toString()), List.of(), "words");
        assertOk(c);
        assertEquals("false", value(c, "uses-gdrcopy"), c::toString);
        assertTrue(value(c, "fallback-reason").startsWith("libgdrapi.so.2 not found"), c::toString);
        assertEquals(1, count(c.stderr(), FALLBACK_LINE), c::toString);
        assertTrue(c.stderr().contains(FALLBACK_LINE + "libgdrapi.so.2 not found (nor libgdrapi.so)"), c::toString);
        assertTrue(c.stderr().contains("through device-to-host copies every 50 microseconds instead"), c::toString);
        assertCopiedWords(c, log);
    }

    @Test
    void switchedOffGpuWordsAreCopiedEvenWithGdrCopyPresent() {
        requireFakes();
        Path log = newLog();
        FakeCuda.Child c = child(List.of(gdr, cuda), Map.of("FAKE_GDR_LOG", log.toString()),
                List.of("-Dgdasync.gdrcopy=off", "-Dgdasync.gpuwords.copy.interval.us=200"), "words");
        assertOk(c);
        assertEquals("false", value(c, "uses-gdrcopy"), c::toString);
        assertEquals("GDRCopy is switched off (-Dgdasync.gdrcopy=off)", value(c, "fallback-reason"), c::toString);
        assertEquals(1, count(c.stderr(), FALLBACK_LINE), c::toString);
        assertTrue(c.stderr().contains("copies every 200 microseconds"), c::toString);
        assertCopiedWords(c, log);
    }

    private static void assertCopiedWords(FakeCuda.Child c, Path log) {
        assertEquals("false false false", value(c, "mapped"), c::toString);
        assertEquals("0", value(c, "pages"), c::toString);
        assertEquals("7", value(c, "a-initial"), "the first copy happens before the word is handed out\n" + c);
        assertTrue(value(c, "a").endsWith("copied to the host)"), c::toString);
        assertEquals("42", value(c, "a-waited"), c::toString);
        assertEquals("10000000000", value(c, "b-waited"), c::toString);
        assertEquals("99", value(c, "c-after-refresh"), c::toString);
        assertEquals("IllegalStateException", value(c, "refresh-closed"), c::toString);
        assertEquals("GPU word 'misaligned' at device 0x" + Long.toHexString(deviceBase(c) + 2) + ": a 32-bit word needs "
                + "a non-null device address aligned to 4 bytes", value(c, "misaligned"), c::toString);
        assertEquals("IllegalStateException", value(c, "c-after-close"), c::toString);
        assertEquals("these GPU words are closed", value(c, "word-after-close"), c::toString);
        try {
            List<String> lines = Files.readAllLines(log);
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("cuMemcpyDtoHAsync ") && l.contains(" 4 stream=own -> 0")),
                    "copies run on the copier's own stream: " + lines);
            assertTrue(lines.stream().anyMatch(l -> l.contains(" 8 stream=own -> 0")), lines::toString);
            assertFalse(lines.stream().anyMatch(l -> l.startsWith("gdr_")), "GDRCopy must not be used: " + lines);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** The words' "device" base, recovered from the printed word {@code a} at base + 64. */
    private static long deviceBase(FakeCuda.Child c) {
        Matcher m = Pattern.compile("device 0x([0-9a-f]+)").matcher(value(c, "a"));
        assertTrue(m.find(), c::toString);
        return Long.parseUnsignedLong(m.group(1), 16) - 64;
    }

    @Test
    void aLibraryThatIsNotGdrCopyIsRefusedByName() {
        requireFakes();
        FakeCuda.Child c = child(List.of(impostor), Map.of(), List.of(), "probe");
        assertOk(c);
        assertEquals("libgdrapi.so.2 does not export gdr_open: it is not the user library of GDRCopy 2.0 or newer; "
                + "check LD_LIBRARY_PATH, or install GDRCopy 2.x", value(c, "reason"), c::toString);
        assertEquals("-1", value(c, "result"), c::toString);
    }

    @Test
    void anotherMajorVersionIsRefused() {
        FakeCuda.Child c = withFake(Map.of("FAKE_GDR_RUNTIME_VERSION", "3.0"), "probe");
        assertEquals("libgdrapi.so.2 is GDRCopy 3.0, but this binding speaks GDRCopy 2.x: install GDRCopy 2.x, or put "
                + "its libgdrapi.so.2 on LD_LIBRARY_PATH", value(c, "reason"), c::toString);
    }

    @Test
    void theDevelopmentNameIsFoundWhenTheSonameIsMissing() {
        requireFakes();
        FakeCuda.Child c = child(List.of(gdrDevelName), Map.of(), List.of(), "probe");
        assertOk(c);
        assertEquals("none", value(c, "reason"), c::toString);
        assertEquals("libgdrapi.so", value(c, "library"), c::toString);
    }

    @Test
    void withoutGdrdrvGdrOpenReturnsNullAndTheReasonSaysToLoadTheModule() {
        FakeCuda.Child c = withFake(Map.of("FAKE_GDR_OPEN_FAIL", "1"), "probe");
        String expected = GdrCopy.openFailure(Files.exists(GdrCopy.DEVICE_FILE),
                Files.isReadable(GdrCopy.DEVICE_FILE) && Files.isWritable(GdrCopy.DEVICE_FILE));
        assertEquals(expected, value(c, "reason"), c::toString);
        assertEquals(expected, value(c, "GdrException"), c::toString);
        assertEquals("-1", value(c, "result"), c::toString);
        if (!Files.exists(GdrCopy.DEVICE_FILE)) {
            assertTrue(expected.startsWith("gdr_open returned NULL: the gdrdrv kernel module is not loaded (/dev/gdrdrv "
                    + "does not exist)"), expected);
        }
    }

    @Test
    void gpuWordsWithoutGdrdrvFallBackToCopies() {
        requireFakes();
        FakeCuda.Child c = child(List.of(gdr, cuda), Map.of("FAKE_GDR_OPEN_FAIL", "1"), List.of(), "words");
        assertOk(c);
        assertEquals("false", value(c, "uses-gdrcopy"), c::toString);
        assertTrue(value(c, "fallback-reason").startsWith("gdr_open returned NULL: "), c::toString);
        assertEquals(1, count(c.stderr(), FALLBACK_LINE + "gdr_open returned NULL: "), c::toString);
        assertEquals("42", value(c, "a-waited"), c::toString);
    }

    // ---- every call, end to end ----------------------------------------------------------------------------

    @Test
    void probeReadsBothVersions() {
        FakeCuda.Child c = withFake(Map.of("FAKE_GDR_RUNTIME_VERSION", "2.5", "FAKE_GDR_DRIVER_VERSION", "2.7"), "probe");
        assertEquals("none", value(c, "reason"), c::toString);
        assertEquals("libgdrapi.so.2", value(c, "library"), c::toString);
        assertEquals("2.5", value(c, "runtime"), c::toString);
        assertEquals("2.7", value(c, "driver"), c::toString);
        assertEquals("GDRCopy 2.5 (libgdrapi.so.2)", value(c, "handle"), c::toString);
    }

    @Test
    void everyCallEndToEndWithTheBytesChecked() throws IOException {
        Path log = newLog();
        FakeCuda.Child c = withFake(Map.of("FAKE_GDR_LOG", log.toString()), "calls");
        assertEquals("2.4", value(c, "runtime"), c::toString);
        assertEquals("va=pinned mapped_size=131072 page_size=65536 tm_cycles=123456789 cycles_per_ms=2400000 "
                + "mapped=false wc=false type=NONE", value(c, "info-before"), c::toString);
        assertEquals("131072 bytes, segment 131072, offset 0", value(c, "mapping"), c::toString);
        assertEquals("true", value(c, "mapping-is-a-second-view"), c::toString);
        String mapped = "va=pinned mapped_size=131072 page_size=65536 tm_cycles=123456789 cycles_per_ms=2400000 "
                + "mapped=true wc=true type=WC";
        assertEquals(mapped, value(c, "info-mapped"), c::toString);
        assertEquals(mapped, value(c, "info-at-map"), c::toString);
        assertEquals("true", value(c, "device-address-of-128"), c::toString);
        assertEquals("equal", value(c, "copy-to"), c::toString);
        assertEquals("equal", value(c, "copy-from"), c::toString);
        assertEquals("12345678", value(c, "word-written-through-mapping"), c::toString);
        assertEquals("1122334455667788", value(c, "word-read-through-mapping"), c::toString);
        assertEquals("5", value(c, "waited-on-mapping"), c::toString);
        assertEquals("1 mapped 1", value(c, "pinned"), c::toString);
        assertEquals("1 pinned, 0 mapped, isMapped false, pin.mapping false", value(c, "after-unmap"), c::toString);
        assertEquals("IllegalStateException", value(c, "word-after-unmap"), c::toString);
        assertTrue(value(c, "copy-after-unmap").startsWith("IllegalStateException: GDRCopy mapping of device 0x"),
                c::toString);
        assertTrue(value(c, "copy-after-unmap").endsWith("is unmapped"), c::toString);
        assertEquals("0 pinned, isPinned false, pins 0", value(c, "after-unpin"), c::toString);
        assertEquals("true", value(c, "closed"), c::toString);

        List<String> calls = Files.readAllLines(log).stream().filter(l -> l.startsWith("gdr_")).toList();
        List<String> expected = List.of("gdr_open", "gdr_pin_buffer", "gdr_get_info_v2", "gdr_get_info_v2", "gdr_map",
                "gdr_get_info_v2", "gdr_get_info_v2", "gdr_copy_to_mapping +4096 1000", "gdr_copy_from_mapping +70000 3000",
                "gdr_unmap", "gdr_unpin_buffer", "gdr_close pinned=0 mapped=0");
        assertEquals(expected.size(), calls.size(), calls::toString);
        for (int i = 0; i < expected.size(); i++) {
            assertTrue(calls.get(i).startsWith(expected.get(i)), "call " + i + " of " + calls);
        }
        assertTrue(calls.get(1).endsWith(" 130972"), "pinned with the size given: " + calls);
        assertTrue(calls.get(4).endsWith(" 131072"), "mapped whole pinned pages: " + calls);
    }

    @Test
    void mappingTypesAreReportedByBothInfoLayouts() {
        FakeCuda.Child device = withFake(Map.of("FAKE_GDR_MAPPING_TYPE", "3"), "info");
        assertTrue(value(device, "info-mapped").endsWith("mapped=true wc=false type=DEVICE"), device::toString);
        assertTrue(value(device, "mapping").contains("65536 bytes, DEVICE"), device::toString);

        requireFakes();
        Path log = newLog();
        FakeCuda.Child old = child(List.of(gdrV1), Map.of("FAKE_GDR_LOG", log.toString()), List.of(), "info");
        assertOk(old);
        assertEquals("va=pinned mapped_size=65536 page_size=65536 tm_cycles=123456789 cycles_per_ms=2400000 mapped=false "
                + "wc=false type=NONE", value(old, "info-before"), old::toString);
        assertTrue(value(old, "info-mapped").endsWith("mapped=true wc=true type=WC"), old::toString);
        FakeCuda.Child caching = child(List.of(gdrV1), Map.of("FAKE_GDR_MAPPING_TYPE", "2"), List.of(), "info");
        assertOk(caching);
        assertTrue(value(caching, "info-mapped").endsWith("mapped=true wc=false type=CACHING"), caching::toString);
        try {
            List<String> lines = Files.readAllLines(log);
            assertTrue(lines.contains("gdr_get_info"), lines::toString);
            assertFalse(lines.contains("gdr_get_info_v2"), lines::toString);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    // ---- bad input and refusals --------------------------------------------------------------------------

    @Test
    void badAlignmentAndSizesArePreciseAndPinNothing() throws IOException {
        Path log = newLog();
        FakeCuda.Child c = withFake(Map.of("FAKE_GDR_LOG", log.toString()), "bad");
        String unaligned = value(c, "unaligned");
        assertTrue(unaligned.startsWith("IllegalArgumentException: cannot pin 0x"), c::toString);
        assertTrue(unaligned.contains("1000 (65536 bytes): gdr_map needs a pinned address aligned to the GPU page of "
                + "65536 bytes, and this one is 4096 bytes past the page at 0x"), c::toString);
        assertTrue(unaligned.endsWith("0000; pin from that page, or allocate with GPU-page alignment"), c::toString);
        assertEquals("IllegalArgumentException: cannot pin 0x0 (65536 bytes): the device address is 0 (NULL)",
                value(c, "null"), c::toString);
        assertTrue(value(c, "zero-size").endsWith(" (0 bytes): the size must be positive"), c::toString);
        assertTrue(value(c, "negative-size").endsWith(" (-5 bytes): the size must be positive"), c::toString);
        assertEquals("IllegalArgumentException: cannot pin 0xffffffffffff0000 (131072 bytes): the range, rounded up to "
                + "whole GPU pages, wraps around the address space", value(c, "wraps"), c::toString);
        assertEquals("0", value(c, "pinned-after-bad"), c::toString);

        String host = value(c, "host-memory");
        assertTrue(host.startsWith("GdrException: gdr_pin_buffer(0x"), c::toString);
        assertTrue(host.endsWith(", 65536 bytes) failed with EINVAL (22): the range is not device memory from "
                + "cuMemAlloc/cudaMalloc (managed, host and registered memory cannot be pinned), or it runs past the end "
                + "of its allocation; set GDRCOPY_ENABLE_LOGGING=1 for libgdrapi's own messages [result 22]"), c::toString);

        assertTrue(value(c, "copy-past-end").endsWith(" at offset 65526: 100 bytes do not fit in its 65536 bytes"),
                c::toString);
        assertTrue(value(c, "copy-negative-offset").endsWith(" at offset -1: 4 bytes do not fit in its 65536 bytes"),
                c::toString);
        assertTrue(value(c, "copy-heap").endsWith("with a heap segment: GDRCopy copies between native memory and the "
                + "mapping; use a segment from an Arena"), c::toString);
        assertTrue(value(c, "map-twice").contains(" (65536 bytes) is mapped already (GDRCopy mapping of device 0x"),
                c::toString);
        assertTrue(value(c, "map-twice").endsWith("): use that mapping, or unmap it first"), c::toString);
        assertTrue(value(c, "copy-through-another-handle").endsWith(" was made through another GDRCopy handle"),
                c::toString);
        assertEquals("1", value(c, "pinned-at-end"), c::toString);

        List<String> lines = Files.readAllLines(log);
        List<String> badPart = lines.subList(lines.indexOf("--- bad pins"), lines.indexOf("--- host memory"));
        assertFalse(badPart.stream().anyMatch(l -> l.startsWith("gdr_pin_buffer")), "nothing reaches the library: " + lines);
        assertFalse(lines.stream().anyMatch(l -> l.startsWith("gdr_copy")), "refused copies reach nothing: " + lines);
    }

    @Test
    void aRefusedPinCarriesTheLibrarysResult() {
        FakeCuda.Child c = withFake(Map.of("FAKE_GDR_PIN_RESULT", "12"), "fail");
        String pin = value(c, "pin");
        assertTrue(pin.startsWith("GdrException: gdr_pin_buffer(0x"), c::toString);
        assertTrue(pin.endsWith(", 65536 bytes) failed with ENOMEM (12): the GPU's BAR1 space (or kernel memory) is "
                + "exhausted: unpin buffers no longer needed; nvidia-smi -q shows the BAR1 usage; set "
                + "GDRCOPY_ENABLE_LOGGING=1 for libgdrapi's own messages [result 12]"), c::toString);
        assertEquals("0", value(c, "pins"), c::toString);
    }

    @Test
    void aRefusedMapLeavesThePinToUnpin() {
        FakeCuda.Child c = withFake(Map.of("FAKE_GDR_MAP_RESULT", "22"), "fail");
        String map = value(c, "map");
        assertTrue(map.startsWith("GdrException: gdr_map(pinned device memory 0x"), c::toString);
        assertTrue(map.endsWith(" (65536 bytes), 65536 bytes) failed with EINVAL (22): gdrdrv refused the mapping (an "
                + "address that is not GPU-page aligned, or a size past the pinned pages); set GDRCOPY_ENABLE_LOGGING=1 "
                + "for libgdrapi's own messages [result 22]"), c::toString);
        assertEquals("true, mapping false", value(c, "still-pinned"), c::toString);
        assertEquals("0", value(c, "pinned-at-end"), c::toString);
    }

    // ---- closing -------------------------------------------------------------------------------------------

    @Test
    void closingInAnyOrderOrTwiceUnmapsBeforeUnpinningAndUnpinsBeforeClosing() throws IOException {
        Path log = newLog();
        FakeCuda.Child c = withFake(Map.of("FAKE_GDR_LOG", log.toString()), "order");
        assertEquals("open false, pinned false, mapped false", value(c, "a-state"), c::toString);
        assertTrue(value(c, "a-segment").startsWith("IllegalStateException"), c::toString);
        assertEquals("IllegalStateException: the GDRCopy handle (libgdrapi.so.2) is closed", value(c, "a-pin"), c::toString);
        assertEquals("IllegalStateException: the GDRCopy handle (libgdrapi.so.2) is closed", value(c, "a-map"), c::toString);
        assertEquals("IllegalStateException: the GDRCopy handle (libgdrapi.so.2) is closed", value(c, "a-info"), c::toString);
        assertEquals("IllegalStateException: the GDRCopy handle (libgdrapi.so.2) is closed", value(c, "a-driver"),
                c::toString);
        assertEquals("0 pinned, 0 mapped, isMapped false", value(c, "b-after-pin-close"), c::toString);
        assertEquals("true, first false", value(c, "c-second-mapping"), c::toString);
        assertEquals("open false", value(c, "c-state"), c::toString);

        List<String> lines = Files.readAllLines(log).stream().map(l -> l.replaceAll(" 0x[0-9a-f]+", "")).toList();
        assertEquals(List.of(
                "--- a: handle first", "gdr_open", "gdr_pin_buffer 65536", "gdr_get_info_v2", "gdr_map 65536",
                "gdr_get_info_v2", "gdr_unmap", "gdr_unpin_buffer", "gdr_close pinned=0 mapped=0",
                "--- a: then the rest",
                "--- b: pin before its mapping", "gdr_open", "gdr_pin_buffer 65536", "gdr_get_info_v2", "gdr_map 65536",
                "gdr_get_info_v2", "gdr_unmap", "gdr_unpin_buffer",
                "--- b: then the rest", "gdr_close pinned=0 mapped=0",
                "--- c: in order, twice each, and a second mapping", "gdr_open", "gdr_pin_buffer 65536",
                "gdr_get_info_v2", "gdr_map 65536", "gdr_get_info_v2", "gdr_unmap", "gdr_get_info_v2", "gdr_map 65536",
                "gdr_get_info_v2", "gdr_unmap", "gdr_unpin_buffer", "gdr_close pinned=0 mapped=0"),
                lines.stream().filter(l -> !l.startsWith("fake_gdr_device_alloc")).toList());
    }

    @Test
    void closingWhileACopyIsInFlightIsRefusedAndWorksAfterwards() throws IOException {
        Path log = newLog();
        Path gate = dir.resolve("gate-" + logs);
        FakeCuda.Child c = withFake(Map.of("FAKE_GDR_LOG", log.toString(), "FAKE_GDR_COPY_GATE", gate.toString()), "busy");
        String refused = "cannot be unmapped while a copy on another thread uses it: unmap it after the copy returns";
        assertTrue(value(c, "unmap-while-copying").startsWith("IllegalStateException: GDRCopy mapping of device 0x"),
                c::toString);
        assertTrue(value(c, "unmap-while-copying").endsWith(refused), c::toString);
        assertTrue(value(c, "unpin-while-copying").endsWith(refused), c::toString);
        assertTrue(value(c, "close-while-copying").endsWith(refused), c::toString);
        assertEquals("open true, pinned true, mapped true, library pinned 1 mapped 1", value(c, "while-copying"),
                c::toString);
        assertEquals("open false, pinned false, mapped false", value(c, "after-copy"), c::toString);
        List<String> calls = Files.readAllLines(log).stream().filter(l -> !l.startsWith("fake_gdr_device_alloc"))
                .map(l -> l.replaceAll(" 0x[0-9a-f]+", "")).toList();
        assertEquals(List.of("gdr_open", "gdr_pin_buffer 65536", "gdr_get_info_v2", "gdr_map 65536", "gdr_get_info_v2",
                "gdr_copy_to_mapping +0 256", "copy waiting", "gdr_unmap", "gdr_unpin_buffer",
                "gdr_close pinned=0 mapped=0"), calls);
    }

    // ---- GPU words through GDRCopy -------------------------------------------------------------------------

    @Test
    void gpuWordsAreMappedOncePerPageAndHostMemopsWaitOnThem() throws IOException {
        requireFakes();
        Path log = newLog();
        Map<String, String> env = new HashMap<>(Map.of("FAKE_GDR_LOG", log.toString()));
        FakeCuda.Child c = child(List.of(gdr, cuda), env, List.of(), "words");
        assertOk(c);
        assertEquals("true", value(c, "uses-gdrcopy"), c::toString);
        assertEquals("none", value(c, "fallback-reason"), c::toString);
        assertFalse(c.stderr().contains(FALLBACK_LINE), c::toString);
        assertEquals("true true true", value(c, "mapped"), c::toString);
        assertEquals("2", value(c, "pages"), "two words share the first GPU page\n" + c);
        assertEquals("7", value(c, "a-initial"), c::toString);
        assertTrue(value(c, "a").endsWith("mapped with GDRCopy)"), c::toString);
        assertEquals("42", value(c, "a-waited"), c::toString);
        assertEquals("10000000000", value(c, "b-waited"), c::toString);
        assertEquals("99", value(c, "c-after-refresh"), c::toString);
        assertEquals("2", value(c, "pages-after-a"), "b still uses the first page\n" + c);
        assertEquals("1", value(c, "pages-after-b"), c::toString);
        assertTrue(value(c, "misaligned").endsWith(": a 32-bit word needs a non-null device address aligned to 4 bytes"),
                c::toString);
        assertEquals("IllegalStateException", value(c, "c-after-close"), c::toString);
        assertEquals("these GPU words are closed", value(c, "word-after-close"), c::toString);

        List<String> lines = Files.readAllLines(log);
        assertEquals(2, lines.stream().filter(l -> l.startsWith("gdr_pin_buffer")).count(), lines::toString);
        assertTrue(lines.stream().filter(l -> l.startsWith("gdr_pin_buffer")).allMatch(l -> l.endsWith(" 65536")),
                lines::toString);
        assertEquals(2, lines.stream().filter(l -> l.startsWith("gdr_unmap")).count(), lines::toString);
        assertEquals(2, lines.stream().filter(l -> l.startsWith("gdr_unpin_buffer")).count(), lines::toString);
        assertFalse(lines.stream().anyMatch(l -> l.startsWith("cuMemcpyDtoHAsync")), "nothing is copied: " + lines);
        assertEquals(2, lines.stream().filter(l -> l.equals("gdr_close pinned=0 mapped=0")).count(),
                "both handles (the second open's too) closed with nothing left: " + lines);
    }

    @Test
    void aFailingFirstCopyIsACudaExceptionNamingTheCall() {
        requireFakes();
        FakeCuda.Child c = child(List.of(cuda), Map.of("FAKE_CUDA_COPY_RESULT", "700"), List.of("-Dgdasync.gdrcopy=off"),
                "words-fail");
        assertOk(c);
        String e = value(c, "CudaException");
        assertTrue(e.startsWith("cuMemcpyDtoHAsync(0x"), c::toString);
        assertTrue(e.contains(" bytes) failed with CUDA_ERROR_ILLEGAL_ADDRESS (700)"), c::toString);
    }

    @Test
    void aWordWhoseCopiesStartFailingStopsAndSaysWhy() {
        requireFakes();
        FakeCuda.Child c = child(List.of(cuda), Map.of("FAKE_CUDA_COPY_FAIL_AFTER", "2"), List.of("-Dgdasync.gdrcopy=off"),
                "words-stop");
        assertOk(c);
        String failure = value(c, "failure");
        assertTrue(failure.contains("failed with CUDA_ERROR_ILLEGAL_ADDRESS (700)"), c::toString);
        assertTrue(c.stderr().contains("gdasync: GPU word flag (device 0x"), c::toString);
        assertTrue(c.stderr().contains("copied to the host) is no longer refreshed: " + failure), c::toString);
    }
}
