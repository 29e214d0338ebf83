package dev.gdasync.gdsync.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.util.List;
import java.util.Optional;

/**
 * Looks for the NVIDIA driver library with FFM before anything touches JCuda. JCuda's
 * {@code JCudaDriver} loads a native library that needs {@code libcuda.so.1}; when that is missing, its
 * static initializer throws {@link UnsatisfiedLinkError} and the class stays unusable for the life of
 * the JVM. {@link SymbolLookup#libraryLookup(String, Arena)} searches the same places as the dynamic
 * linker ({@code LD_LIBRARY_PATH}, the loader cache) and fails with an exception that can be caught.
 */
@SuppressWarnings("restricted") // opening the driver library is a native lookup by design
final class DriverLibrary {
    /** The driver library's name, as JCuda's native library records it (its DT_NEEDED entry). */
    static final String NAME = "libcuda.so.1";
    /** What follows a library's name when it cannot be found. */
    static final String NOT_FOUND = " not found: install the NVIDIA driver or run on a GPU machine";

    /** Symbols called before any device exists; a library without them is not the driver. */
    private static final List<String> SYMBOLS = List.of("cuInit", "cuDriverGetVersion", "cuDeviceGetCount");

    private DriverLibrary() {
    }

    /**
     * @param name a library name, searched as the dynamic linker does
     * @return why it cannot serve as the driver library, or empty when it can be opened and exports the
     *         driver's first entry points
     */
    static Optional<String> problem(String name) {
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup lookup = SymbolLookup.libraryLookup(name, arena);
            for (String symbol : SYMBOLS) {
                if (lookup.find(symbol).isEmpty()) {
                    return Optional.of(name + " does not export " + symbol + ": it is not the NVIDIA driver library; "
                            + "check LD_LIBRARY_PATH");
                }
            }
            return Optional.empty();
        } catch (IllegalArgumentException e) {
            return Optional.of(name + NOT_FOUND);
        }
    }
}
