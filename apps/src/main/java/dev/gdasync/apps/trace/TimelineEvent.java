package dev.gdasync.apps.trace;

import java.util.Map;

/**
 * One gdasync flight-recorder event of one rank, as the timeline needs it.
 *
 * @param rank        the rank whose recording holds it
 * @param type        the event type's name, such as {@code dev.gdasync.StreamWait}
 * @param label       the event type's label, such as {@code Stream wait}
 * @param threadId    the Java id of the thread that committed it, in its rank
 * @param threadName  that thread's name
 * @param startNanos  when it began, in nanoseconds since the epoch
 * @param durationNanos how long it lasted (0 for an instant)
 * @param fields      its own fields by name, in declaration order (numbers, strings, booleans, or null)
 */
record TimelineEvent(int rank, String type, String label, long threadId, String threadName, long startNanos,
                     long durationNanos, Map<String, Object> fields) {
    /** @return when it ended, in nanoseconds since the epoch */
    long endNanos() {
        return startNanos + durationNanos;
    }

    /** @return the event type's short name: {@code StreamWait} for {@code dev.gdasync.StreamWait} */
    String shortType() {
        return type.substring(type.lastIndexOf('.') + 1);
    }

    /**
     * @param name a field
     * @return its value as a long, or {@code missing} when it is absent or not a number
     */
    long number(String name, long missing) {
        return fields.get(name) instanceof Number n ? n.longValue() : missing;
    }

    /**
     * @param name a field
     * @return its value as text, or null when it is absent or null
     */
    String text(String name) {
        Object v = fields.get(name);
        return v == null ? null : v.toString();
    }
}
