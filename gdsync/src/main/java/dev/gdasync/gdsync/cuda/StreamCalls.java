package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.ffm.Downcalls;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The stream calls JCuda cannot make, bound with FFM in the driver library JCuda uses.
 *
 * <ul>
 *   <li>{@code CUresult cuStreamBatchMemOp_v2(CUstream, unsigned count, CUstreamBatchMemOpParams *, unsigned flags)}:
 *       JCuda declares {@code cuStreamBatchMemOp} but throws {@code UnsupportedOperationException}.</li>
 *   <li>{@code CUresult cuLaunchHostFunc(CUstream, CUhostFn, void *userData)}: JCuda has it, but calls back through
 *       JNI on a driver thread it attaches itself; here one FFM upcall stub serves every stream. The JVM attaches
 *       a driver thread that enters it as a daemon thread, and the stub never lets an exception out (an exception
 *       cannot cross an upcall).</li>
 * </ul>
 *
 * <p>A host function's {@code userData} is a token, not a pointer: {@link #register} maps it to the task, the
 * upcall takes the task out of the map and runs it, and {@link #cancel} drops tasks that will never run.
 * Bound once per JVM, after {@link CudaDriver#open()} succeeded.
 */
@SuppressWarnings("restricted") // binding driver entry points is a native lookup by design
final class StreamCalls {
    private static final Object LOCK = new Object();
    private static StreamCalls bound;

    private static final Map<Long, Runnable> TASKS = new ConcurrentHashMap<>();
    private static final AtomicLong TOKENS = new AtomicLong();

    private final MethodHandle batch;
    private final MethodHandle launchHostFunc;
    private final MemorySegment hostFunction;

    private StreamCalls(MethodHandle batch, MethodHandle launchHostFunc, MemorySegment hostFunction) {
        this.batch = batch;
        this.launchHostFunc = launchHostFunc;
        this.hostFunction = hostFunction;
    }

    /**
     * @return the calls, bound once
     * @throws CudaException if the driver cannot be opened or lacks {@code cuLaunchHostFunc}
     */
    static StreamCalls get() {
        synchronized (LOCK) {
            if (bound == null) {
                CudaDriver.open();
                bound = bind(DriverLibrary.NAME);
            }
            return bound;
        }
    }

    private static StreamCalls bind(String library) {
        Linker linker = Linker.nativeLinker();
        SymbolLookup lookup;
        try {
            lookup = SymbolLookup.libraryLookup(library, Arena.global());
        } catch (IllegalArgumentException e) {
            throw new CudaException(library + DriverLibrary.NOT_FOUND, CudaException.NO_RESULT);
        }
        MethodHandle batch = lookup.find("cuStreamBatchMemOp_v2")
                .map(s -> linker.downcallHandle(s, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT)))
                .orElse(null);
        Optional<MemorySegment> launch = lookup.find("cuLaunchHostFunc");
        if (launch.isEmpty()) {
            throw new CudaException(library + " does not export cuLaunchHostFunc: the NVIDIA driver is too old for CUDA "
                    + "streams (CUDA 10.0 or newer is needed): update the driver", CudaException.NO_RESULT);
        }
        MethodHandle launchHostFunc = linker.downcallHandle(launch.get(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        try {
            MethodHandle run = MethodHandles.lookup().findStatic(StreamCalls.class, "hostFunction",
                    MethodType.methodType(void.class, MemorySegment.class));
            MemorySegment stub = linker.upcallStub(run, FunctionDescriptor.ofVoid(ADDRESS), Arena.global());
            return new StreamCalls(batch, launchHostFunc, stub);
        } catch (NoSuchMethodException | IllegalAccessException e) {
            throw new IllegalStateException("cannot bind the host-function upcall", e);
        }
    }

    /** @return whether the driver exports {@code cuStreamBatchMemOp_v2} */
    boolean hasBatch() {
        return batch != null;
    }

    /**
     * @param stream the raw stream handle
     * @param count  how many params
     * @param params {@code count} 48-byte params (see {@link BatchParams})
     * @return the driver's result
     */
    int batch(long stream, int count, MemorySegment params) {
        try {
            return (int) batch.invokeExact(MemorySegment.ofAddress(stream), count, params, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Queues a host function that runs a registered task.
     *
     * @param stream the raw stream handle
     * @param token  the task's token from {@link #register}
     * @return the driver's result
     */
    int launchHostFunc(long stream, long token) {
        try {
            return (int) launchHostFunc.invokeExact(MemorySegment.ofAddress(stream), hostFunction,
                    MemorySegment.ofAddress(token));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * @param task what a host function will run; it must not throw
     * @return its token, for {@link #launchHostFunc} and {@link #cancel}
     */
    static long register(Runnable task) {
        long token = TOKENS.incrementAndGet();
        TASKS.put(token, task);
        return token;
    }

    /**
     * Drops a task whose host function will not run (its launch failed, its stream closed).
     *
     * @param token the task's token
     */
    static void cancel(long token) {
        TASKS.remove(token);
    }

    /** @return how many registered tasks have not run (for tests) */
    static int registered() {
        return TASKS.size();
    }

    /** The upcall: runs on a driver thread, must not let anything escape. */
    private static void hostFunction(MemorySegment userData) {
        try {
            Runnable task = TASKS.remove(userData.address());
            if (task != null) {
                task.run();
            }
        } catch (Throwable t) {
            try {
                Thread c = Thread.currentThread();
                c.getUncaughtExceptionHandler().uncaughtException(c, t);
            } catch (Throwable ignored) {
                // nothing may cross the upcall
            }
        }
    }
}
