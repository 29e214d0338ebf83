package dev.gdasync.apps.trace;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reads back a Chrome trace JSON as the tests check it: processes, thread names, events, flows. */
final class TraceChecks {
    private final List<JsonNode> events = new ArrayList<>();
    private final Map<String, String> threadNames = new HashMap<>();

    TraceChecks(JsonNode trace) {
        JsonNode array = trace.get("traceEvents");
        assertNotNull(array, "a traceEvents array");
        assertTrue(array.isArray());
        array.forEach(events::add);
        for (JsonNode e : events) {
            assertTrue(e.has("ph") && e.has("pid"), e.toString());
            if (e.get("ph").asText().equals("M") && e.get("name").asText().equals("thread_name")) {
                threadNames.put(key(e), e.get("args").get("name").asText());
            }
        }
    }

    private static String key(JsonNode e) {
        return e.get("pid").asInt() + "/" + (e.has("tid") ? e.get("tid").asInt() : -1);
    }

    Set<Integer> processes() {
        Set<Integer> out = new TreeSet<>();
        for (JsonNode e : events) {
            if (e.get("ph").asText().equals("M") && e.get("name").asText().equals("process_name")) {
                assertEquals("rank " + e.get("pid").asInt(), e.get("args").get("name").asText());
                out.add(e.get("pid").asInt());
            }
        }
        return out;
    }

    Set<String> threadNames(int pid) {
        Set<String> out = new TreeSet<>();
        threadNames.forEach((k, v) -> {
            if (k.startsWith(pid + "/")) {
                out.add(v);
            }
        });
        return out;
    }

    /** @return the events of a phase on a named thread of a rank whose name starts with a prefix */
    long count(int pid, String thread, String ph, String namePrefix) {
        return events.stream().filter(e -> e.get("ph").asText().equals(ph) && e.get("pid").asInt() == pid)
                .filter(e -> thread.equals(threadNames.get(key(e))))
                .filter(e -> e.get("name").asText().startsWith(namePrefix)).count();
    }

    /**
     * Every flow has one start and one end of the same name, no later, the end bound to its enclosing slice; the start
     * sits at the start of an event of its thread, the end within one.
     */
    void assertFlowsBound() {
        Map<Long, JsonNode> starts = new HashMap<>();
        Map<Long, JsonNode> ends = new HashMap<>();
        Map<String, List<double[]>> at = new HashMap<>();
        for (JsonNode e : events) {
            String ph = e.get("ph").asText();
            if (ph.equals("X") || ph.equals("i")) {
                double ts = e.get("ts").asDouble();
                at.computeIfAbsent(key(e), k -> new ArrayList<>()).add(new double[]{ts, ts + (e.has("dur") ? e.get("dur").asDouble() : 0)});
                if (ph.equals("X")) {
                    assertTrue(e.get("dur").asDouble() >= 0, e.toString());
                } else {
                    assertEquals("t", e.get("s").asText(), "instants are thread-scoped: " + e);
                }
            }
        }
        for (JsonNode e : events) {
            String ph = e.get("ph").asText();
            if (ph.equals("s") || ph.equals("f")) {
                long id = e.get("id").asLong();
                assertFalse((ph.equals("s") ? starts : ends).containsKey(id), "flow " + id + " twice");
                (ph.equals("s") ? starts : ends).put(id, e);
                if (ph.equals("f")) {
                    assertEquals("e", e.get("bp").asText(), e.toString());
                }
                double ts = e.get("ts").asDouble();
                boolean inside = at.getOrDefault(key(e), List.of()).stream()
                        .anyMatch(span -> ph.equals("s") ? span[0] == ts : span[0] <= ts && ts <= span[1]);
                assertTrue(inside, "the flow " + e + " sits on no event of its thread");
            }
        }
        assertEquals(starts.keySet(), ends.keySet(), "every flow starts and ends");
        starts.forEach((id, s) -> {
            assertEquals(s.get("name").asText(), ends.get(id).get("name").asText());
            assertTrue(s.get("ts").asDouble() <= ends.get(id).get("ts").asDouble(), "flow " + id + " ends before it starts");
        });
    }

    long flows(String name) {
        return events.stream().filter(e -> e.get("ph").asText().equals("s") && e.get("name").asText().equals(name)).count();
    }

    long crossRankFlows(String name) {
        Map<Long, Integer> startPid = new HashMap<>();
        for (JsonNode e : events) {
            if (e.get("ph").asText().equals("s") && e.get("name").asText().equals(name)) {
                startPid.put(e.get("id").asLong(), e.get("pid").asInt());
            }
        }
        return events.stream().filter(e -> e.get("ph").asText().equals("f") && e.get("name").asText().equals(name))
                .filter(e -> startPid.get(e.get("id").asLong()) != e.get("pid").asInt()).count();
    }

    /** The events come by time (what Perfetto's binding of flows relies on), from the window's start. */
    void assertTimesOrdered() {
        double last = Double.NEGATIVE_INFINITY;
        for (JsonNode e : events) {
            if (!e.get("ph").asText().equals("M")) {
                double ts = e.get("ts").asDouble();
                assertTrue(ts >= last - 1e-9, "ts " + ts + " after " + last + ": " + e);
                last = ts;
            }
        }
    }
}
