package dev.gdasync.apps.trace;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a {@link Timeline} as a Chrome trace-event JSON file, which Perfetto (ui.perfetto.dev) and chrome://tracing
 * open: one process per rank ({@code pid} = rank), one thread per track, an {@code "X"} complete event per span, a
 * thread-scoped {@code "i"} instant per instant, and each flow as an {@code "s"} event at its cause's start, written
 * right after it, and an {@code "f"} event ({@code "bp":"e"}: bound to the enclosing slice) within its effect
 * ({@link #flowEnd}). Events are written by time, which is how Perfetto binds a flow's ends to slices. Times are microseconds from the window's start, to the nanosecond.
 * The events' own fields go into {@code args}.
 */
final class ChromeTrace {
    private static final JsonFactory JSON = JsonFactory.builder().build();

    private ChromeTrace() {
    }

    /**
     * @param timeline the timeline
     * @param ranks    every rank of the job (each gets its process, even without events in the window)
     * @param file     where to write
     * @throws UncheckedIOException if it cannot be written
     */
    static void write(Timeline timeline, Collection<Integer> ranks, Path file) {
        try (OutputStream os = Files.newOutputStream(file);
             JsonGenerator g = JSON.createGenerator(os, JsonEncoding.UTF8)) {
            write(timeline, ranks, g);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /** An item (flow null), or the start (at its cause) or the end (at its effect) of a flow. */
    private record Entry(long nanos, int order, Timeline.Item item, Timeline.Flow flow, boolean start) {
    }

    private static void write(Timeline t, Collection<Integer> ranks, JsonGenerator g) throws IOException {
        g.writeStartObject();
        g.writeStringField("displayTimeUnit", "ns");
        g.writeObjectFieldStart("otherData");
        g.writeStringField("source", "gdasync scripts/trace");
        g.writeNumberField("windowStartEpochNanos", t.fromNanos());
        g.writeNumberField("windowEndEpochNanos", t.toNanos());
        g.writeNumberField("flows", t.flows().size());
        g.writeEndObject();
        g.writeArrayFieldStart("traceEvents");
        for (int rank : ranks) {
            metadata(g, "process_name", rank, null, "name", "rank " + rank);
            metadata(g, "process_sort_index", rank, null, "sort_index", rank);
        }
        for (Timeline.Track track : t.tracks()) {
            metadata(g, "thread_name", track.rank(), track.id(), "name", track.name());
            metadata(g, "thread_sort_index", track.rank(), track.id(), "sort_index", track.id());
        }
        // Every event at its time; a flow's ends right after the event each binds to (a stable sort keeps that order).
        List<Entry> entries = new ArrayList<>();
        Map<Timeline.Item, List<Timeline.Flow>> out = new HashMap<>();
        Map<Timeline.Item, List<Timeline.Flow>> in = new HashMap<>();
        for (Timeline.Flow f : t.flows()) {
            out.computeIfAbsent(f.from(), k -> new ArrayList<>()).add(f);
            in.computeIfAbsent(f.to(), k -> new ArrayList<>()).add(f);
        }
        for (Timeline.Item item : t.items()) {
            long at = item.event().startNanos();
            entries.add(new Entry(at, entries.size(), item, null, false));
            for (Timeline.Flow f : out.getOrDefault(item, List.of())) {
                entries.add(new Entry(at, entries.size(), item, f, true));
            }
            for (Timeline.Flow f : in.getOrDefault(item, List.of())) {
                entries.add(new Entry(flowEnd(item), entries.size(), item, f, false));
            }
        }
        entries.sort(Comparator.comparingLong(Entry::nanos).thenComparingInt(Entry::order));
        for (Entry e : entries) {
            if (e.flow() == null) {
                item(g, t.fromNanos(), e.item());
            } else {
                flow(g, t.fromNanos(), e.flow(), e.item(), e.start());
            }
        }
        g.writeEndArray();
        g.writeEndObject();
    }

    private static void metadata(JsonGenerator g, String name, int pid, Integer tid, String key, Object value) throws IOException {
        g.writeStartObject();
        g.writeStringField("ph", "M");
        g.writeStringField("name", name);
        g.writeNumberField("pid", pid);
        if (tid != null) {
            g.writeNumberField("tid", tid);
        }
        g.writeObjectFieldStart("args");
        if (value instanceof Integer i) {
            g.writeNumberField(key, i);
        } else {
            g.writeStringField(key, value.toString());
        }
        g.writeEndObject();
        g.writeEndObject();
    }

    private static double micros(long nanos, long origin) {
        return (nanos - origin) / 1000.0;
    }

    private static void item(JsonGenerator g, long origin, Timeline.Item item) throws IOException {
        TimelineEvent e = item.event();
        g.writeStartObject();
        g.writeStringField("name", item.name());
        g.writeStringField("cat", item.category());
        if (item.shape() == Timeline.Shape.SPAN) {
            g.writeStringField("ph", "X");
            g.writeNumberField("ts", micros(e.startNanos(), origin));
            g.writeNumberField("dur", e.durationNanos() / 1000.0);
        } else {
            g.writeStringField("ph", "i");
            g.writeStringField("s", "t");
            g.writeNumberField("ts", micros(e.startNanos(), origin));
        }
        g.writeNumberField("pid", item.track().rank());
        g.writeNumberField("tid", item.track().id());
        g.writeObjectFieldStart("args");
        g.writeStringField("event", e.type());
        for (Map.Entry<String, Object> f : e.fields().entrySet()) {
            Object v = f.getValue();
            if (v == null) {
                g.writeNullField(f.getKey());
            } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
                g.writeNumberField(f.getKey(), ((Number) v).longValue());
            } else if (v instanceof Number n) {
                g.writeNumberField(f.getKey(), n.doubleValue());
            } else if (v instanceof Boolean b) {
                g.writeBooleanField(f.getKey(), b);
            } else {
                g.writeStringField(f.getKey(), v.toString());
            }
        }
        g.writeEndObject();
        g.writeEndObject();
    }

    /**
     * Where a flow ends on its effect: a span's last nanosecond (a stream wait began before the message was sent; it
     * ends after, and a flow must not end before it starts), an instant's moment.
     */
    static long flowEnd(Timeline.Item item) {
        TimelineEvent e = item.event();
        return item.shape() == Timeline.Shape.SPAN && e.durationNanos() > 0 ? e.endNanos() - 1 : e.startNanos();
    }

    private static void flow(JsonGenerator g, long origin, Timeline.Flow f, Timeline.Item at, boolean start) throws IOException {
        g.writeStartObject();
        g.writeStringField("name", f.kind());
        g.writeStringField("cat", "flow");
        g.writeStringField("ph", start ? "s" : "f");
        if (!start) {
            g.writeStringField("bp", "e");
        }
        g.writeNumberField("id", f.id());
        g.writeNumberField("ts", micros(start ? at.event().startNanos() : flowEnd(at), origin));
        g.writeNumberField("pid", at.track().rank());
        g.writeNumberField("tid", at.track().id());
        g.writeEndObject();
    }
}
