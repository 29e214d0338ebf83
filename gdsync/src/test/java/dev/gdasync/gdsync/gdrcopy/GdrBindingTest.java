package dev.gdasync.gdsync.gdrcopy;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the binding decides without calling the library: layouts, argument checks, messages, settings.
 */
class GdrBindingTest {
    @Test
    void layoutsMatchGdrapiOn64BitLinux() {
        assertEquals(8, GdrLibrary.MEMORY_HANDLE.byteSize());
        assertEquals(40, GdrLibrary.INFO_V1.byteSize());
        assertEquals(48, GdrLibrary.INFO_V2.byteSize());
        for (var layout : new java.lang.foreign.StructLayout[] {GdrLibrary.INFO_V1, GdrLibrary.INFO_V2}) {
            assertEquals(GdrLibrary.INFO_VA, layout.byteOffset(PathElement.groupElement("va")));
            assertEquals(GdrLibrary.INFO_MAPPED_SIZE, layout.byteOffset(PathElement.groupElement("mapped_size")));
            assertEquals(GdrLibrary.INFO_PAGE_SIZE, layout.byteOffset(PathElement.groupElement("page_size")));
            assertEquals(GdrLibrary.INFO_TM_CYCLES, layout.byteOffset(PathElement.groupElement("tm_cycles")));
            assertEquals(GdrLibrary.INFO_CYCLES_PER_MS, layout.byteOffset(PathElement.groupElement("cycles_per_ms")));
            assertEquals(GdrLibrary.INFO_FLAGS, layout.byteOffset(PathElement.groupElement("flags")));
        }
        assertEquals(GdrLibrary.INFO_MAPPING_TYPE, GdrLibrary.INFO_V2.byteOffset(PathElement.groupElement("mapping_type")));
    }

    @Test
    void gpuPageConstantsAreGdrapis() {
        assertEquals(16, GdrCopy.GPU_PAGE_SHIFT);
        assertEquals(65536, GdrCopy.GPU_PAGE_SIZE);
        assertEquals(0xFFFF, GdrCopy.GPU_PAGE_OFFSET);
        assertEquals(0xFFFF_FFFF_FFFF_0000L, GdrCopy.GPU_PAGE_MASK);
    }

    @Test
    void infoIsReadFromBothLayouts() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment v2 = arena.allocate(GdrLibrary.INFO_V2);
            v2.set(JAVA_LONG, 0, 0x7f0000010000L);
            v2.set(JAVA_LONG, 8, 131072);
            v2.set(JAVA_INT, 16, 65536);
            v2.set(JAVA_LONG, 24, 99);
            v2.set(JAVA_INT, 32, 2400);
            v2.set(JAVA_INT, 36, 0b01); // mapped, not write-combined
            v2.set(JAVA_INT, 40, 3);
            assertEquals(new GdrInfo(0x7f0000010000L, 131072, 65536, 99, 2400, true, false, GdrMappingType.DEVICE),
                    GdrInfo.read(v2, true));

            MemorySegment v1 = arena.allocate(GdrLibrary.INFO_V1);
            v1.set(JAVA_INT, 36, 0b11);
            assertEquals(GdrMappingType.WC, GdrInfo.read(v1, false).mappingType());
            v1.set(JAVA_INT, 36, 0b01);
            assertEquals(GdrMappingType.CACHING, GdrInfo.read(v1, false).mappingType());
            v1.set(JAVA_INT, 36, 0);
            assertEquals(GdrMappingType.NONE, GdrInfo.read(v1, false).mappingType());
        }
    }

    @Test
    void mappingTypesByCode() {
        for (GdrMappingType t : GdrMappingType.values()) {
            assertEquals(t, GdrMappingType.ofCode(t.code()));
        }
        assertEquals("unknown gdr_mapping_type_t 7 (NONE=0, WC=1, CACHING=2, DEVICE=3)",
                assertThrows(IllegalArgumentException.class, () -> GdrMappingType.ofCode(7)).getMessage());
    }

    @Test
    void pinArgumentsAreCheckedPrecisely() {
        GdrCopy.checkPin(0x7f0000000000L, 1);
        GdrCopy.checkPin(0x7f0000000000L, 1L << 40);
        assertEquals("cannot pin 0x7f0000001004 (8 bytes): gdr_map needs a pinned address aligned to the GPU page of "
                + "65536 bytes, and this one is 4100 bytes past the page at 0x7f0000000000; pin from that page, or "
                + "allocate with GPU-page alignment", pinRefusal(0x7f0000001004L, 8));
        assertEquals("cannot pin 0x0 (8 bytes): the device address is 0 (NULL)", pinRefusal(0, 8));
        assertEquals("cannot pin 0x7f0000000000 (0 bytes): the size must be positive", pinRefusal(0x7f0000000000L, 0));
        assertEquals("cannot pin 0x7f0000000000 (-1 bytes): the size must be positive", pinRefusal(0x7f0000000000L, -1));
        assertEquals("cannot pin 0xffffffffffff0000 (65537 bytes): the range, rounded up to whole GPU pages, wraps "
                + "around the address space", pinRefusal(0xFFFF_FFFF_FFFF_0000L, 65537));
        assertEquals("cannot pin 0x10000 (9223372036854775807 bytes): the range, rounded up to whole GPU pages, wraps "
                + "around the address space", pinRefusal(0x10000, Long.MAX_VALUE));
    }

    private static String pinRefusal(long address, long size) {
        return assertThrows(IllegalArgumentException.class, () -> GdrCopy.checkPin(address, size)).getMessage();
    }

    @Test
    void resultsAreNamedWithAdvicePerCall() {
        assertEquals("EINVAL (22)", GdrResults.name(22));
        assertEquals("ENOMEM (12)", GdrResults.name(12));
        assertEquals("EINVAL (-22)", GdrResults.name(-22));
        assertEquals("error (4242)", GdrResults.name(4242));
        assertEquals("gdr_map(x) failed with EAGAIN (11): the buffer is mapped already, or gdrdrv could not create the "
                + "mapping; set GDRCOPY_ENABLE_LOGGING=1 for libgdrapi's own messages", GdrResults.describe(11, "gdr_map(x)"));
        assertEquals("gdr_unmap(x) failed with EINVAL (22): set GDRCOPY_ENABLE_LOGGING=1 for libgdrapi's own messages",
                GdrResults.describe(22, "gdr_unmap(x)"));
        assertEquals("gdr_copy_to_mapping(x) failed with EINVAL (22): the buffer is not mapped (it was unmapped or "
                + "unpinned); set GDRCOPY_ENABLE_LOGGING=1 for libgdrapi's own messages",
                GdrResults.describe(22, "gdr_copy_to_mapping(x)"));
        GdrException e = GdrException.of(12, "gdr_pin_buffer(0x10000, 65536 bytes)");
        assertEquals(12, e.result());
        assertTrue(e.getMessage().startsWith("gdr_pin_buffer(0x10000, 65536 bytes) failed with ENOMEM (12): the GPU's "
                + "BAR1 space"), e.getMessage());
        GdrException.check(0, "anything");
    }

    @Test
    void gdrOpenFailuresSayWhatToCheck() {
        assertEquals("gdr_open returned NULL: the gdrdrv kernel module is not loaded (/dev/gdrdrv does not exist), and "
                + "there is no dma-buf mapping to fall back to (GDRCopy 2.6 or newer with CUDA driver 13.3 or newer): load "
                + "gdrdrv (GDRCopy's insmod.sh, or 'modprobe gdrdrv' where its DKMS package is installed)",
                GdrCopy.openFailure(false, false));
        assertTrue(GdrCopy.openFailure(true, false).contains("/dev/gdrdrv exists but this user cannot open it for reading "
                + "and writing"));
        assertTrue(GdrCopy.openFailure(true, true).contains("gdrdrv and libgdrapi may be incompatible versions"));
    }

    @Test
    void settingsOfTheGpuWords() {
        assertEquals(null, GpuWords.switchedOff(null));
        assertEquals(null, GpuWords.switchedOff("auto"));
        assertEquals("GDRCopy is switched off (-Dgdasync.gdrcopy=off)", GpuWords.switchedOff(" off "));
        assertEquals("gdasync.gdrcopy must be auto or off, got 'on'",
                assertThrows(IllegalArgumentException.class, () -> GpuWords.switchedOff("on")).getMessage());
        assertEquals(50_000, GpuWords.copyIntervalNanos(null));
        assertEquals(7_000, GpuWords.copyIntervalNanos("7"));
        for (String bad : new String[] {"0", "-3", "x", "1000001"}) {
            assertEquals("gdasync.gpuwords.copy.interval.us must be a number of microseconds from 1 to 1000000, got '"
                    + bad + "'", assertThrows(IllegalArgumentException.class, () -> GpuWords.copyIntervalNanos(bad))
                    .getMessage());
        }
    }

    @Test
    void withoutTheLibraryHereTheProbeGivesAReasonInsteadOfThrowing() {
        Optional<String> reason = GdrCopy.unavailableReason();
        if (GdrLibrary.problem().isEmpty()) {
            System.out.println("SKIPPED: this machine has a libgdrapi on its library path");
            return;
        }
        assertTrue(reason.isPresent());
        assertEquals(reason.get(), assertThrows(GdrException.class, GdrCopy::open).getMessage());
        assertEquals(GdrException.NO_RESULT, assertThrows(GdrException.class, GdrCopy::open).result());
    }
}
