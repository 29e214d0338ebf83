package dev.gdasync.gdsync.ffm;

/**
 * What the native bindings (CUDA streams, GDRCopy, UCP) share about FFM calls. {@code MethodHandle.invokeExact}
 * declares {@code Throwable}; a downcall throws no checked exception, so whatever it throws is surfaced as is.
 */
public final class Downcalls {
    private Downcalls() {
    }

    /**
     * For {@code catch (Throwable t) { throw Downcalls.rethrow(t); }} around {@code invokeExact}.
     *
     * @param t what the call threw
     * @return {@code t} if it is a runtime exception, else {@code t} wrapped in an {@link IllegalStateException}
     * @throws Error {@code t} itself, when it is an error
     */
    public static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
