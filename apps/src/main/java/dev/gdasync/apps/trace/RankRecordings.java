package dev.gdasync.apps.trace;

import jdk.jfr.ValueDescriptor;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The recordings of one job: the {@code rank-N.jfr} files of a folder, as {@code pingpong --jfr DIR} and
 * {@code mprun --jfr DIR} write them, read with {@code jdk.jfr.consumer}. Only gdasync's events
 * ({@code dev.gdasync.*}) are kept, and only those within a time window, so a long recording costs a pass over the
 * file, not its size in memory.
 */
final class RankRecordings {
    /** The events' name prefix. */
    static final String PREFIX = "dev.gdasync.";
    /** The event whose last end ends the default window: the last message a NIC sent. */
    static final String LAST_WORK = PREFIX + "WorkRequest";

    private static final Pattern FILE = Pattern.compile("rank-(\\d{1,6})\\.jfr");
    /** Fields every event has, which the timeline shows in its own way. */
    private static final Set<String> COMMON = Set.of("startTime", "duration", "eventThread", "stackTrace");

    private final Map<Integer, Path> files;

    private RankRecordings(Map<Integer, Path> files) {
        this.files = files;
    }

    /**
     * @param dir a folder holding {@code rank-N.jfr} files
     * @return its recordings, by rank
     * @throws IllegalArgumentException if it is not a folder or holds no such file
     * @throws UncheckedIOException     if it cannot be listed
     */
    static RankRecordings in(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException(dir + " is not a folder (give the folder of --jfr DIR)");
        }
        Map<Integer, Path> found = new TreeMap<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "rank-*.jfr")) {
            for (Path p : ds) {
                Matcher m = FILE.matcher(p.getFileName().toString());
                if (m.matches() && Files.isRegularFile(p)) {
                    found.put(Integer.parseInt(m.group(1)), p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        if (found.isEmpty()) {
            throw new IllegalArgumentException("no rank-N.jfr file in " + dir + " (record with pingpong --jfr DIR or mprun --jfr DIR)");
        }
        return new RankRecordings(found);
    }

    /** @return the files, by rank */
    Map<Integer, Path> files() {
        return files;
    }

    /**
     * @param type an event type's name
     * @return the latest end of such an event over every rank, or of any gdasync event if there is none, in
     *         nanoseconds since the epoch
     * @throws IllegalArgumentException if no recording holds a gdasync event
     * @throws UncheckedIOException     if a file cannot be read
     */
    long lastEnd(String type) {
        long lastOfType = Long.MIN_VALUE;
        long lastOfAny = Long.MIN_VALUE;
        for (Path p : files.values()) {
            try (RecordingFile rf = new RecordingFile(p)) {
                while (rf.hasMoreEvents()) {
                    RecordedEvent e = rf.readEvent();
                    String name = e.getEventType().getName();
                    if (name.startsWith(PREFIX)) {
                        long end = nanos(e.getEndTime());
                        lastOfAny = Math.max(lastOfAny, end);
                        if (name.equals(type)) {
                            lastOfType = Math.max(lastOfType, end);
                        }
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + p + ": " + e.getMessage(), e);
            }
        }
        if (lastOfAny == Long.MIN_VALUE) {
            throw new IllegalArgumentException("the recordings in " + files.values().iterator().next().getParent()
                    + " hold no gdasync event: were they made with gdasync's settings (pingpong --jfr, mprun --jfr, or"
                    + " settings=gdasync.jfc)?");
        }
        return lastOfType != Long.MIN_VALUE ? lastOfType : lastOfAny;
    }

    /**
     * Reads every rank's gdasync events that overlap a window.
     *
     * @param fromNanos the window's start, in nanoseconds since the epoch
     * @param toNanos   its end
     * @return the events, by start time
     * @throws UncheckedIOException if a file cannot be read
     */
    List<TimelineEvent> read(long fromNanos, long toNanos) {
        List<TimelineEvent> out = new ArrayList<>();
        for (Map.Entry<Integer, Path> f : files.entrySet()) {
            try (RecordingFile rf = new RecordingFile(f.getValue())) {
                while (rf.hasMoreEvents()) {
                    RecordedEvent e = rf.readEvent();
                    if (!e.getEventType().getName().startsWith(PREFIX)) {
                        continue;
                    }
                    long start = nanos(e.getStartTime());
                    long end = nanos(e.getEndTime());
                    if (end < fromNanos || start > toNanos) {
                        continue;
                    }
                    out.add(convert(f.getKey(), e, start, end));
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + f.getValue() + ": " + e.getMessage(), e);
            }
        }
        out.sort(Comparator.comparingLong(TimelineEvent::startNanos));
        return out;
    }

    private static TimelineEvent convert(int rank, RecordedEvent e, long start, long end) {
        Map<String, Object> fields = new LinkedHashMap<>();
        for (ValueDescriptor d : e.getFields()) {
            if (!COMMON.contains(d.getName())) {
                Object v = e.getValue(d.getName());
                fields.put(d.getName(), v instanceof Number || v instanceof Boolean || v == null ? v : v.toString());
            }
        }
        RecordedThread t = e.getThread();
        long tid = t == null ? -1 : t.getJavaThreadId();
        String tname = t == null ? "(no thread)" : t.getJavaName() != null ? t.getJavaName() : t.getOSName();
        return new TimelineEvent(rank, e.getEventType().getName(), e.getEventType().getLabel(), tid, tname, start,
                end - start, fields);
    }

    private static long nanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }
}
