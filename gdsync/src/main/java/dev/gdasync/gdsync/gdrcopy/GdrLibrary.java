package dev.gdasync.gdsync.gdrcopy;

import dev.gdasync.gdsync.ffm.Downcalls;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * GDRCopy's user library ({@code libgdrapi}) through FFM downcalls: found by name, checked, and bound once
 * per JVM, on first use ({@link #get()}), never at class loading of anything else.
 *
 * <p>The library is looked up as {@value #SONAME}, then as {@value #DEVEL_NAME}, with
 * {@link SymbolLookup#libraryLookup(String, Arena)}: the dynamic linker's search ({@code LD_LIBRARY_PATH},
 * the loader cache), with a catchable exception where nothing is found. A library that lacks one of the
 * functions below, or that reports a major version other than 2, is refused with a reason and unloaded.
 *
 * <p>The bindings mirror {@code gdrapi.h} of GDRCopy 2.x on 64-bit Linux ({@code size_t} and
 * {@code unsigned long} are 64-bit): {@code gdr_mh_t} is a structure of one {@code unsigned long}, passed
 * by value; every {@code int} result is 0 for success or an errno value.
 */
@SuppressWarnings("restricted") // loading libgdrapi and binding its functions are native operations by design
final class GdrLibrary {
    /** The library's name with its ABI version, as GDRCopy 2.x installs it. */
    static final String SONAME = "libgdrapi.so.2";
    /** The development link name, tried when {@link #SONAME} is not found. */
    static final String DEVEL_NAME = "libgdrapi.so";
    /** The only major version this binding speaks. */
    static final int MAJOR_VERSION = 2;

    /** The functions every GDRCopy 2.x library exports. */
    static final List<String> REQUIRED = List.of("gdr_open", "gdr_close", "gdr_pin_buffer", "gdr_unpin_buffer", "gdr_map",
            "gdr_unmap", "gdr_copy_to_mapping", "gdr_copy_from_mapping", "gdr_runtime_get_version",
            "gdr_driver_get_version");
    /** The info call of GDRCopy 2.4 and later, with the mapping type. */
    static final String GET_INFO_V2 = "gdr_get_info_v2";
    /** The info call of GDRCopy 2.0 to 2.3 (still exported by later versions, for compatibility). */
    static final String GET_INFO_V1 = "gdr_get_info";

    /** {@code gdr_mh_t}: {@code struct { unsigned long h; }}, passed by value. */
    static final StructLayout MEMORY_HANDLE = MemoryLayout.structLayout(JAVA_LONG.withName("h")).withName("gdr_mh_t");

    /** {@code gdr_info_t} of GDRCopy 2.0 to 2.3: 40 bytes. */
    static final StructLayout INFO_V1 = MemoryLayout.structLayout(
            JAVA_LONG.withName("va"),
            JAVA_LONG.withName("mapped_size"),
            JAVA_INT.withName("page_size"),
            MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("tm_cycles"),
            JAVA_INT.withName("cycles_per_ms"),
            JAVA_INT.withName("flags")).withName("gdr_info");

    /** {@code gdr_info_v2_t} of GDRCopy 2.4 and later: the 2.0 fields, then {@code mapping_type}; 48 bytes. */
    static final StructLayout INFO_V2 = MemoryLayout.structLayout(
            JAVA_LONG.withName("va"),
            JAVA_LONG.withName("mapped_size"),
            JAVA_INT.withName("page_size"),
            MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("tm_cycles"),
            JAVA_INT.withName("cycles_per_ms"),
            JAVA_INT.withName("flags"),
            JAVA_INT.withName("mapping_type"),
            MemoryLayout.paddingLayout(4)).withName("gdr_info_v2");

    /** Byte offsets in both info layouts (the common prefix). */
    static final long INFO_VA = 0;
    static final long INFO_MAPPED_SIZE = 8;
    static final long INFO_PAGE_SIZE = 16;
    static final long INFO_TM_CYCLES = 24;
    static final long INFO_CYCLES_PER_MS = 32;
    /** The 32-bit unit holding the bit-fields {@code mapped:1} (bit 0) and {@code wc_mapping:1} (bit 1). */
    static final long INFO_FLAGS = 36;
    static final int INFO_MAPPED_BIT = 1;
    static final int INFO_WC_MAPPING_BIT = 2;
    /** {@code mapping_type}, in {@link #INFO_V2} only. */
    static final long INFO_MAPPING_TYPE = 40;

    private static final AddressLayout POINTER = ADDRESS;

    final String name;
    final boolean infoV2;
    private final MethodHandle open;
    private final MethodHandle close;
    private final MethodHandle pinBuffer;
    private final MethodHandle unpinBuffer;
    private final MethodHandle getInfo;
    private final MethodHandle map;
    private final MethodHandle unmap;
    private final MethodHandle copyToMapping;
    private final MethodHandle copyFromMapping;
    private final MethodHandle runtimeGetVersion;
    private final MethodHandle driverGetVersion;

    private GdrLibrary(String name, SymbolLookup lookup) {
        Linker linker = Linker.nativeLinker();
        this.name = name;
        this.infoV2 = lookup.find(GET_INFO_V2).isPresent();
        this.open = bind(linker, lookup, "gdr_open", FunctionDescriptor.of(POINTER));
        this.close = bind(linker, lookup, "gdr_close", FunctionDescriptor.of(JAVA_INT, POINTER));
        this.pinBuffer = bind(linker, lookup, "gdr_pin_buffer",
                FunctionDescriptor.of(JAVA_INT, POINTER, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, POINTER));
        this.unpinBuffer = bind(linker, lookup, "gdr_unpin_buffer", FunctionDescriptor.of(JAVA_INT, POINTER, MEMORY_HANDLE));
        this.getInfo = bind(linker, lookup, infoV2 ? GET_INFO_V2 : GET_INFO_V1,
                FunctionDescriptor.of(JAVA_INT, POINTER, MEMORY_HANDLE, POINTER));
        this.map = bind(linker, lookup, "gdr_map", FunctionDescriptor.of(JAVA_INT, POINTER, MEMORY_HANDLE, POINTER, JAVA_LONG));
        this.unmap = bind(linker, lookup, "gdr_unmap",
                FunctionDescriptor.of(JAVA_INT, POINTER, MEMORY_HANDLE, POINTER, JAVA_LONG));
        this.copyToMapping = bind(linker, lookup, "gdr_copy_to_mapping",
                FunctionDescriptor.of(JAVA_INT, MEMORY_HANDLE, POINTER, POINTER, JAVA_LONG));
        this.copyFromMapping = bind(linker, lookup, "gdr_copy_from_mapping",
                FunctionDescriptor.of(JAVA_INT, MEMORY_HANDLE, POINTER, POINTER, JAVA_LONG));
        this.runtimeGetVersion = bind(linker, lookup, "gdr_runtime_get_version",
                FunctionDescriptor.ofVoid(POINTER, POINTER));
        this.driverGetVersion = bind(linker, lookup, "gdr_driver_get_version",
                FunctionDescriptor.of(JAVA_INT, POINTER, POINTER, POINTER));
    }

    private static MethodHandle bind(Linker linker, SymbolLookup lookup, String function, FunctionDescriptor descriptor) {
        return linker.downcallHandle(lookup.find(function).orElseThrow(), descriptor);
    }

    /** The outcome of the one lookup per JVM: a library, or why there is none. */
    private record Probe(GdrLibrary library, String problem) {
    }

    /** Lazy holder: the lookup runs when {@link #get()} is first called, not when this class loads. */
    private static final class Holder {
        static final Probe PROBE = probe();
    }

    /**
     * @return the bound library
     * @throws GdrException if there is none; the message says why and what to do
     */
    static GdrLibrary get() {
        Probe probe = Holder.PROBE;
        if (probe.library == null) {
            throw new GdrException(probe.problem, GdrException.NO_RESULT);
        }
        return probe.library;
    }

    /** @return why the library cannot be used, or empty when {@link #get()} succeeds */
    static Optional<String> problem() {
        return Optional.ofNullable(Holder.PROBE.problem);
    }

    private static Probe probe() {
        for (String candidate : List.of(SONAME, DEVEL_NAME)) {
            Arena arena = Arena.ofShared();
            SymbolLookup lookup;
            try {
                lookup = SymbolLookup.libraryLookup(candidate, arena);
            } catch (IllegalArgumentException e) {
                arena.close();
                continue;
            }
            Optional<String> problem = check(candidate, lookup);
            if (problem.isPresent()) {
                arena.close(); // unloads the library
                return new Probe(null, problem.get());
            }
            // The arena stays open for the life of the JVM: the library must stay loaded.
            return new Probe(new GdrLibrary(candidate, lookup), null);
        }
        return new Probe(null, SONAME + " not found (nor " + DEVEL_NAME + "): GDRCopy is not installed or not on the "
                + "library path; install GDRCopy 2.x (its libgdrapi package) or add the folder holding " + SONAME
                + " to LD_LIBRARY_PATH");
    }

    private static Optional<String> check(String candidate, SymbolLookup lookup) {
        for (String symbol : REQUIRED) {
            if (lookup.find(symbol).isEmpty()) {
                return Optional.of(candidate + " does not export " + symbol + ": it is not the user library of GDRCopy "
                        + "2.0 or newer; check LD_LIBRARY_PATH, or install GDRCopy 2.x");
            }
        }
        if (lookup.find(GET_INFO_V2).isEmpty() && lookup.find(GET_INFO_V1).isEmpty()) {
            return Optional.of(candidate + " exports neither " + GET_INFO_V2 + " nor " + GET_INFO_V1
                    + ": it is not the user library of GDRCopy 2.x; check LD_LIBRARY_PATH");
        }
        GdrVersion version = runtimeVersion(Linker.nativeLinker(), lookup);
        if (version.major() != MAJOR_VERSION) {
            return Optional.of(candidate + " is GDRCopy " + version + ", but this binding speaks GDRCopy 2.x: install "
                    + "GDRCopy 2.x, or put its " + SONAME + " on LD_LIBRARY_PATH");
        }
        return Optional.empty();
    }

    private static GdrVersion runtimeVersion(Linker linker, SymbolLookup lookup) {
        return callVersion(bind(linker, lookup, "gdr_runtime_get_version", FunctionDescriptor.ofVoid(POINTER, POINTER)));
    }

    /** Calls {@code gdr_runtime_get_version(int *major, int *minor)}. */
    private static GdrVersion callVersion(MethodHandle handle) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment major = arena.allocate(JAVA_INT);
            MemorySegment minor = arena.allocate(JAVA_INT);
            handle.invokeExact(major, minor);
            return new GdrVersion(major.get(JAVA_INT, 0), minor.get(JAVA_INT, 0));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    // ---- downcalls: one method per function, results as the library returns them ---------------------------

    /** @return {@code gdr_open()}: the library handle, or {@link MemorySegment#NULL} */
    MemorySegment open() {
        try {
            return (MemorySegment) open.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int close(MemorySegment g) {
        try {
            return (int) close.invokeExact(g);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int pinBuffer(MemorySegment g, long address, long size, MemorySegment handleOut) {
        try {
            return (int) pinBuffer.invokeExact(g, address, size, 0L, 0, handleOut);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int unpinBuffer(MemorySegment g, MemorySegment handle) {
        try {
            return (int) unpinBuffer.invokeExact(g, handle);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** @param info {@link #INFO_V2} bytes when {@link #infoV2}, else {@link #INFO_V1} bytes */
    int getInfo(MemorySegment g, MemorySegment handle, MemorySegment info) {
        try {
            return (int) getInfo.invokeExact(g, handle, info);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int map(MemorySegment g, MemorySegment handle, MemorySegment pointerOut, long size) {
        try {
            return (int) map.invokeExact(g, handle, pointerOut, size);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int unmap(MemorySegment g, MemorySegment handle, MemorySegment va, long size) {
        try {
            return (int) unmap.invokeExact(g, handle, va, size);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int copyToMapping(MemorySegment handle, MemorySegment mapped, MemorySegment host, long size) {
        try {
            return (int) copyToMapping.invokeExact(handle, mapped, host, size);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    int copyFromMapping(MemorySegment handle, MemorySegment host, MemorySegment mapped, long size) {
        try {
            return (int) copyFromMapping.invokeExact(handle, host, mapped, size);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** @return {@code gdr_runtime_get_version}: the library's own version */
    GdrVersion runtimeVersion() {
        return callVersion(runtimeGetVersion);
    }

    /**
     * @param versionOut two ints: major, then minor
     * @return {@code gdr_driver_get_version}'s result
     */
    int driverGetVersion(MemorySegment g, MemorySegment versionOut) {
        try {
            return (int) driverGetVersion.invokeExact(g, versionOut, versionOut.asSlice(ValueLayout.JAVA_INT.byteSize()));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
