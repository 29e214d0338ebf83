package dev.gdasync.gdsync.concurrent;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Pins the calling thread to one CPU with Linux's {@code sched_setaffinity}, through FFM.
 *
 * <p>Benchmarks pin their busy-polling threads to distinct CPUs so that two of them never share a core
 * while another is idle (perftest and the OSU benchmarks do the same with taskset). On systems
 * without the call, {@link #isSupported()} is false and pinning does nothing.
 */
@SuppressWarnings("restricted") // sched_setaffinity is a native call by design
public final class ThreadAffinity {
    private static final int CPU_SET_BYTES = 128; // glibc's cpu_set_t: 1024 CPUs
    private static final MethodHandle SET;
    private static final MethodHandle GET;
    private static final MethodHandle GETTID;

    static {
        MethodHandle set = null;
        MethodHandle get = null;
        MethodHandle gettid = null;
        try {
            Linker linker = Linker.nativeLinker();
            SymbolLookup libc = linker.defaultLookup();
            FunctionDescriptor fd = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_LONG, ValueLayout.ADDRESS);
            Optional<MemorySegment> s = libc.find("sched_setaffinity");
            Optional<MemorySegment> g = libc.find("sched_getaffinity");
            if (s.isPresent() && g.isPresent()) {
                set = linker.downcallHandle(s.get(), fd);
                get = linker.downcallHandle(g.get(), fd);
            }
            Optional<MemorySegment> t = libc.find("gettid");
            if (t.isPresent()) {
                gettid = linker.downcallHandle(t.get(), FunctionDescriptor.of(ValueLayout.JAVA_INT));
            }
        } catch (RuntimeException | LinkageError e) {
            // not Linux, or native access unavailable: pinning is unsupported
        }
        SET = set;
        GET = get;
        GETTID = gettid;
    }

    private ThreadAffinity() {
    }

    /** @return whether threads can be pinned here */
    public static boolean isSupported() {
        return SET != null;
    }

    /**
     * @return the CPUs the calling thread may run on, ascending; empty if unknown
     */
    public static List<Integer> allowedCpus() {
        List<Integer> cpus = new ArrayList<>();
        if (GET == null) {
            return cpus;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(CPU_SET_BYTES, 8);
            int rc = (int) GET.invokeExact(0, (long) CPU_SET_BYTES, mask);
            if (rc != 0) {
                return cpus;
            }
            for (int cpu = 0; cpu < CPU_SET_BYTES * 8; cpu++) {
                if ((mask.get(ValueLayout.JAVA_BYTE, cpu / 8) & (1 << (cpu % 8))) != 0) {
                    cpus.add(cpu);
                }
            }
        } catch (Throwable t) {
            throw new IllegalStateException("sched_getaffinity failed", t);
        }
        return cpus;
    }

    /**
     * Pins the calling thread to one CPU.
     *
     * @param cpu the CPU
     * @return whether the thread is now pinned (false where unsupported or refused)
     * @throws IllegalArgumentException if the CPU number is out of range
     */
    public static boolean pinCurrentThread(int cpu) {
        if (cpu < 0 || cpu >= CPU_SET_BYTES * 8) {
            throw new IllegalArgumentException("CPU " + cpu + " is out of range [0, " + CPU_SET_BYTES * 8 + ")");
        }
        if (SET == null) {
            return false;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(CPU_SET_BYTES, 8);
            mask.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            VarHandle.releaseFence();
            return (int) SET.invokeExact(0, (long) CPU_SET_BYTES, mask) == 0;
        } catch (Throwable t) {
            throw new IllegalStateException("sched_setaffinity failed", t);
        }
    }

    /**
     * @return the calling thread's kernel thread id, for {@link #setAffinity(int, List)} from another thread; 0 (the
     * calling thread, wherever it is used) where unknown
     */
    public static int currentThreadId() {
        if (GETTID == null) {
            return 0;
        }
        try {
            return (int) GETTID.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("gettid failed", t);
        }
    }

    /**
     * Lets a thread run on a set of CPUs again (unpins it), from any thread of the process.
     *
     * @param threadId the thread's kernel id, from {@link #currentThreadId()} (not 0)
     * @param cpus     the CPUs it may run on
     * @return whether the kernel took the mask
     */
    public static boolean setAffinity(int threadId, List<Integer> cpus) {
        if (SET == null || threadId <= 0 || cpus.isEmpty()) {
            return false;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(CPU_SET_BYTES, 8);
            for (int cpu : cpus) {
                if (cpu >= 0 && cpu < CPU_SET_BYTES * 8) {
                    mask.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (mask.get(ValueLayout.JAVA_BYTE, cpu / 8) | (1 << (cpu % 8))));
                }
            }
            return (int) SET.invokeExact(threadId, (long) CPU_SET_BYTES, mask) == 0;
        } catch (Throwable t) {
            throw new IllegalStateException("sched_setaffinity failed", t);
        }
    }
}
