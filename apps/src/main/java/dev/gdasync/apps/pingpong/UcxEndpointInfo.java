package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.ucx.UcxLibrary;
import org.openucx.jucx.ucp.UcpEndpoint;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The transports UCX chose for an endpoint, read from {@code ucp_ep_print_info} (which JUCX does not
 * expose) through a C memory stream: informational only, so every failure becomes a description of it.
 */
@SuppressWarnings("restricted") // downcalls into libucp and libc: native access by design
final class UcxEndpointInfo {
    /** A lane of the printout, e.g. {@code lane[0]:  2:sysv/memory.0 md[2] ...}: the transport/device. */
    private static final java.util.regex.Pattern LANE =
            java.util.regex.Pattern.compile("lane\\[\\d+]:\\s+\\d+:([^\\s.]+/[^\\s]+?)\\.\\d+\\s");

    private UcxEndpointInfo() {
    }

    /**
     * @param endpoint a connected endpoint
     * @return the distinct transport/device pairs of its lanes, e.g. "sysv/memory, cma/memory", or why they are
     *         unknown
     */
    static String transports(UcpEndpoint endpoint) {
        String text;
        try {
            text = printInfo(endpoint.getNativeId());
        } catch (Throwable t) {
            return "unknown (ucp_ep_print_info failed: " + t + ")";
        }
        Set<String> found = new LinkedHashSet<>();
        Matcher m = LANE.matcher(text);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found.isEmpty() ? "unknown (no lanes in ucp_ep_print_info)" : String.join(", ", found);
    }

    private static String printInfo(long ep) throws Throwable {
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        SymbolLookup ucp = SymbolLookup.libraryLookup(UcxLibrary.LIBRARY, Arena.global());
        MethodHandle openMemstream = linker.downcallHandle(libc.find("open_memstream").orElseThrow(),
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        MethodHandle fclose = linker.downcallHandle(libc.find("fclose").orElseThrow(), FunctionDescriptor.of(JAVA_INT, ADDRESS));
        MethodHandle free = linker.downcallHandle(libc.find("free").orElseThrow(), FunctionDescriptor.ofVoid(ADDRESS));
        MethodHandle print = linker.downcallHandle(ucp.find("ucp_ep_print_info").orElseThrow(),
                FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment bufPtr = arena.allocate(ADDRESS);
            MemorySegment sizePtr = arena.allocate(JAVA_LONG);
            MemorySegment stream = (MemorySegment) openMemstream.invokeExact(bufPtr, sizePtr);
            if (stream.equals(MemorySegment.NULL)) {
                throw new IllegalStateException("open_memstream failed");
            }
            print.invokeExact(MemorySegment.ofAddress(ep), stream);
            int closed = (int) fclose.invokeExact(stream);
            MemorySegment buf = bufPtr.get(ADDRESS, 0);
            try {
                if (closed != 0 || buf.equals(MemorySegment.NULL)) {
                    throw new IllegalStateException("fclose of the memory stream failed");
                }
                long size = sizePtr.get(JAVA_LONG, 0);
                return buf.reinterpret(size + 1).getString(0);
            } finally {
                free.invokeExact(buf);
            }
        }
    }
}
