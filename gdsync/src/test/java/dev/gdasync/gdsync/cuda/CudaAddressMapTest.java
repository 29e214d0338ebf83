package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.memop.MemoryWord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The address map's bookkeeping, with a registrar that records instead of calling the driver. */
class CudaAddressMapTest {
    private static final long PAGE = 4096;

    private final Arena arena = Arena.ofConfined();
    private final List<String> calls = new ArrayList<>();
    private long nextDelta = 1L << 40;

    @AfterEach
    void free() {
        arena.close();
    }

    /** Registers at a device address of host + delta; each registration gets its own delta unless told. */
    private final class Recorder implements CudaAddressMap.Registrar {
        boolean sameDelta = true;

        @Override
        public HostRanges.Range register(long start, long bytes, boolean io) {
            calls.add("register " + Long.toHexString(start) + " " + bytes + (io ? " io" : ""));
            long delta = nextDelta;
            if (!sameDelta) {
                nextDelta += 1L << 32;
            }
            return new HostRanges.Range(start, start + bytes, start + delta, io, true,
                    () -> calls.add("unregister " + Long.toHexString(start)));
        }
    }

    private MemorySegment pages(int n) {
        return arena.allocate(n * PAGE, PAGE);
    }

    @Test
    void aWordRegistersItsSegmentInWholePagesOnce() {
        Recorder r = new Recorder();
        MemorySegment s = pages(3).asSlice(96, 2 * PAGE);
        CudaAddressMap map = new CudaAddressMap(r, PAGE, "test GPU");
        MemoryWord w = MemoryWord.word32(s, 4, "w");
        assertEquals(w.address() + (1L << 40), map.addressOf(w));
        assertEquals(List.of("register " + Long.toHexString(s.address() - 96) + " " + 3 * PAGE), calls);
        MemoryWord v = MemoryWord.word64(s, 2 * PAGE - 8, "v");
        assertEquals(v.address() + (1L << 40), map.addressOf(v));
        assertEquals(1, calls.size(), "no second registration for a word already covered");
        assertEquals(1, map.rangeCount());
    }

    @Test
    void segmentsSharingAPageRegisterOnlyWhatIsNotCovered() {
        Recorder r = new Recorder();
        MemorySegment all = pages(4);
        MemorySegment first = all.asSlice(0, PAGE + 16);
        MemorySegment second = all.asSlice(PAGE + 64, 2 * PAGE);
        CudaAddressMap map = new CudaAddressMap(r, PAGE, "test GPU");
        map.register(first);
        assertEquals(second.address() + (1L << 40), map.deviceAddressOf(second));
        assertEquals(List.of("register " + Long.toHexString(all.address()) + " " + 2 * PAGE,
                "register " + Long.toHexString(all.address() + 2 * PAGE) + " " + 2 * PAGE), calls);
        assertEquals(2, map.rangeCount());
    }

    @Test
    void aSegmentOverRegistrationsTheDeviceSeesApartIsRefused() {
        Recorder r = new Recorder();
        r.sameDelta = false;
        MemorySegment all = pages(3);
        CudaAddressMap map = new CudaAddressMap(r, PAGE, "test GPU");
        map.register(all.asSlice(0, PAGE));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> map.deviceAddressOf(all));
        assertTrue(e.getMessage().contains("spans CUDA registrations that test GPU does not see contiguously"),
                e.getMessage());
        assertTrue(e.getMessage().contains("register it first with register(segment)"), e.getMessage());
    }

    @Test
    void ioMemoryIsRegisteredAsSuchAndMayNotOverlap() {
        Recorder r = new Recorder();
        MemorySegment all = pages(2);
        CudaAddressMap map = new CudaAddressMap(r, PAGE, "test GPU");
        map.registerIo(all.asSlice(0, 64));
        assertEquals(List.of("register " + Long.toHexString(all.address()) + " " + PAGE + " io"), calls);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> map.registerIo(all.asSlice(8, 8)));
        assertTrue(e.getMessage().startsWith("cannot register [0x" + Long.toHexString(all.address()) + ", 0x"
                + Long.toHexString(all.address() + PAGE) + ") as I/O memory: it overlaps"), e.getMessage());
        assertEquals(1, calls.size());
    }

    @Test
    void closeUnregistersWhatTheMapRegisteredInReverseOrderAndOnlyOnce() {
        Recorder r = new Recorder();
        MemorySegment all = pages(4);
        CudaAddressMap map = new CudaAddressMap(r, PAGE, "test GPU");
        map.register(all.asSlice(0, 8));
        map.register(all.asSlice(2 * PAGE, 8));
        calls.clear();
        map.close();
        map.close();
        assertEquals(List.of("unregister " + Long.toHexString(all.address() + 2 * PAGE),
                "unregister " + Long.toHexString(all.address())), calls);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> map.addressOf(MemoryWord.word32(all, 0, "w")));
        assertEquals("the CUDA address map of test GPU is closed", e.getMessage());
    }

    @Test
    void forgetUnregistersOnlyRangesWhollyInsideTheSegmentsPagesSoAReusedAddressIsRegisteredAnew() {
        Recorder r = new Recorder();
        MemorySegment all = pages(5);
        MemorySegment freed = all.asSlice(PAGE, 2 * PAGE);
        CudaAddressMap map = new CudaAddressMap(r, PAGE, "test GPU");
        map.register(all.asSlice(0, 8));
        map.register(freed);
        map.register(all.asSlice(3 * PAGE, 2 * PAGE));
        calls.clear();
        map.forget(all.asSlice(3 * PAGE + 8, PAGE));   // within a range that reaches beyond it: stays
        map.forget(MemorySegment.ofArray(new byte[8])); // not native: nothing to do
        assertTrue(calls.isEmpty(), calls.toString());
        map.forget(freed);
        assertEquals(List.of("unregister " + Long.toHexString(freed.address())), calls);
        assertEquals(2, map.rangeCount());
        calls.clear();
        map.addressOf(MemoryWord.word64(freed, 8, "w"));
        assertEquals(List.of("register " + Long.toHexString(freed.address()) + " " + 2 * PAGE), calls,
                "memory at a forgotten address is registered again");
        map.close();
        calls.clear();
        map.forget(freed);
        assertTrue(calls.isEmpty(), "a closed map forgets nothing: " + calls);
    }

    @Test
    void rangesRegisteredElsewhereAreUsedButNotUnregistered() {
        MemorySegment all = pages(1);
        CudaAddressMap map = new CudaAddressMap((start, bytes, io) -> new HostRanges.Range(start, start + bytes, start,
                io, false, () -> calls.add("unregister")), PAGE, "test GPU");
        assertEquals(all.address(), map.deviceAddressOf(all));
        map.close();
        assertTrue(calls.isEmpty());
    }

    @Test
    void heapAndEmptySegmentsAreRefused() {
        CudaAddressMap map = new CudaAddressMap(new Recorder(), PAGE, "test GPU");
        assertThrows(IllegalArgumentException.class, () -> map.deviceAddressOf(MemorySegment.ofArray(new byte[8])));
        assertThrows(IllegalArgumentException.class, () -> map.register(pages(1).asSlice(0, 0)));
        assertThrows(IllegalArgumentException.class, () -> new CudaAddressMap(new Recorder(), 3000, "x"));
        assertTrue(calls.isEmpty());
    }

    @Test
    void rangesFindGapsAndRefuseOverlaps() {
        HostRanges ranges = new HostRanges();
        ranges.add(new HostRanges.Range(100, 200, 1100, false, true, () -> { }));
        ranges.add(new HostRanges.Range(300, 400, 5300, false, true, () -> { }));
        assertEquals(1150, ranges.find(150, 8).deviceAddress() + 150 - 100);
        assertEquals(null, ranges.find(196, 8), "a range must hold every byte");
        assertEquals(null, ranges.find(250, 4));
        List<long[]> gaps = ranges.gaps(50, 450);
        assertEquals(3, gaps.size());
        assertEquals(List.of(50L, 100L), List.of(gaps.get(0)[0], gaps.get(0)[1]));
        assertEquals(List.of(200L, 300L), List.of(gaps.get(1)[0], gaps.get(1)[1]));
        assertEquals(List.of(400L, 450L), List.of(gaps.get(2)[0], gaps.get(2)[1]));
        assertTrue(ranges.gaps(120, 180).isEmpty());
        assertEquals(2, ranges.intersecting(150, 301).size());
        assertThrows(IllegalArgumentException.class, () -> ranges.add(new HostRanges.Range(199, 250, 0, false, true,
                () -> { })));
        assertThrows(IllegalArgumentException.class, () -> new HostRanges.Range(5, 5, 0, false, true, () -> { }));
        assertEquals(2, ranges.size());
    }

    @Test
    void pagesRoundOutward() {
        assertEquals(4096, HostPages.floor(4097, 4096));
        assertEquals(8192, HostPages.ceil(4097, 4096));
        assertEquals(4096, HostPages.ceil(4096, 4096));
        long page = HostPages.size();
        assertTrue(page >= 4096 && (page & (page - 1)) == 0, "page size " + page);
    }
}
