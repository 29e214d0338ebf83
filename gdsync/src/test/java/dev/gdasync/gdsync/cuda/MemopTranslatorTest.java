package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.memop.BarrierScope;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every memop under every capability that changes its translation, without a GPU. */
class MemopTranslatorTest {
    private static final long OFFSET = 0x1_0000_0000L;
    private static final long FENCE = 0xFE00;

    private Arena arena;
    private MemorySegment seg;
    private MemoryWord w32;
    private MemoryWord w64;
    private final List<MemoryWord> translated = new ArrayList<>();
    private final DeviceAddressMap map = word -> {
        translated.add(word);
        return word.address() + OFFSET;
    };

    @BeforeEach
    void setUp() {
        arena = Arena.ofConfined();
        seg = arena.allocate(4096, 4096);
        w32 = MemoryWord.word32(seg, 16, "w32");
        w64 = MemoryWord.word64(seg, 24, "w64");
    }

    @AfterEach
    void tearDown() {
        arena.close();
    }

    /** Capabilities: v2 (CUDA 12.4) or v1 (11.6), batch usable, 64-bit, NOR, flush. */
    private static CudaCapabilities caps(boolean v2, boolean batch, boolean m64, boolean nor, boolean flush) {
        return new CudaCapabilities("GPU X", v2 ? 12040 : 11060, true, m64, nor, flush, batch, batch ? 0 : 1);
    }

    private static final CudaCapabilities FULL = caps(true, true, true, true, true);

    private List<String> briefs(CudaCapabilities caps, Memop... ops) {
        return new MemopTranslator(caps, map, FENCE).translate(MemopBatch.of(ops)).stream().map(DriverOp::brief).toList();
    }

    private String dev(MemoryWord w) {
        return dev(w, 0);
    }

    private String dev(MemoryWord w, long plus) {
        return "0x" + Long.toHexString(w.address() + OFFSET + plus);
    }

    @Test
    void aPlainWrite32HasDefaultFlagsOnV2AndNoMemoryBarrierOnV1() {
        assertEquals(List.of("WRITE_VALUE_32 " + dev(w32) + " = 0x5 flags 0x0"),
                briefs(FULL, new Memop.Write32(w32, 5, false)));
        assertEquals(List.of("WRITE_VALUE_32 " + dev(w32) + " = 0x5 flags 0x1"),
                briefs(caps(false, true, true, true, false), new Memop.Write32(w32, 5, false)));
    }

    @Test
    void aBarrierWrite32IsPrecededByASystemBarrierWhereTheOperationExists() {
        assertEquals(List.of("BARRIER flags 0x0", "WRITE_VALUE_32 " + dev(w32) + " = 0xffffffff flags 0x0"),
                briefs(FULL, new Memop.Write32(w32, -1, true)));
        // Without batches (v2) or on v1, the write alone, with the default flags, which fence on v1.
        assertEquals(List.of("WRITE_VALUE_32 " + dev(w32) + " = 0xffffffff flags 0x0"),
                briefs(caps(true, false, true, true, false), new Memop.Write32(w32, -1, true)));
        assertEquals(List.of("WRITE_VALUE_32 " + dev(w32) + " = 0xffffffff flags 0x0"),
                briefs(caps(false, true, true, true, false), new Memop.Write32(w32, -1, true)));
    }

    @Test
    void aWrite64IsOneOperationWith64BitMemopsElseTwoHalvesLowFirst() {
        Memop.Write64 w = new Memop.Write64(w64, 0x1122334455667788L, true, () -> { });
        assertEquals(List.of("BARRIER flags 0x0", "WRITE_VALUE_64 " + dev(w64) + " = 0x1122334455667788 flags 0x0"),
                briefs(FULL, w));
        assertEquals(List.of("BARRIER flags 0x0", "WRITE_VALUE_32 " + dev(w64) + " = 0x55667788 flags 0x0",
                "WRITE_VALUE_32 " + dev(w64, 4) + " = 0x11223344 flags 0x0"), briefs(caps(true, true, false, true, true), w));
        // v1: the low half carries the barrier (default flags), the high half does not.
        assertEquals(List.of("WRITE_VALUE_32 " + dev(w64) + " = 0x55667788 flags 0x0",
                "WRITE_VALUE_32 " + dev(w64, 4) + " = 0x11223344 flags 0x1"), briefs(caps(false, false, false, true, false), w));
        assertEquals(List.of("WRITE_VALUE_32 " + dev(w64) + " = 0x55667788 flags 0x1",
                "WRITE_VALUE_32 " + dev(w64, 4) + " = 0x11223344 flags 0x1"),
                briefs(caps(false, false, false, true, false), new Memop.Write64(w64, 0x1122334455667788L, false)));
    }

    @Test
    void waitConditionsAreCudasCodesAndFlushIsAddedOnlyWhereTheGpuCanFlush() {
        String[] codes = {"0x0", "0x1", "0x2", "0x3"};
        for (WaitCondition c : WaitCondition.values()) {
            assertEquals(List.of("WAIT_VALUE_32 " + dev(w32) + " = 0x80000000 flags " + codes[c.ordinal()]),
                    briefs(FULL, new Memop.Wait32(w32, 0x8000_0000, c)));
            assertEquals(List.of("WAIT_VALUE_32 " + dev(w32) + " = 0x7 flags 0x" + Integer.toHexString((1 << 30)
                    | c.code())), briefs(FULL, new Memop.Wait32(w32, 7, c, true)));
            assertEquals(List.of("WAIT_VALUE_64 " + dev(w64) + " = 0x100000000 flags " + codes[c.ordinal()]),
                    briefs(FULL, new Memop.Wait64(w64, 1L << 32, c)));
        }
        CudaCapabilities noFlush = caps(true, true, true, true, false);
        assertEquals(List.of("WAIT_VALUE_32 " + dev(w32) + " = 0x7 flags 0x0"),
                briefs(noFlush, new Memop.Wait32(w32, 7, WaitCondition.GEQ, true)));
        assertEquals(List.of("WAIT_VALUE_64 " + dev(w64) + " = 0x7 flags 0x1"),
                briefs(noFlush, new Memop.Wait64(w64, 7, WaitCondition.EQ, true)));
    }

    @Test
    void aNorWaitWithoutNorSupportIsRefusedBeforeAnyAddressIsTranslated() {
        CudaCapabilities noNor = caps(true, true, true, false, false);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> briefs(noNor,
                new Memop.Write32(w32, 1, true), new Memop.Wait32(w32, 1, WaitCondition.NOR)));
        assertEquals("WAIT32 NOR on " + w32 + " needs CU_STREAM_WAIT_VALUE_NOR "
                + "(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR), which GPU X lacks: wait with GEQ, EQ or AND",
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> briefs(noNor, new Memop.Wait64(w64, 1, WaitCondition.NOR)));
        assertTrue(translated.isEmpty(), "translated " + translated);
        assertEquals(1, briefs(noNor, new Memop.Wait32(w32, 1, WaitCondition.AND)).size());
    }

    @Test
    void a64BitWaitWithout64BitMemopsIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> briefs(caps(true, true, false, true, false), new Memop.Wait64(w64, 1, WaitCondition.GEQ)));
        assertEquals("WAIT64 on " + w64 + " needs 64-bit stream memops (CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS)"
                + ", which GPU X lacks: wait on a 32-bit word", e.getMessage());
        assertTrue(translated.isEmpty());
    }

    @Test
    void anAlignedWriteMemoryIsOne32BitWritePerFourBytesLittleEndian() {
        byte[] data = {1, 2, 3, 4, 5, 6, 7, 8};
        MemoryWord at = MemoryWord.word32(seg, 64, "dst");
        assertEquals(List.of("BARRIER flags 0x0", "WRITE_VALUE_32 " + dev(at) + " = 0x4030201 flags 0x0",
                "WRITE_VALUE_32 " + dev(at, 4) + " = 0x8070605 flags 0x0"),
                briefs(FULL, new Memop.WriteMemory(seg, 64, data, true)));
        assertEquals(List.of("WRITE_VALUE_32 " + dev(at) + " = 0x4030201 flags 0x0",
                "WRITE_VALUE_32 " + dev(at, 4) + " = 0x8070605 flags 0x1"),
                briefs(caps(false, true, true, true, false), new Memop.WriteMemory(seg, 64, data, true)));
        assertEquals(List.of(), briefs(FULL, new Memop.WriteMemory(seg, 64, new byte[0], true)));
    }

    @Test
    void anUnalignedWriteMemoryIsAHostCopy() {
        Memop.WriteMemory odd = new Memop.WriteMemory(seg, 65, new byte[8], false);
        Memop.WriteMemory shortTail = new Memop.WriteMemory(seg, 64, new byte[6], true);
        List<DriverOp> ops = new MemopTranslator(FULL, map, FENCE).translate(MemopBatch.of(odd, shortTail));
        assertEquals(List.of("HOST_COPY 0x" + Long.toHexString(seg.address() + 65) + " 8 bytes",
                "HOST_COPY 0x" + Long.toHexString(seg.address() + 64) + " 6 bytes"), ops.stream().map(DriverOp::brief).toList());
        assertSame(odd, ops.get(0).source());
        assertTrue(translated.isEmpty(), "a host copy needs no device address");
    }

    @Test
    void barriersHaveTheirScopeOrFallBackToADefaultWriteOfTheFenceWord() {
        assertEquals(List.of("BARRIER flags 0x0", "BARRIER flags 0x1"), briefs(FULL,
                new Memop.Barrier(BarrierScope.SYSTEM), new Memop.Barrier(BarrierScope.DEVICE)));
        String fence = "WRITE_VALUE_32 0xfe00 = 0x0 flags 0x0";
        assertEquals(List.of(fence, fence), briefs(caps(true, false, true, true, false),
                new Memop.Barrier(BarrierScope.SYSTEM), new Memop.Barrier(BarrierScope.DEVICE)));
        assertEquals(List.of(fence), briefs(caps(false, true, true, true, false), new Memop.Barrier(BarrierScope.DEVICE)));
    }

    @Test
    void aPreparedSendIsABarrierTheDoorbellRecordAndTheDoorbell() {
        // The shape of every prepared send: WRITE32(doorbell record, barrier) then WRITE64(doorbell).
        List<String> ops = briefs(FULL, new Memop.Write32(w32, 8, true), new Memop.Write64(w64, 0xABCDL, false, () -> { }));
        assertEquals(List.of("BARRIER flags 0x0", "WRITE_VALUE_32 " + dev(w32) + " = 0x8 flags 0x0",
                "WRITE_VALUE_64 " + dev(w64) + " = 0xabcd flags 0x0"), ops);
    }
}
