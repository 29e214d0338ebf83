package dev.gdasync.apps.trace;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One job's gdasync events within a window, laid out as a timeline: one track per thread of each rank, every event a
 * span (it lasted) or an instant (it happened), and the flows that tie a cause to its effect:
 *
 * <ul>
 * <li><b>doorbell</b>: from a doorbell rung by a call ({@code DoorbellRung}) to the work request it announced last
 *     ({@code WorkRequest} of the same queue pair with sequence {@code producerIndex - 1});</li>
 * <li><b>message</b>: from a work request that consumed a receive of the peer ({@code WorkRequest.peerReceive}) to the
 *     receiving side's first sight of that completion: the stream wait for that receive CQE, else the poll that
 *     reaped it. Queue pairs are matched by their token, which is the same in both ranks' recordings.</li>
 * </ul>
 * Both ends of a flow must be in the window.
 */
final class Timeline {
    /** Whether an event is drawn as a span or as an instant. */
    enum Shape {
        /** It lasted: a Chrome "X" complete event. */
        SPAN,
        /** It happened at one moment: a Chrome "i" instant event. */
        INSTANT
    }

    /**
     * A thread of a rank.
     *
     * @param id       the track's number in the trace, unique over every rank
     * @param rank     the rank
     * @param threadId the thread's Java id in its rank
     * @param name     the thread's name
     */
    record Track(int id, int rank, long threadId, String name) {
    }

    /**
     * An event placed on its track.
     *
     * @param event    the event
     * @param track    its thread's track
     * @param shape    span or instant
     * @param name     what the timeline calls it
     * @param category its category: stream, doorbell, nic, cpu, libmp, ki, failure
     */
    record Item(TimelineEvent event, Track track, Shape shape, String name, String category) {
    }

    /**
     * A flow from one item to another.
     *
     * @param id   its number, unique in the trace
     * @param kind "doorbell" or "message"
     * @param from the cause
     * @param to   the effect
     */
    record Flow(long id, String kind, Item from, Item to) {
    }

    private final long fromNanos;
    private final long toNanos;
    private final List<Track> tracks;
    private final List<Item> items;
    private final List<Flow> flows;

    private Timeline(long fromNanos, long toNanos, List<Track> tracks, List<Item> items, List<Flow> flows) {
        this.fromNanos = fromNanos;
        this.toNanos = toNanos;
        this.tracks = tracks;
        this.items = items;
        this.flows = flows;
    }

    /**
     * The timeline of a window: its spans that overlap the window and its instants whose moment (their start) lies in
     * it.
     *
     * @param events    the events, by start time (those overlapping the window, or more)
     * @param fromNanos the window's start, in nanoseconds since the epoch
     * @param toNanos   its end
     * @return the timeline
     */
    static Timeline of(List<TimelineEvent> events, long fromNanos, long toNanos) {
        Objects.requireNonNull(events, "events must not be null");
        // An instant is drawn at its start, so it belongs to the window when its start does, whatever its end: a
        // CompletionWritten begins before the CQE's write and commits after, and one begun just before the window's
        // start and committed inside it overlaps the window without its moment being in it.
        events = events.stream().filter(e -> shapeOf(e) == Shape.SPAN
                || (e.startNanos() >= fromNanos && e.startNanos() <= toNanos)).toList();
        Map<String, Track> byThread = new LinkedHashMap<>();
        List<Item> items = new ArrayList<>();
        // Tracks numbered by rank, then by first appearance in the window.
        List<TimelineEvent> byRank = new ArrayList<>(events);
        byRank.sort((a, b) -> a.rank() != b.rank() ? Integer.compare(a.rank(), b.rank()) : Long.compare(a.startNanos(), b.startNanos()));
        for (TimelineEvent e : byRank) {
            byThread.computeIfAbsent(e.rank() + "/" + e.threadId(),
                    k -> new Track(byThread.size() + 1, e.rank(), e.threadId(), e.threadName()));
        }
        for (TimelineEvent e : events) {
            Track t = byThread.get(e.rank() + "/" + e.threadId());
            items.add(new Item(e, t, shapeOf(e), nameOf(e), categoryOf(e)));
        }
        return new Timeline(fromNanos, toNanos, List.copyOf(byThread.values()), List.copyOf(items), flows(items));
    }

    private static List<Flow> flows(List<Item> items) {
        Map<String, Item> work = new HashMap<>();
        Map<String, Item> recvWaits = new HashMap<>();
        Map<String, Item> recvReaps = new HashMap<>();
        for (Item i : items) {
            TimelineEvent e = i.event();
            switch (e.shortType()) {
                case "WorkRequest" -> work.put(e.number("queuePairToken", 0) + "#" + e.number("sequence", -1), i);
                case "StreamWait" -> {
                    String cq = e.text("completionQueue");
                    long cqe = e.number("cqe", -1);
                    if (cq != null && cq.startsWith("recv") && cqe >= 0) {
                        recvWaits.putIfAbsent(e.number("queuePairToken", 0) + "#" + cqe, i);
                    }
                }
                case "CompletionReaped" -> {
                    if ("recv".equals(e.text("queue"))) {
                        recvReaps.putIfAbsent(e.number("queuePairToken", 0) + "#" + e.number("index", -1), i);
                    }
                }
                default -> {
                }
            }
        }
        List<Flow> flows = new ArrayList<>();
        long next = 1;
        for (Item i : items) {
            TimelineEvent e = i.event();
            if (e.shortType().equals("DoorbellRung")) {
                Item to = work.get(e.number("queuePairToken", 0) + "#" + (e.number("producerIndex", 0) - 1));
                if (to != null && to.event().startNanos() >= e.startNanos()) {
                    flows.add(new Flow(next++, "doorbell", i, to));
                }
            } else if (e.shortType().equals("WorkRequest") && e.number("peerReceive", -1) >= 0 && e.number("peerToken", 0) != 0) {
                String key = e.number("peerToken", 0) + "#" + e.number("peerReceive", -1);
                Item to = recvWaits.get(key);
                if (to == null) {
                    to = recvReaps.get(key);
                }
                if (to != null) {
                    flows.add(new Flow(next++, "message", i, to));
                }
            }
        }
        return List.copyOf(flows);
    }

    private static Shape shapeOf(TimelineEvent e) {
        return switch (e.shortType()) {
            case "DoorbellRung", "CompletionWritten", "CompletionReaped", "RnrRetry", "Failure", "RequestState", "MpFailure" ->
                    Shape.INSTANT;
            case "MemopBatch", "StreamWait", "HostTask", "DoorbellNoticed", "WorkRequest", "KiBlock", "KiBlockWait" -> Shape.SPAN;
            default -> e.durationNanos() > 0 ? Shape.SPAN : Shape.INSTANT;
        };
    }

    private static String categoryOf(TimelineEvent e) {
        return switch (e.shortType()) {
            case "MemopBatch", "StreamWait", "HostTask" -> "stream";
            case "DoorbellRung" -> "doorbell";
            case "DoorbellNoticed", "WorkRequest", "CompletionWritten", "RnrRetry" -> "nic";
            case "CompletionReaped" -> "cpu";
            case "RequestState" -> "libmp";
            case "KiBlock", "KiBlockWait" -> "ki";
            case "Failure", "MpFailure" -> "failure";
            default -> "other";
        };
    }

    private static String nameOf(TimelineEvent e) {
        return switch (e.shortType()) {
            case "MemopBatch" -> "memop batch (" + e.number("memops", 0) + ")";
            case "StreamWait" -> {
                String cq = e.text("completionQueue");
                yield cq != null ? "wait " + cq + " #" + e.number("cqe", -1) : "wait " + e.text("word");
            }
            case "HostTask" -> {
                String task = e.text("task");
                yield "task " + (task == null ? "" : task.substring(task.lastIndexOf('.') + 1));
            }
            case "DoorbellRung" -> "doorbell QP " + e.number("queuePair", 0) + " to " + e.number("producerIndex", 0);
            case "DoorbellNoticed" -> "noticed " + e.text("noticedBy") + " QP " + e.number("queuePair", 0) + " x"
                    + e.number("requests", 0);
            case "WorkRequest" -> e.text("opcode") + " " + e.number("bytes", 0) + " B #" + e.number("sequence", 0) + " "
                    + e.text("transport") + (Objects.equals(e.text("outcome"), "DONE") ? "" : " " + e.text("outcome"));
            case "CompletionWritten" -> "CQE " + e.text("queue") + " #" + e.number("index", 0) + " written";
            case "CompletionReaped" -> "reaped " + e.text("queue") + " #" + e.number("index", 0);
            case "RnrRetry" -> "RNR retry #" + e.number("sequence", 0);
            case "RequestState" -> e.text("kind") + " " + e.number("request", 0) + " " + e.text("to");
            case "KiBlock" -> "block " + e.number("block", 0) + " of " + e.text("kernel");
            case "KiBlockWait" -> "KI wait " + e.text("condition") + " " + e.number("value", 0)
                    + ("OK".equals(e.text("result")) ? "" : " " + e.text("result"));
            case "Failure" -> "failure: " + e.text("what");
            case "MpFailure" -> "job failure: " + e.text("reason");
            default -> e.label().toLowerCase(Locale.ROOT);
        };
    }

    /** @return the window's start, in nanoseconds since the epoch */
    long fromNanos() {
        return fromNanos;
    }

    /** @return the window's end, in nanoseconds since the epoch */
    long toNanos() {
        return toNanos;
    }

    /** @return the tracks: ranks in order, each rank's threads in order of first appearance */
    List<Track> tracks() {
        return tracks;
    }

    /** @return the items, by start time */
    List<Item> items() {
        return items;
    }

    /** @return the flows */
    List<Flow> flows() {
        return flows;
    }

    /** @return the ranks present */
    List<Integer> ranks() {
        return tracks.stream().map(Track::rank).distinct().sorted().toList();
    }
}
