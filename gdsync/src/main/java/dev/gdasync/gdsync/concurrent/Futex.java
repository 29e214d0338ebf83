package dev.gdasync.gdsync.concurrent;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * Linux's futex on a 32-bit word of shared memory, through FFM ({@code syscall(SYS_futex, ...)}): a thread of one
 * process sleeps on a word of a file mapped into several processes, and a thread of another process wakes it by a
 * call, at once, instead of the sleeper's timer running out. The operations are the shared (not
 * {@code FUTEX_PRIVATE_FLAG}) forms, which the kernel keys by the mapped page, so they work across processes.
 *
 * <p>Where the call is unavailable (not Linux, an architecture whose syscall number is not known here, no native
 * access), {@link #isSupported()} is false, {@link #await} parks for the timeout ({@link LockSupport#parkNanos}) and
 * {@link #wakeAll} does nothing: sleepers then notice work when their park ends, as without this class.
 */
@SuppressWarnings("restricted") // a system call by design
public final class Futex {
    private static final int FUTEX_WAIT = 0;
    private static final int FUTEX_WAKE = 1;
    private static final MethodHandle SYSCALL;
    private static final long SYS_FUTEX;

    static {
        MethodHandle call = null;
        long number = syscallNumber(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
        if (number >= 0) {
            try {
                Linker linker = Linker.nativeLinker();
                Optional<MemorySegment> s = linker.defaultLookup().find("syscall");
                if (s.isPresent()) {
                    // long syscall(long number, ...): the futex call's six arguments, passed as longs and pointers
                    call = linker.downcallHandle(s.get(), FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                                    ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS,
                                    ValueLayout.ADDRESS, ValueLayout.JAVA_LONG),
                            Linker.Option.firstVariadicArg(1));
                }
            } catch (RuntimeException | LinkageError e) {
                // no native access: unsupported
            }
        }
        SYSCALL = call;
        SYS_FUTEX = number;
    }

    private Futex() {
    }

    /**
     * @param osName the {@code os.name} property
     * @param osArch the {@code os.arch} property
     * @return the futex system call's number there, or -1 where it is not known
     */
    static long syscallNumber(String osName, String osArch) {
        if (!osName.toLowerCase(Locale.ROOT).startsWith("linux")) {
            return -1;
        }
        return switch (osArch.toLowerCase(Locale.ROOT)) {
            case "amd64", "x86_64" -> 202;
            case "aarch64", "arm64", "riscv64" -> 98;
            default -> -1;
        };
    }

    /** @return whether sleepers can be woken by a call here */
    public static boolean isSupported() {
        return SYSCALL != null;
    }

    /**
     * Sleeps while the word holds {@code expected}, for at most {@code nanos}, or until {@link #wakeAll} on the
     * same word (from any process that maps it). Returns at once if the word holds another value; may return
     * early for no reason (a signal), as any park may: callers look again at what they wait for.
     *
     * @param word     the mapped memory, 4-byte aligned at {@code offset}
     * @param offset   the word's offset
     * @param expected the value seen before deciding to sleep
     * @param nanos    the longest sleep, positive
     */
    public static void await(MemorySegment word, long offset, int expected, long nanos) {
        if (SYSCALL == null) {
            LockSupport.parkNanos(nanos);
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment timeout = arena.allocate(16, 8);
            timeout.set(ValueLayout.JAVA_LONG, 0, nanos / 1_000_000_000L);
            timeout.set(ValueLayout.JAVA_LONG, 8, nanos % 1_000_000_000L);
            long rc = (long) SYSCALL.invokeExact(SYS_FUTEX, word.asSlice(offset, 4), (long) FUTEX_WAIT,
                    (long) expected, timeout, MemorySegment.NULL, 0L);
            if (rc < -1) {
                throw new IllegalStateException("futex wait returned " + rc);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("futex wait failed", t);
        }
    }

    /**
     * Wakes every thread sleeping on the word in {@link #await}, in any process. Change the word first, so that a
     * thread about to sleep on its old value does not.
     *
     * @param word   the mapped memory, 4-byte aligned at {@code offset}
     * @param offset the word's offset
     */
    public static void wakeAll(MemorySegment word, long offset) {
        if (SYSCALL == null) {
            return;
        }
        try {
            long rc = (long) SYSCALL.invokeExact(SYS_FUTEX, word.asSlice(offset, 4), (long) FUTEX_WAKE,
                    (long) Integer.MAX_VALUE, MemorySegment.NULL, MemorySegment.NULL, 0L);
            if (rc < -1) {
                throw new IllegalStateException("futex wake returned " + rc);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("futex wake failed", t);
        }
    }
}
