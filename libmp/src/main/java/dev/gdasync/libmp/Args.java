package dev.gdasync.libmp;

import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.gdsync.stream.StreamFailedException;

import java.util.List;
import java.util.Objects;

/**
 * Argument checks shared by the public calls of this package, made before anything changes: a null argument is a
 * {@link NullPointerException} whose message names the parameter ({@code "reg must not be null"}, and
 * {@code "bufs[2] must not be null"} for an element of a list), as {@code docs/decisions.md} sets out.
 */
final class Args {
    private Args() {
    }

    /**
     * @param list a list argument
     * @param name the parameter's name
     * @param <T>  the element type
     * @return the list
     * @throws NullPointerException if the list or one of its elements is null
     */
    static <T> List<T> noNulls(List<T> list, String name) {
        Objects.requireNonNull(list, name + " must not be null");
        for (int i = 0, n = list.size(); i < n; i++) {
            if (list.get(i) == null) {
                throw new NullPointerException(name + "[" + i + "] must not be null");
            }
        }
        return list;
    }

    /**
     * @param array an array argument (varargs)
     * @param name  the parameter's name
     * @param <T>   the element type
     * @return the array
     * @throws NullPointerException if the array or one of its elements is null
     */
    static <T> T[] noNulls(T[] array, String name) {
        Objects.requireNonNull(array, name + " must not be null");
        for (int i = 0; i < array.length; i++) {
            if (array[i] == null) {
                throw new NullPointerException(name + "[" + i + "] must not be null");
            }
        }
        return array;
    }

    /**
     * Checks a stream that a call will post to after changing state (taking a request, writing a work
     * request): it must take work now. The stream may still close or fail before the post; then the post refuses.
     *
     * @param stream the stream argument
     * @return the stream
     * @throws NullPointerException  if it is null
     * @throws IllegalStateException if it is closed
     * @throws StreamFailedException if it failed
     */
    static Stream usable(Stream stream) {
        Objects.requireNonNull(stream, "stream must not be null");
        if (stream.isClosed()) {
            throw new IllegalStateException("stream '" + stream.name() + "' is closed");
        }
        Throwable f = stream.failure();
        if (f != null) {
            throw new StreamFailedException(stream.name(), f);
        }
        return stream;
    }
}
