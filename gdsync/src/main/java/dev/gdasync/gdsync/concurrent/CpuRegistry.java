package dev.gdasync.gdsync.concurrent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
    /** A directory is listed again after this long even if its time says unchanged (file systems with coarse times). */
    private static final long RELIST_NANOS = 1_000_000_000L;

    private final Path dir;
    /** The live processes' files as last parsed, by file name; guarded by this. */
    private final Map<String, Known> known = new HashMap<>();
    /** The directory's modification time when it was last listed, or null to list it at the next read. */
    private FileTime listed;
    /** When it was last listed ({@link System#nanoTime()}). */
    private long listedAt;

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
     * The entries of live processes; the files of processes that are gone, and unreadable ones, are removed.
     *
     * <p>The watcher of every rank's process calls this ten times a second, so a read that finds the directory as the
     * last one left it (its modification time unchanged: every write and removal is a rename or unlink there; and
     * listed less than a second ago, for file systems whose times are coarse) reuses
     * the entries it parsed then and only asks each process whether it still runs: one read of {@code /proc/<pid>/stat}
     * per entry, through the {@link ProcessHandle} kept from its first sighting (which compares the start time too, so
     * a reused pid does not pass for the process). A full read lists the directory and reads the files.
     *
     * @return the entries of live processes
     */
    public synchronized List<CpuShareEntry> read() {
        List<CpuShareEntry> out = new ArrayList<>();
        FileTime stamp;
        try {
            stamp = Files.getLastModifiedTime(dir);
        } catch (IOException e) {
            known.clear();
            listed = null;
            return out; // no directory: nothing registered
        }
        long now = System.nanoTime();
        if (!stamp.equals(listed) || now - listedAt > RELIST_NANOS) {
            relist(stamp);
            listedAt = now;
        }
        for (var it = known.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            Known k = e.getValue();
            if (!k.process().isAlive()) {
                it.remove();
                remove(k.entry().pid(), k.startMillis());
                listed = null; // the removal changed the directory: read it whole next time
                continue;
            }
            out.add(k.entry());
        }
        return out;
    }

    /** Lists the directory and parses every file, keeping what the last listing parsed for files still there. */
    private void relist(FileTime stamp) {
        Map<String, Known> now = new HashMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "p*")) {
            for (Path f : files) {
                String fileName = f.getFileName().toString();
                Matcher m = FILE.matcher(fileName);
                if (!m.matches()) {
                    continue;
                }
                long pid = Long.parseLong(m.group(1));
                long start = Long.parseLong(m.group(2));
                Optional<ProcessHandle> process = live(pid, start);
                if (process.isEmpty()) {
                    remove(pid, start);
                    continue;
                }
                try {
                    now.put(fileName, new Known(process.get(), start, CpuShareEntry.parse(Files.readString(f))));
                } catch (NoSuchFileException e) {
                    // removed since it was listed
                } catch (IOException | IllegalArgumentException e) {
                    // a torn or foreign file counts nothing
                }
            }
        } catch (IOException e) {
            // the directory went away while listed: nothing registered
        }
        known.clear();
        known.putAll(now);
        listed = stamp;
    }

    /**
     * @param pid         a pid
     * @param startMillis the start time recorded with it
     * @return whether that process is still running
     */
    static boolean isAlive(long pid, long startMillis) {
        return live(pid, startMillis).isPresent();
    }

    /** @return the running process with that pid and start time, if it runs */
    private static Optional<ProcessHandle> live(long pid, long startMillis) {
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .filter(h -> h.info().startInstant().map(s -> Math.abs(s.toEpochMilli() - startMillis) <= START_SLACK_MILLIS)
                        .orElse(true));
    }

    /** A file of a live process as the last listing parsed it, with the handle that tells whether it still runs. */
    private record Known(ProcessHandle process, long startMillis, CpuShareEntry entry) {
    }

    private static String name(long pid, long startMillis) {
        return "p" + pid + "-" + startMillis;
    }
}
