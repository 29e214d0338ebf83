package dev.gdasync.gdsync.ucx;

import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpParams;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Optional;
import java.util.Properties;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The system's UCX as JUCX needs it, checked once per JVM before any JUCX class loads native code: the
 * library ({@code libucp.so.0}) must be installed, and its version must serve the JUCX this build uses (the
 * same major version, a minor version no older). A newer JUCX on an older UCX fails deep inside a call
 * ("invalid memory type parameter"); this check fails first, naming both versions.
 *
 * <p>{@link #context()} is the JVM's one {@link UcpContext} with the features the software NIC uses: active
 * messages, RMA (put and get), tags, and wakeup; its endpoints send keepalives every {@value #KEEPALIVE} (unless
 * {@code UCX_KEEPALIVE_INTERVAL} is set), so that a dead peer is noticed within seconds.
 */
@SuppressWarnings("restricted") // a downcall into libucp for its version: native access by design
public final class UcxLibrary {
    /** The soname of UCP. */
    public static final String LIBRARY = "libucp.so.0";
    private static final String JUCX_POM = "META-INF/maven/org.openucx/jucx/pom.properties";
    /** UCX's variable that names the signals it handles. */
    static final String ERROR_SIGNALS = "UCX_ERROR_SIGNALS";
    /** The keepalive interval of UCX endpoints, unless UCX_KEEPALIVE_INTERVAL says otherwise. */
    static final String KEEPALIVE = "1s";
    private static final Object LOCK = new Object();
    private static Optional<String> reason;
    private static UcxVersion ucx;
    private static UcxVersion jucx;
    private static UcpContext context;

    private UcxLibrary() {
    }

    /**
     * Probes the system's UCX once per JVM.
     *
     * @return why UCX cannot be used here, or empty when it can
     */
    public static Optional<String> unavailableReason() {
        synchronized (LOCK) {
            if (reason == null) {
                reason = probe();
            }
            return reason;
        }
    }

    /**
     * @return the system's UCX version
     * @throws IllegalStateException if UCX cannot be used (the message says why)
     */
    public static UcxVersion ucxVersion() {
        require();
        return ucx;
    }

    /**
     * @return the version of the JUCX jar on the class path
     * @throws IllegalStateException if UCX cannot be used
     */
    public static UcxVersion jucxVersion() {
        require();
        return jucx;
    }

    /**
     * @return the JVM's UCP context (made on first use, never closed: workers of every NIC share it)
     * @throws IllegalStateException if UCX cannot be used (the message says why and what to do)
     */
    public static UcpContext context() {
        require();
        synchronized (LOCK) {
            if (context == null) {
                UcpParams params = new UcpParams().requestAmFeature().requestRmaFeature().requestTagFeature()
                        .requestWakeupFeature().setMtWorkersShared(true);
                if (System.getenv("UCX_KEEPALIVE_INTERVAL") == null) {
                    // UCX notices a dead peer by keepalives on idle endpoints; 20 s by default is longer than
                    // the waits that should fail when a peer dies.
                    params.setConfig("KEEPALIVE_INTERVAL", KEEPALIVE);
                }
                context = new UcpContext(params);
            }
            return context;
        }
    }

    private static void require() {
        unavailableReason().ifPresent(r -> {
            throw new IllegalStateException(r);
        });
    }

    private static Optional<String> probe() {
        UcxVersion binding;
        try {
            binding = jucxOnClassPath();
        } catch (IllegalStateException e) {
            return Optional.of(e.getMessage());
        }
        keepSignalsForTheJvm();
        SymbolLookup lookup;
        try {
            lookup = SymbolLookup.libraryLookup(LIBRARY, Arena.global());
        } catch (IllegalArgumentException e) {
            return Optional.of(LIBRARY + " not found: UCX is not installed; install it (Debian: apt-get install libucx0, "
                    + "which scripts/test does as root) for JUCX " + binding);
        }
        Optional<MemorySegment> getVersion = lookup.find("ucp_get_version");
        if (getVersion.isEmpty()) {
            return Optional.of(LIBRARY + " does not export ucp_get_version: it is not UCX's UCP library");
        }
        UcxVersion system;
        try (Arena arena = Arena.ofConfined()) {
            MethodHandle h = Linker.nativeLinker().downcallHandle(getVersion.get(),
                    FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS));
            MemorySegment v = arena.allocate(JAVA_INT, 3);
            h.invokeExact(v, v.asSlice(4), v.asSlice(8));
            system = new UcxVersion(v.getAtIndex(JAVA_INT, 0), v.getAtIndex(JAVA_INT, 1), v.getAtIndex(JAVA_INT, 2));
        } catch (Throwable t) {
            return Optional.of("ucp_get_version failed: " + t);
        }
        if (!system.serves(binding)) {
            return Optional.of("the system's UCX is " + system + ", but this build's JUCX is " + binding
                    + ", which needs UCX " + binding.major() + "." + binding.minor() + " or a newer " + binding.major()
                    + ".x: install a matching UCX, or build with a JUCX no newer than the system's UCX "
                    + "(-Djucx.version; docs/ucx.md)");
        }
        ucx = system;
        jucx = binding;
        try {
            org.openucx.jucx.NativeLibs.load();
        } catch (Throwable t) {
            return Optional.of("JUCX " + binding + " could not load its native library against UCX " + system + ": " + t);
        }
        return Optional.empty();
    }

    /**
     * UCX installs handlers for SIGSEGV, SIGBUS, SIGILL and SIGFPE when it loads, unless {@code UCX_ERROR_SIGNALS}
     * says otherwise; the JVM uses SIGSEGV itself (null checks, safepoints) and dies when UCX's handler takes it.
     * So, before the library loads, the variable is set empty in this process's environment (unless the user
     * set it): UCX reads it when it initializes.
     */
    private static void keepSignalsForTheJvm() {
        if (System.getenv(ERROR_SIGNALS) != null) {
            return;
        }
        Linker linker = Linker.nativeLinker();
        Optional<MemorySegment> setenv = linker.defaultLookup().find("setenv");
        if (setenv.isEmpty()) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MethodHandle h = linker.downcallHandle(setenv.get(), FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
            int rc = (int) h.invokeExact(arena.allocateFrom(ERROR_SIGNALS), arena.allocateFrom(""), 1);
            if (rc != 0) {
                System.err.println("gdasync: could not set " + ERROR_SIGNALS + " for UCX (setenv returned " + rc + ")");
            }
        } catch (Throwable t) {
            System.err.println("gdasync: could not set " + ERROR_SIGNALS + " for UCX: " + t);
        }
    }

    private static UcxVersion jucxOnClassPath() {
        try (InputStream in = UcxLibrary.class.getClassLoader().getResourceAsStream(JUCX_POM)) {
            if (in == null) {
                throw new IllegalStateException("JUCX (org.openucx:jucx) is not on the class path");
            }
            Properties p = new Properties();
            p.load(in);
            return UcxVersion.parse(p.getProperty("version", "?"));
        } catch (IOException e) {
            throw new IllegalStateException("JUCX's version could not be read: " + e);
        }
    }
}
