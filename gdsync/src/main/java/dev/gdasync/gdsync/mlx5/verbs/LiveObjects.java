package dev.gdasync.gdsync.mlx5.verbs;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The objects of one kind a device made and has not yet destroyed, by native handle, so that a call can tell a live
 * object from a destroyed one and from one another device made, and say which. Remembers the last
 * {@value #REMEMBERED} destroyed objects for the message of a second destroy. Not thread-safe: the device locks.
 *
 * @param <T> the kind ({@link dev.gdasync.gdsync.mlx5.Mlx5CqQueues}, {@link dev.gdasync.gdsync.mlx5.Mlx5QpQueues},
 *            {@link dev.gdasync.gdsync.mlx5.Mlx5Keys})
 */
final class LiveObjects<T> {
    /** How many destroyed objects are remembered. */
    static final int REMEMBERED = 1024;

    private final String owner;
    private final String kind;
    private final Function<T, Long> handleOf;
    private final Function<T, String> nameOf;
    private final Map<Long, T> live = new LinkedHashMap<>();
    private final LinkedHashSet<T> destroyed = new LinkedHashSet<>();

    /**
     * @param owner    the device's name, for messages
     * @param kind     what the objects are, for messages ("CQ")
     * @param handleOf an object's native handle
     * @param nameOf   an object's name in messages ("CQ 0x1a")
     */
    LiveObjects(String owner, String kind, Function<T, Long> handleOf, Function<T, String> nameOf) {
        this.owner = owner;
        this.kind = kind;
        this.handleOf = handleOf;
        this.nameOf = nameOf;
    }

    /** @param object a new object */
    void add(T object) {
        live.put(handleOf.apply(object), object);
    }

    /**
     * @param object what a caller passed
     * @param call   the call, for messages ("destroyCq")
     * @return the object
     * @throws NullPointerException     if it is null
     * @throws IllegalStateException    if it was destroyed
     * @throws IllegalArgumentException if this device did not make it
     */
    T require(T object, String call) {
        if (object == null) {
            throw new NullPointerException(call + ": the " + kind + " is null");
        }
        T mine = live.get(handleOf.apply(object));
        if (object.equals(mine)) {
            return mine;
        }
        if (destroyed.contains(object)) {
            throw new IllegalStateException(call + ": " + nameOf.apply(object) + " of " + owner + " is already destroyed");
        }
        throw new IllegalArgumentException(call + ": " + nameOf.apply(object) + " was not made by " + owner
                + " (a foreign or forged " + kind + ")");
    }

    /**
     * Forgets a live object and remembers it as destroyed.
     *
     * @param object a live object
     */
    void remove(T object) {
        live.remove(handleOf.apply(object));
        destroyed.add(object);
        if (destroyed.size() > REMEMBERED) {
            Iterator<T> oldest = destroyed.iterator();
            oldest.next();
            oldest.remove();
        }
    }

    /** @return the live objects, oldest first */
    List<T> all() {
        return new ArrayList<>(live.values());
    }

    /** @return how many are live */
    int size() {
        return live.size();
    }
}
