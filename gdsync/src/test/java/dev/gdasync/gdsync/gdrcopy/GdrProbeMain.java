package dev.gdasync.gdsync.gdrcopy;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.cuda.CudaContext;
import dev.gdasync.gdsync.cuda.CudaDriver;
import dev.gdasync.gdsync.cuda.CudaException;
import dev.gdasync.gdsync.memop.HostMemops;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitPolicy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Optional;

import static dev.gdasync.gdsync.gdrcopy.GdrCopy.GPU_PAGE_SIZE;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A child JVM of {@link GdrCopyFakeTest}: exercises the GDRCopy binding (against the stand-in library, or
 * none) and prints what happened, one {@code key: value} line per fact, then {@code end}.
 */
@SuppressWarnings("restricted") // the stand-in's test helpers are native calls
public final class GdrProbeMain {
    /** Waits in these programs are bounded; a wait that fails prints its exception. */
    private static final WaitPolicy WAIT = WaitPolicy.lowLatency(Duration.ofSeconds(60));

    private GdrProbeMain() {
    }

    /**
     * @param args the scenario: {@code probe}, {@code calls}, {@code info}, {@code bad}, {@code fail},
     *             {@code order}, {@code busy}, {@code words}, {@code words-fail} or {@code words-stop}
     */
    public static void main(String[] args) {
        try {
            switch (args[0]) {
                case "probe" -> probe();
                case "calls" -> calls();
                case "info" -> info();
                case "bad" -> bad();
                case "fail" -> fail();
                case "order" -> order();
                case "busy" -> busy();
                case "words" -> words();
                case "words-fail" -> wordsFail();
                case "words-stop" -> wordsStop();
                default -> throw new IllegalArgumentException("unknown scenario " + args[0]);
            }
        } catch (Throwable e) {
            System.out.println("unexpected: " + e);
            e.printStackTrace(System.out);
        }
        System.out.println("end");
    }

    private static void print(String key, Object value) {
        System.out.println(key + ": " + value);
    }

    // ---- the stand-in's test helpers --------------------------------------------------------------------

    private static SymbolLookup fake() {
        return SymbolLookup.libraryLookup(GdrLibrary.SONAME, Arena.global());
    }

    private static Optional<SymbolLookup> fakeIfLoaded() {
        try {
            return Optional.of(fake());
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** @return the address of new "device memory" of the stand-in, GPU-page aligned */
    private static long deviceAlloc(long bytes) throws Throwable {
        MethodHandle alloc = Linker.nativeLinker().downcallHandle(fake().find("fake_gdr_device_alloc").orElseThrow(),
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG));
        long address = (long) alloc.invokeExact(bytes);
        if (address == 0) {
            throw new IllegalStateException("fake_gdr_device_alloc failed");
        }
        return address;
    }

    private static int fakeCount(String function, GdrCopy gdr) throws Throwable {
        MethodHandle count = Linker.nativeLinker().downcallHandle(fake().find(function).orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
        return (int) count.invokeExact(gdr.handle);
    }

    private static void marker(String text) {
        String log = System.getenv("FAKE_GDR_LOG");
        if (log == null) {
            return;
        }
        try {
            Files.writeString(Path.of(log), "--- " + text + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String fields(GdrInfo i, long pinned) {
        return "va=" + (i.va() == pinned ? "pinned" : "0x" + Long.toHexString(i.va())) + " mapped_size=" + i.mappedSize()
                + " page_size=" + i.pageSize() + " tm_cycles=" + i.tmCycles() + " cycles_per_ms=" + i.cyclesPerMs()
                + " mapped=" + i.mapped() + " wc=" + i.wcMapping() + " type=" + i.mappingType();
    }

    // ---- scenarios --------------------------------------------------------------------------------------

    /** The probe, then an open: what a machine without GDRCopy (or without gdrdrv) sees. */
    private static void probe() {
        print("reason", GdrCopy.unavailableReason().orElse("none"));
        try (GdrCopy gdr = GdrCopy.open()) {
            print("library", gdr.libraryName());
            print("runtime", gdr.runtimeVersion());
            print("driver", gdr.driverVersion());
            print("handle", gdr);
        } catch (GdrException e) {
            print("GdrException", e.getMessage());
            print("result", e.result());
        }
        print("again", GdrCopy.unavailableReason().orElse("none"));
    }

    /** Every call, end to end, with the bytes checked. */
    private static void calls() throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            GdrCopy gdr = GdrCopy.open();
            print("library", gdr.libraryName());
            print("runtime", gdr.runtimeVersion());
            print("driver", gdr.driverVersion());
            long size = 3 * GPU_PAGE_SIZE;
            long base = deviceAlloc(size);
            MemorySegment device = MemorySegment.ofAddress(base).reinterpret(size);
            long pinned = base + GPU_PAGE_SIZE;

            GdrPin pin = gdr.pin(pinned, 2 * GPU_PAGE_SIZE - 100);
            print("info-before", fields(pin.info(), pinned));
            GdrMapping m = pin.map();
            print("mapping", m.byteSize() + " bytes, segment " + m.segment().byteSize() + ", offset " + m.offset());
            print("mapping-is-a-second-view", m.segment().address() != pinned);
            print("info-mapped", fields(pin.info(), pinned));
            print("info-at-map", fields(m.info(), pinned));
            print("device-address-of-128", m.deviceAddressOf(128) == pinned + 128);

            MemorySegment source = arena.allocate(1000);
            for (int i = 0; i < 1000; i++) {
                source.set(JAVA_BYTE, i, (byte) (i * 7 + 1));
            }
            gdr.copyTo(m, 4096, source);
            print("copy-to", device.asSlice(GPU_PAGE_SIZE + 4096, 1000).mismatch(source) == -1 ? "equal" : "different");

            for (int i = 0; i < 3000; i++) {
                device.set(JAVA_BYTE, GPU_PAGE_SIZE + 70_000 + i, (byte) (i * 13 + 5));
            }
            MemorySegment destination = arena.allocate(3000);
            m.copyFrom(70_000, destination);
            print("copy-from", destination.mismatch(device.asSlice(GPU_PAGE_SIZE + 70_000, 3000)) == -1 ? "equal"
                    : "different");

            MemoryWord flag = m.word32(128, "flag");
            flag.set32(0x12345678, true);
            print("word-written-through-mapping", Integer.toHexString(device.get(JAVA_INT, GPU_PAGE_SIZE + 128)));
            device.set(JAVA_LONG, GPU_PAGE_SIZE + 256, 0x1122334455667788L);
            print("word-read-through-mapping", Long.toHexString(m.word64(256, "counter").getAcquire64()));

            MemoryWord completion = m.word32(512, "completion");
            Thread writer = Thread.ofPlatform().start(() -> {
                for (int v = 1; v <= 5; v++) {
                    sleep(5);
                    JAVA_INT.varHandle().setRelease(device, GPU_PAGE_SIZE + 512, v);
                }
            });
            HostMemops.await32(completion, 5, WaitCondition.EQ, WAIT, new BackoffIdler(BackoffPolicy.LOW_LATENCY),
                    () -> false);
            print("waited-on-mapping", completion.getAcquire32());
            writer.join();

            print("pinned", fakeCount("fake_gdr_pinned", gdr) + " mapped " + fakeCount("fake_gdr_mapped", gdr));
            m.unmap();
            print("after-unmap", fakeCount("fake_gdr_pinned", gdr) + " pinned, " + fakeCount("fake_gdr_mapped", gdr)
                    + " mapped, isMapped " + m.isMapped() + ", pin.mapping " + pin.mapping().isPresent());
            try {
                flag.getAcquire32();
                print("word-after-unmap", "readable");
            } catch (IllegalStateException e) {
                print("word-after-unmap", "IllegalStateException");
            }
            try {
                m.copyTo(0, source);
                print("copy-after-unmap", "copied");
            } catch (IllegalStateException e) {
                print("copy-after-unmap", "IllegalStateException: " + e.getMessage());
            }
            pin.unpin();
            print("after-unpin", fakeCount("fake_gdr_pinned", gdr) + " pinned, isPinned " + pin.isPinned() + ", pins "
                    + gdr.pinCount());
            gdr.close();
            print("closed", !gdr.isOpen());
        }
    }

    /** The info of a mapped buffer, as the library's ABI (v1 or v2) and FAKE_GDR_MAPPING_TYPE give it. */
    private static void info() throws Throwable {
        try (GdrCopy gdr = GdrCopy.open()) {
            long base = deviceAlloc(GPU_PAGE_SIZE);
            GdrPin pin = gdr.pin(base, GPU_PAGE_SIZE);
            print("info-before", fields(pin.info(), base));
            GdrMapping m = pin.map();
            print("info-mapped", fields(pin.info(), base));
            print("mapping", m);
        }
    }

    /** Arguments refused before anything native happens, and refusals of the library. */
    private static void bad() throws Throwable {
        try (Arena arena = Arena.ofConfined(); GdrCopy gdr = GdrCopy.open()) {
            long base = deviceAlloc(2 * GPU_PAGE_SIZE);
            marker("bad pins");
            tryPin(gdr, "unaligned", base + 4096, GPU_PAGE_SIZE);
            tryPin(gdr, "null", 0, GPU_PAGE_SIZE);
            tryPin(gdr, "zero-size", base, 0);
            tryPin(gdr, "negative-size", base, -5);
            tryPin(gdr, "wraps", 0xFFFF_FFFF_FFFF_0000L, 2 * GPU_PAGE_SIZE);
            print("pinned-after-bad", fakeCount("fake_gdr_pinned", gdr));
            marker("host memory");
            MemorySegment host = arena.allocate(GPU_PAGE_SIZE, GPU_PAGE_SIZE);
            tryPin(gdr, "host-memory", host.address(), GPU_PAGE_SIZE);
            marker("copies");
            GdrPin pin = gdr.pin(base, GPU_PAGE_SIZE);
            GdrMapping m = pin.map();
            try {
                m.copyTo(GPU_PAGE_SIZE - 10, arena.allocate(100));
            } catch (IndexOutOfBoundsException e) {
                print("copy-past-end", e.getMessage());
            }
            try {
                m.copyFrom(-1, arena.allocate(4));
            } catch (IndexOutOfBoundsException e) {
                print("copy-negative-offset", e.getMessage());
            }
            try {
                m.copyTo(0, MemorySegment.ofArray(new byte[8]));
            } catch (IllegalArgumentException e) {
                print("copy-heap", e.getMessage());
            }
            try {
                pin.map();
            } catch (IllegalStateException e) {
                print("map-twice", e.getMessage());
            }
            try (GdrCopy other = GdrCopy.open()) {
                other.copyTo(m, 0, arena.allocate(4));
            } catch (IllegalArgumentException e) {
                print("copy-through-another-handle", e.getMessage());
            }
            print("pinned-at-end", fakeCount("fake_gdr_pinned", gdr));
        }
    }

    private static void tryPin(GdrCopy gdr, String what, long address, long size) {
        try {
            GdrPin pin = gdr.pin(address, size);
            print(what, "pinned " + pin);
        } catch (IllegalArgumentException e) {
            print(what, "IllegalArgumentException: " + e.getMessage());
        } catch (GdrException e) {
            print(what, "GdrException: " + e.getMessage() + " [result " + e.result() + "]");
        }
    }

    /** A pin or a map that the library refuses (FAKE_GDR_PIN_RESULT, FAKE_GDR_MAP_RESULT). */
    private static void fail() throws Throwable {
        try (GdrCopy gdr = GdrCopy.open()) {
            long base = deviceAlloc(GPU_PAGE_SIZE);
            GdrPin pin;
            try {
                pin = gdr.pin(base, GPU_PAGE_SIZE);
            } catch (GdrException e) {
                print("pin", "GdrException: " + e.getMessage() + " [result " + e.result() + "]");
                print("pins", gdr.pinCount());
                return;
            }
            try {
                pin.map();
                print("map", "mapped");
            } catch (GdrException e) {
                print("map", "GdrException: " + e.getMessage() + " [result " + e.result() + "]");
            }
            print("still-pinned", pin.isPinned() + ", mapping " + pin.mapping().isPresent());
            pin.close();
            print("pinned-at-end", fakeCount("fake_gdr_pinned", gdr));
        }
    }

    /** Closing in every order, and twice. */
    private static void order() throws Throwable {
        long base = deviceAlloc(GPU_PAGE_SIZE);

        marker("a: handle first");
        GdrCopy a = GdrCopy.open();
        GdrPin pinA = a.pin(base, GPU_PAGE_SIZE);
        GdrMapping mapA = pinA.map();
        a.close();
        marker("a: then the rest");
        mapA.close();
        pinA.close();
        a.close();
        print("a-state", "open " + a.isOpen() + ", pinned " + pinA.isPinned() + ", mapped " + mapA.isMapped());
        expectIllegalState("a-segment", () -> mapA.segment().get(JAVA_INT, 0));
        expectIllegalState("a-pin", () -> a.pin(base, GPU_PAGE_SIZE));
        expectIllegalState("a-map", pinA::map);
        expectIllegalState("a-info", pinA::info);
        expectIllegalState("a-driver", a::driverVersion);

        marker("b: pin before its mapping");
        GdrCopy b = GdrCopy.open();
        GdrPin pinB = b.pin(base, GPU_PAGE_SIZE);
        GdrMapping mapB = pinB.map();
        pinB.close();
        print("b-after-pin-close", fakeCount("fake_gdr_pinned", b) + " pinned, " + fakeCount("fake_gdr_mapped", b)
                + " mapped, isMapped " + mapB.isMapped());
        marker("b: then the rest");
        mapB.close();
        pinB.close();
        b.close();

        marker("c: in order, twice each, and a second mapping");
        GdrCopy c = GdrCopy.open();
        GdrPin pinC = c.pin(base, GPU_PAGE_SIZE);
        GdrMapping first = pinC.map();
        first.close();
        first.close();
        GdrMapping second = pinC.map();
        print("c-second-mapping", second.isMapped() + ", first " + first.isMapped());
        second.close();
        pinC.close();
        pinC.close();
        c.close();
        c.close();
        print("c-state", "open " + c.isOpen());
    }

    /**
     * Closing while a copy is in flight on another thread (FAKE_GDR_COPY_GATE holds the copy until the gate
     * file exists): refused, nothing changes, and the same close works once the copy has returned.
     */
    private static void busy() throws Throwable {
        Path gate = Path.of(System.getenv("FAKE_GDR_COPY_GATE"));
        Path log = Path.of(System.getenv("FAKE_GDR_LOG"));
        long base = deviceAlloc(GPU_PAGE_SIZE);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment bytes = arena.allocate(256);
            GdrCopy gdr = GdrCopy.open();
            GdrPin pin = gdr.pin(base, GPU_PAGE_SIZE);
            GdrMapping mapping = pin.map();
            Thread copier = Thread.ofPlatform().start(() -> mapping.copyTo(0, bytes));
            awaitCopiesWaiting(log, 1);
            expectIllegalState("unmap-while-copying", mapping::close);
            expectIllegalState("unpin-while-copying", pin::close);
            expectIllegalState("close-while-copying", gdr::close);
            print("while-copying", "open " + gdr.isOpen() + ", pinned " + pin.isPinned() + ", mapped " + mapping.isMapped()
                    + ", library pinned " + fakeCount("fake_gdr_pinned", gdr) + " mapped " + fakeCount("fake_gdr_mapped", gdr));
            Files.createFile(gate);
            copier.join();
            gdr.close();
            print("after-copy", "open " + gdr.isOpen() + ", pinned " + pin.isPinned() + ", mapped " + mapping.isMapped());
        }
    }

    private static void awaitCopiesWaiting(Path log, int count) throws IOException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            if (Files.exists(log) && Files.readAllLines(log).stream().filter("copy waiting"::equals).count() >= count) {
                return;
            }
            sleep(1);
        }
        throw new IllegalStateException("no copy reached the gate within 60 s");
    }

    private static void expectIllegalState(String what, Runnable action) {
        try {
            action.run();
            print(what, "no exception");
        } catch (IllegalStateException e) {
            print(what, "IllegalStateException: " + e.getMessage());
        }
    }

    private static CudaContext context() {
        return CudaContext.retainPrimary(CudaDriver.open().device(0));
    }

    /** GPU words: mapped where the stand-in library is found (and not switched off), copied otherwise. */
    private static void words() throws Throwable {
        try (Arena arena = Arena.ofConfined(); CudaContext context = context()) {
            GpuWords words = GpuWords.open(context);
            print("uses-gdrcopy", words.usesGdrCopy());
            print("fallback-reason", words.fallbackReason().orElse("none"));
            GpuWords.open(context).close(); // a second open says nothing more
            long size = 2 * GPU_PAGE_SIZE;
            long base = fakeIfLoaded().isPresent() ? deviceAlloc(size) : arena.allocate(size, GPU_PAGE_SIZE).address();
            MemorySegment device = MemorySegment.ofAddress(base).reinterpret(size);
            device.set(JAVA_INT, 64, 7);

            GpuWordMirror a = words.word32(base + 64, "a");
            GpuWordMirror b = words.word64(base + 128, "b");
            GpuWordMirror c = words.word32(base + GPU_PAGE_SIZE + 8, "c");
            print("mapped", a.isMapped() + " " + b.isMapped() + " " + c.isMapped());
            print("pages", words.mappedPages());
            print("a-initial", a.word().getAcquire32());
            print("a", a);

            Thread writer = Thread.ofPlatform().start(() -> {
                sleep(20);
                JAVA_INT.varHandle().setRelease(device, 64L, 42);
                sleep(5);
                JAVA_LONG.varHandle().setRelease(device, 128L, 1L << 40);
            });
            BackoffIdler idler = new BackoffIdler(BackoffPolicy.LOW_LATENCY);
            HostMemops.await32(a.word(), 42, WaitCondition.EQ, WAIT, idler, () -> false);
            print("a-waited", a.word().getAcquire32());
            HostMemops.await64(b.word(), 1L << 40, WaitCondition.GEQ, WAIT, idler, () -> false);
            print("b-waited", Long.toHexString(b.word().getAcquire64()));
            writer.join();

            device.set(JAVA_INT, GPU_PAGE_SIZE + 8, 99);
            c.refresh();
            print("c-after-refresh", c.word().getAcquire32());

            a.close();
            a.close();
            print("pages-after-a", words.mappedPages());
            b.close();
            print("pages-after-b", words.mappedPages());
            try {
                b.refresh();
                print("refresh-closed", "no exception");
            } catch (IllegalStateException e) {
                print("refresh-closed", "IllegalStateException");
            }
            try {
                words.word32(base + 2, "misaligned");
            } catch (IllegalArgumentException e) {
                print("misaligned", e.getMessage());
            }
            words.close();
            words.close();
            print("after-close-c", c.isMapped() ? "mapped word" : "copied word");
            try {
                c.word().getAcquire32();
                print("c-after-close", "readable");
            } catch (IllegalStateException e) {
                print("c-after-close", "IllegalStateException");
            }
            try {
                words.word32(base, "late");
            } catch (IllegalStateException e) {
                print("word-after-close", e.getMessage());
            }
        }
    }

    /** The fallback's first copy fails (FAKE_CUDA_COPY_RESULT). */
    private static void wordsFail() throws Throwable {
        try (Arena arena = Arena.ofConfined(); CudaContext context = context(); GpuWords words = GpuWords.open(context)) {
            long base = arena.allocate(64, 64).address();
            try {
                words.word32(base, "flag");
                print("word", "made");
            } catch (CudaException e) {
                print("CudaException", e.getMessage());
            }
        }
    }

    /** A copied word whose later copies fail (FAKE_CUDA_COPY_FAIL_AFTER): it stops being refreshed, and says why. */
    private static void wordsStop() throws Throwable {
        try (Arena arena = Arena.ofConfined(); CudaContext context = context(); GpuWords words = GpuWords.open(context)) {
            long base = arena.allocate(64, 64).address();
            GpuWordMirror flag = words.word32(base, "flag");
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (flag.failure().isEmpty() && System.nanoTime() < deadline) {
                sleep(1);
            }
            print("failure", flag.failure().orElse("none"));
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
