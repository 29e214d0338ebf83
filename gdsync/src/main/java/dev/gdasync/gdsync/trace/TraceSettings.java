package dev.gdasync.gdsync.trace;

import jdk.jfr.Configuration;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.Objects;

/**
 * The project's flight-recorder settings file ({@code gdasync.jfc}): every gdasync event enabled, without stack
 * traces or thresholds, and the JVM's garbage collections. The events are disabled by default, so a recording made
 * with the JDK's own settings leaves them out; this file turns them on. {@code mprun --jfr DIR} writes it into DIR
 * and starts every rank with {@code -XX:StartFlightRecording:settings=DIR/gdasync.jfc}; a program that records
 * itself uses {@link #configuration()}.
 */
public final class TraceSettings {
    /** The settings file's name, as {@link #write} writes it. */
    public static final String FILE_NAME = "gdasync.jfc";

    private TraceSettings() {
    }

    /** @return the settings file's text */
    public static String text() {
        try (InputStream in = TraceSettings.class.getResourceAsStream(FILE_NAME)) {
            if (in == null) {
                throw new IllegalStateException(FILE_NAME + " is missing from the gdsync jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + FILE_NAME + " from the gdsync jar", e);
        }
    }

    /**
     * Writes the settings file into a folder.
     *
     * @param dir the folder (it must exist)
     * @return the file written, {@code dir/gdasync.jfc}
     * @throws NullPointerException if the folder is null
     * @throws UncheckedIOException if it cannot be written
     */
    public static Path write(Path dir) {
        Objects.requireNonNull(dir, "dir must not be null");
        Path file = dir.resolve(FILE_NAME);
        try {
            Files.writeString(file, text(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
        return file;
    }

    /** @return the settings as a configuration for {@link jdk.jfr.Recording#Recording(Configuration)} */
    public static Configuration configuration() {
        try {
            return Configuration.create(new StringReader(text()));
        } catch (IOException | ParseException e) {
            throw new IllegalStateException("the gdsync jar's " + FILE_NAME + " is not a valid settings file: " + e.getMessage(), e);
        }
    }
}
