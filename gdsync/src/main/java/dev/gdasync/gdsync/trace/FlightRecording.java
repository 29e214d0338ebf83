package dev.gdasync.gdsync.trace;

import jdk.jfr.Recording;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * One rank's flight recording with the project's settings ({@link TraceSettings}), written to
 * {@code DIR/rank-N.jfr} when it stops: what {@code pingpong --jfr DIR} and other programs start in-process, and what
 * {@code scripts/trace DIR} reads. {@code mprun --jfr DIR} makes the same files from JVM options instead
 * ({@link #jvmOption}).
 *
 * <p>Threading: started and stopped by one thread; the events themselves are committed by any thread.
 */
public final class FlightRecording implements AutoCloseable {
    private final Recording recording;
    private final Path file;
    private boolean stopped;

    private FlightRecording(Recording recording, Path file) {
        this.recording = recording;
        this.file = file;
    }

    /**
     * @param rank a rank, 0 or more
     * @return the recording's file name in its folder, {@code rank-N.jfr}
     * @throws IllegalArgumentException if the rank is negative
     */
    public static String fileName(int rank) {
        if (rank < 0) {
            throw new IllegalArgumentException("rank must be 0 or more, not " + rank);
        }
        return "rank-" + rank + ".jfr";
    }

    /**
     * Checks a recording folder: it must be a folder, or not exist yet with a folder as its parent (it is made when a
     * recording starts).
     *
     * @param dir the folder
     * @return the folder, absolute
     * @throws NullPointerException     if the folder is null
     * @throws IllegalArgumentException saying what is wrong with it
     */
    public static Path checkFolder(Path dir) {
        Objects.requireNonNull(dir, "dir must not be null");
        Path abs = dir.toAbsolutePath().normalize();
        if (Files.exists(abs)) {
            if (!Files.isDirectory(abs)) {
                throw new IllegalArgumentException("the recording folder " + abs + " is a file, not a folder");
            }
            if (!Files.isWritable(abs)) {
                throw new IllegalArgumentException("the recording folder " + abs + " is not writable");
            }
            return abs;
        }
        Path parent = abs.getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw new IllegalArgumentException("the recording folder " + abs + " does not exist, nor does its parent folder");
        }
        return abs;
    }

    /**
     * Starts recording every gdasync event into {@code dir/rank-N.jfr}, making the folder if needed.
     *
     * @param dir  the folder (see {@link #checkFolder})
     * @param rank this process's rank
     * @return the recording; {@link #close()} stops it and writes the file
     * @throws NullPointerException     if the folder is null
     * @throws IllegalArgumentException if the folder is unusable or the rank negative
     * @throws UncheckedIOException     if the folder cannot be made
     */
    public static FlightRecording start(Path dir, int rank) {
        Path folder = checkFolder(dir);
        Path file = folder.resolve(fileName(rank));
        try {
            Files.createDirectories(folder);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make the recording folder " + folder + ": " + e.getMessage(), e);
        }
        Recording r = new Recording(TraceSettings.configuration());
        r.setName("gdasync rank " + rank);
        r.setToDisk(true);
        try {
            r.setDestination(file);
        } catch (IOException e) {
            r.close();
            throw new UncheckedIOException("cannot record into " + file + ": " + e.getMessage(), e);
        }
        r.start();
        return new FlightRecording(r, file);
    }

    /**
     * The JVM option that records a rank from its start, as {@code mprun --jfr DIR} passes it: the project's settings
     * file must be in the folder ({@link TraceSettings#write}).
     *
     * @param dir  the folder, absolute
     * @param rank the rank
     * @return {@code -XX:StartFlightRecording:settings=DIR/gdasync.jfc,filename=DIR/rank-N.jfr,dumponexit=true,name=gdasync}
     * @throws NullPointerException     if the folder is null
     * @throws IllegalArgumentException if the rank is negative or the folder's name holds a comma (the option's separator)
     */
    public static String jvmOption(Path dir, int rank) {
        Objects.requireNonNull(dir, "dir must not be null");
        String name = fileName(rank);
        if (dir.toString().contains(",")) {
            throw new IllegalArgumentException("the recording folder's name must not hold a comma: " + dir);
        }
        return "-XX:StartFlightRecording:settings=" + dir.resolve(TraceSettings.FILE_NAME) + ",filename=" + dir.resolve(name)
                + ",dumponexit=true,name=gdasync";
    }

    /** @return the file the recording is written to when it stops */
    public Path file() {
        return file;
    }

    /**
     * Stops the recording and writes its file; a second call does nothing.
     *
     * @throws UncheckedIOException if the file cannot be written
     */
    @Override
    public void close() {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            recording.stop();
        } catch (IllegalStateException e) {
            // stopped already (the JVM is shutting down): the file is written or nothing can be
        } finally {
            recording.close();
        }
        if (!Files.isRegularFile(file)) {
            throw new UncheckedIOException(new IOException("the flight recorder wrote no " + file));
        }
    }
}
