package dev.gdasync.libmp.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * An output file named on a command line, checked when the command line is read, before any work starts: its
 * folder exists and is writable, and the file, if it exists, is a writable regular file. Nothing is created: a
 * missing folder is an error, not a folder made on the spot.
 */
public final class OutputFile implements ITypeConverter<Path> {
    /** Made by picocli. */
    public OutputFile() {
    }

    @Override
    public Path convert(String value) {
        try {
            return check(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }

    /**
     * Checks that a file can be written.
     *
     * @param value the name as given
     * @return the path
     * @throws IllegalArgumentException saying what is wrong, with the name as given
     */
    public static Path check(String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("an empty file name");
        }
        Path file;
        try {
            file = Path.of(value);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("'" + value + "' is not a valid path (" + e.getReason() + ")");
        }
        Path absolute = file.toAbsolutePath().normalize();
        if (Files.isDirectory(absolute)) {
            throw new IllegalArgumentException("'" + value + "' is a folder, not a file");
        }
        if (Files.exists(absolute)) {
            if (!Files.isRegularFile(absolute)) {
                throw new IllegalArgumentException("'" + value + "' exists and is not a regular file");
            }
            if (!Files.isWritable(absolute)) {
                throw new IllegalArgumentException("'" + value + "' exists and is not writable");
            }
            return file;
        }
        Path folder = absolute.getParent();
        if (folder == null || !Files.exists(folder)) {
            throw new IllegalArgumentException("cannot write '" + value + "': the folder " + folder + " does not exist");
        }
        if (!Files.isDirectory(folder)) {
            throw new IllegalArgumentException("cannot write '" + value + "': " + folder + " is not a folder");
        }
        if (!Files.isWritable(folder)) {
            throw new IllegalArgumentException("cannot write '" + value + "': the folder " + folder + " is not writable");
        }
        return file;
    }
}
