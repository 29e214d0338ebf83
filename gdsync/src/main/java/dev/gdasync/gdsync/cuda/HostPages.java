package dev.gdasync.gdsync.cuda;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/** The host's page size ({@code getpagesize()} through FFM), the granularity of host registrations. */
@SuppressWarnings("restricted") // getpagesize is a native call by design
final class HostPages {
    private static final long SIZE = query();

    private HostPages() {
    }

    /** @return the page size in bytes */
    static long size() {
        return SIZE;
    }

    private static long query() {
        Linker linker = Linker.nativeLinker();
        return linker.defaultLookup().find("getpagesize").map(symbol -> {
            MethodHandle getpagesize = linker.downcallHandle(symbol, FunctionDescriptor.of(ValueLayout.JAVA_INT));
            try {
                return (long) (int) getpagesize.invokeExact();
            } catch (Throwable e) {
                return 4096L;
            }
        }).orElse(4096L);
    }

    /**
     * @param address an address
     * @param page    a power of two
     * @return the address rounded down to the page
     */
    static long floor(long address, long page) {
        return address & -page;
    }

    /**
     * @param address an address
     * @param page    a power of two
     * @return the address rounded up to the page
     */
    static long ceil(long address, long page) {
        return (address + page - 1) & -page;
    }
}
