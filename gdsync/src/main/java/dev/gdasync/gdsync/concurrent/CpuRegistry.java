package dev.gdasync.gdsync.concurrent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The gdasync processes of this host that share its CPUs: a directory (under the user's shared-memory root,
 * {@code <base>/gdasync-<user>/cpu-share/}) holding one small file per process, {@code p<pid>-<start>}, whose one
 * line is its {@link CpuShareEntry}. A process writes its file whole (a temporary file moved into place) when its
 * ranks or pins change and removes it when it has no rank left; readers skip, and remove, the files of processes
 * that are gone, so a killed process's line does not outlive it.
 */
public final class CpuRegistry {
    private static final Pattern FILE = Pattern.compile("p(\\d+)-(\\d+)");
    /** A recorded start time and the live process's may differ by rounding: this much is the same start. */
    private static final long START_SLACK_MILLIS = 1000;

    private final Path dir;

    /**
     * @param dir the registry's directory; made on the first write
     */
    public CpuRegistry(Path dir) {
        this.dir = Objects.requireNonNull(dir, "dir must not be null");
    }

    /** @return the directory */
    public Path dir() {
        return dir;
    }

    /**
     * Writes a process's entry, replacing its previous one.
     *
     * @param e the entry
     * @throws UncheckedIOException if the file cannot be written
     */
    public void write(CpuShareEntry e) {
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            Path file = dir.resolve(name(e.pid(), e.startMillis()));
            Path tmp = Files.createTempFile(dir, ".tmp-" + e.pid() + "-", "",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try {
                Files.writeString(tmp, e.format() + "\n");
                try {
                    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException x) {
                    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException x) {
            throw new UncheckedIOException("could not write the CPU share registry entry in " + dir + ": " + x, x);
        }
    }

    /**
     * Removes a process's entry, if there is one.
     *
     * @param pid         the process
     * @param startMillis its start
     */
    public void remove(long pid, long startMillis) {
        try {
            Files.deleteIfExists(dir.resolve(name(pid, startMillis)));
        } catch (IOException e) {
            // a reader removes it once the process is gone
        }
    }

    /**
     * @return the entries of live processes; the files of processes that are gone, and unreadable ones, are removed
     */
    public List<CpuShareEntry> read() {
        List<CpuShareEntry> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "p*")) {
            for (Path f : files) {
                Matcher m = FILE.matcher(f.getFileName().toString());
                if (!m.matches()) {
                    continue;
                }
                long pid = Long.parseLong(m.group(1));
                long start = Long.parseLong(m.group(2));
                if (!isAlive(pid, start)) {
                    remove(pid, start);
                    continue;
                }
                try {
                    out.add(CpuShareEntry.parse(Files.readString(f)));
                } catch (NoSuchFileException e) {
                    // removed since it was listed
                } catch (IOException | IllegalArgumentException e) {
                    // a torn or foreign file counts nothing
                }
            }
        } catch (IOException e) {
            // the directory went away while listed: nothing registered
        }
        return out;
    }

    /**
     * @param pid         a pid
     * @param startMillis the start time recorded with it
     * @return whether that process is still running
     */
    static boolean isAlive(long pid, long startMillis) {
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .map(h -> h.info().startInstant().map(s -> Math.abs(s.toEpochMilli() - startMillis) <= START_SLACK_MILLIS)
                        .orElse(true))
                .orElse(false);
    }

    private static String name(long pid, long startMillis) {
        return "p" + pid + "-" + startMillis;
    }
}
