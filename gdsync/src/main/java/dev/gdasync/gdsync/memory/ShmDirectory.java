package dev.gdasync.gdsync.memory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * This process's directory of shared-memory files for one job.
 *
 * <p>Layout: {@code <base>/gdasync-<user>/job-<job>/p<pid>-<start>-<nonce>/}, every directory 0700 and
 * every file 0600, so only the same user's processes map them. The base is {@code /dev/shm} (or the
 * directory named by {@value #BASE_PROPERTY} / {@value #BASE_ENV}). Closing removes the process
 * directory, and the job directory once it is empty. Opening first removes the directories of dead
 * processes (a crash leaves them behind): a directory is stale when no process has its pid, or the
 * process with that pid started at another time.
 */
public final class ShmDirectory implements AutoCloseable {
    /** System property naming the base directory. */
    public static final String BASE_PROPERTY = "gdasync.shm.dir";
    /** Environment variable naming the base directory. */
    public static final String BASE_ENV = "GDASYNC_SHM_DIR";

    private static final Pattern JOB_ID = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    private static final Pattern PROCESS_DIR = Pattern.compile("p(\\d+)-(\\d+)-([0-9a-f]+)");
    private static final FileAttribute<Set<PosixFilePermission>> DIR_0700 =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
    private static final FileAttribute<Set<PosixFilePermission>> FILE_0600 =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Files are rounded up to a multiple of this many bytes. */
    public static final long PAGE = 4096;
    /** The longest region {@link #allocate} accepts: the largest multiple of {@link #PAGE} a {@code long} holds. */
    public static final long MAX_LENGTH = Long.MAX_VALUE & -PAGE;

    private final Path root;
    private final Path jobDir;
    private final Path processDir;
    private final String jobId;
    private final AtomicLong nextId = new AtomicLong(1);
    private final List<HostRegion> regions = new ArrayList<>();
    private boolean open = true;

    private ShmDirectory(Path root, Path jobDir, Path processDir, String jobId) {
        this.root = root;
        this.jobDir = jobDir;
        this.processDir = processDir;
        this.jobId = jobId;
    }

    /**
     * Opens this process's directory for a job under the default base.
     *
     * @param jobId the job, {@code [A-Za-z0-9_.-]{1,64}}
     * @return the directory
     * @throws IllegalArgumentException if the job id is malformed
     * @throws UncheckedIOException     if the directories cannot be made
     */
    public static ShmDirectory open(String jobId) {
        return open(defaultBase(), jobId);
    }

    /**
     * Opens this process's directory for a job under a base directory, after removing stale
     * directories of dead processes.
     *
     * @param base  the base directory (for example {@code /dev/shm})
     * @param jobId the job, {@code [A-Za-z0-9_.-]{1,64}}
     * @return the directory
     * @throws NullPointerException     if the base or the job id is null
     * @throws IllegalArgumentException if the job id is malformed
     * @throws UncheckedIOException     if the directories cannot be made
     */
    public static ShmDirectory open(Path base, String jobId) {
        Objects.requireNonNull(base, "base must not be null");
        Objects.requireNonNull(jobId, "jobId must not be null");
        if (!JOB_ID.matcher(jobId).matches()) {
            throw new IllegalArgumentException("job id must match [A-Za-z0-9_.-]{1,64}, got '" + jobId + "'");
        }
        Path root = userRoot(base);
        cleanStale(root);
        Path jobDir = root.resolve("job-" + jobId);
        String name = "p" + ProcessHandle.current().pid() + "-" + currentStartMillis() + "-"
                + HexFormat.of().toHexDigits(RANDOM.nextInt());
        // A concurrent cleaner may remove an empty job directory between our mkdir calls: retry.
        for (int attempt = 0; ; attempt++) {
            try {
                createDirectory(root);
                createDirectory(jobDir);
                Path processDir = Files.createDirectory(jobDir.resolve(name), DIR_0700);
                return new ShmDirectory(root, jobDir, processDir, jobId);
            } catch (NoSuchFileException e) {
                if (attempt == 10) {
                    throw new UncheckedIOException("could not create " + jobDir.resolve(name), e);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("could not create " + jobDir.resolve(name), e);
            }
        }
    }

    /** @return the base directory from the property, the environment, {@code /dev/shm} or the temp dir */
    public static Path defaultBase() {
        String configured = System.getProperty(BASE_PROPERTY);
        if (configured == null || configured.isBlank()) {
            configured = System.getenv(BASE_ENV);
        }
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            return shm;
        }
        return Path.of(System.getProperty("java.io.tmpdir"));
    }

    /**
     * @param base a base directory
     * @return the current user's directory under it
     * @throws NullPointerException if the base is null
     */
    public static Path userRoot(Path base) {
        Objects.requireNonNull(base, "base must not be null");
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9_.-]", "_");
        return base.resolve("gdasync-" + user);
    }

    /**
     * Removes the directories of dead processes under a user root, and job directories left empty.
     *
     * @param root a directory from {@link #userRoot(Path)}
     * @return the number of process directories removed
     * @throws NullPointerException if the root is null
     */
    public static int cleanStale(Path root) {
        Objects.requireNonNull(root, "root must not be null");
        if (!Files.isDirectory(root)) {
            return 0;
        }
        int removed = 0;
        try (DirectoryStream<Path> jobs = Files.newDirectoryStream(root, "job-*")) {
            for (Path job : jobs) {
                removed += cleanJob(job);
            }
        } catch (IOException e) {
            // A concurrent cleaner may remove what we list; the next open tries again.
        }
        return removed;
    }

    private static int cleanJob(Path job) throws IOException {
        int removed = 0;
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(job)) {
            for (Path p : processes) {
                Matcher m = PROCESS_DIR.matcher(p.getFileName().toString());
                if (m.matches() && !isAlive(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)))) {
                    deleteTree(p);
                    removed++;
                }
            }
        } catch (NoSuchFileException e) {
            return removed;
        }
        deleteIfEmpty(job);
        return removed;
    }

    /**
     * Removes the directory a process of a job left when it died (a survivor that saw it die calls this, so a
     * killed rank's shared memory does not wait for the next process to open a NIC), and its job's directory when
     * that is left empty. Nothing is removed while the process is alive, nor anything that is not a process
     * directory of this layout ({@code job-<id>/p<pid>-<start>-<random>}) of that very pid.
     *
     * @param processDirectory the dead process's directory, as its endpoints named it
     * @param pid              its pid
     * @param startMillis      its start time, or 0 if unknown
     * @return whether the directory is gone now
     */
    public static boolean removeDeadProcess(Path processDirectory, long pid, long startMillis) {
        Objects.requireNonNull(processDirectory, "processDirectory must not be null");
        Matcher m = PROCESS_DIR.matcher(String.valueOf(processDirectory.getFileName()));
        Path job = processDirectory.getParent();
        if (!m.matches() || Long.parseLong(m.group(1)) != pid || job == null
                || !String.valueOf(job.getFileName()).startsWith("job-") || isAlive(pid, startMillis)) {
            return false;
        }
        try {
            deleteTree(processDirectory);
        } catch (IOException | RuntimeException e) {
            return false; // the next process that opens a NIC cleans it
        }
        deleteIfEmpty(job);
        return !Files.exists(processDirectory);
    }

    /**
     * Whether a process is alive: it runs (a killed process its parent has not reaped yet does not) and, when both
     * start times are known, started when recorded.
     *
     * @param pid         the pid
     * @param startMillis its recorded start time, or 0 if unknown
     * @return whether it is the same live process
     */
    public static boolean isAlive(long pid, long startMillis) {
        Optional<ProcessHandle> h = ProcessHandle.of(pid);
        if (h.isEmpty() || !ProcessLiveness.isRunning(h.get())) {
            return false;
        }
        if (startMillis == 0) {
            return true;
        }
        Optional<Instant> start = h.get().info().startInstant();
        return start.isEmpty() || start.get().toEpochMilli() == startMillis;
    }

    /** @return this process's start time in epoch milliseconds, or 0 if unknown */
    public static long currentStartMillis() {
        return ProcessHandle.current().info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    }

    /** @return the job's id */
    public String jobId() {
        return jobId;
    }

    /** @return the job's directory */
    public Path jobDirectory() {
        return jobDir;
    }

    /** @return this process's directory */
    public Path processDirectory() {
        return processDir;
    }

    /** @return the user root all jobs live under */
    public Path root() {
        return root;
    }

    /**
     * Allocates a host region in a new shared-memory file. The region is exactly {@code bytes} long; its file
     * (and mapping) is rounded up to a whole page, and the bytes past the region's end are not part of it.
     *
     * <p>The shared-memory file system's free space is checked before anything is written: a length it cannot
     * hold is refused at once, with no file left behind, instead of writing zeros until the memory is full.
     *
     * @param bytes the length, {@code > 0} and at most {@link #MAX_LENGTH}
     * @return the region, zero-filled
     * @throws IllegalArgumentException if the length is not positive, or too large to round up to a whole page
     * @throws IllegalStateException    if the directory is closed
     * @throws UncheckedIOException     if the shared-memory file system has less free space than the rounded
     *                                  length (the message names the length, the free space and the directory),
     *                                  or the file cannot be made; no file is left behind
     */
    public HostRegion allocate(long bytes) {
        long size = pageRound(bytes, "region length");
        synchronized (this) {
            requireOpen();
        }
        requireSpace(processDir, bytes, size);
        long id;
        synchronized (this) {
            requireOpen();
            id = nextId.getAndIncrement();
        }
        Path file = processDir.resolve("region-" + id);
        Arena arena = Arena.ofShared();
        try {
            MemorySegment mapping = createAndMap(file, size, arena);
            HostRegion region = new HostRegion(id, file, arena, mapping.asSlice(0, bytes), this);
            synchronized (this) {
                if (!open) {
                    region.close();
                    throw new IllegalStateException("shared-memory directory " + processDir + " is closed");
                }
                regions.add(region);
            }
            return region;
        } catch (RuntimeException e) {
            if (arena.scope().isAlive()) {
                arena.close();
            }
            throw e;
        }
    }

    /**
     * Rounds a length up to a whole page, refusing lengths that are not positive or whose rounding would not
     * fit in a {@code long}.
     *
     * @param bytes a length
     * @param what  what the length is, for the message
     * @return the length rounded up to a multiple of {@link #PAGE}
     * @throws IllegalArgumentException if the length is not positive or larger than {@link #MAX_LENGTH}
     */
    static long pageRound(long bytes, String what) {
        if (bytes <= 0) {
            throw new IllegalArgumentException(what + " must be > 0, got " + bytes);
        }
        if (bytes > MAX_LENGTH) {
            throw new IllegalArgumentException(what + " " + bytes + " bytes is too large: rounded up to a whole page ("
                    + PAGE + " bytes) it would exceed the largest file length, " + MAX_LENGTH + " bytes");
        }
        return (bytes + PAGE - 1) & -PAGE;
    }

    /**
     * Refuses a file the shared-memory file system cannot hold, before anything is written. Another process
     * may take the space between this check and the writes; those then fail with ENOSPC and the file is removed.
     * A file system that cannot say its free space is not checked here.
     */
    private static void requireSpace(Path dir, long bytes, long size) {
        long usable;
        try {
            usable = Files.getFileStore(dir).getUsableSpace();
        } catch (IOException e) {
            return; // unknown: the zero writes find out
        }
        if (size > usable) {
            String rounded = size == bytes ? "" : " (" + size + " bytes rounded up to whole pages)";
            String message = "cannot allocate " + bytes + " bytes" + rounded + " of shared memory in " + dir
                    + ": its file system has only " + usable + " bytes free";
            throw new UncheckedIOException(message, new IOException("not enough free space: " + usable + " bytes free, "
                    + size + " bytes needed"));
        }
    }

    /**
     * Reserves a region id that no region of this directory has or will get: for regions whose bytes live
     * elsewhere (device memory) but that share the id space of the files here.
     *
     * @return the id
     * @throws IllegalStateException if the directory is closed
     */
    public synchronized long reserveRegionId() {
        requireOpen();
        return nextId.getAndIncrement();
    }

    /**
     * Creates a new 0600 file in this process's directory and maps it read-write. The file system's free space
     * is checked first, as for {@link #allocate}.
     *
     * @param name  the file name: a plain name, not a path
     * @param bytes its size, {@code > 0}
     * @param arena the arena owning the mapping
     * @return the mapping, zero-filled
     * @throws NullPointerException     if the name or the arena is null
     * @throws IllegalArgumentException if the name is not a plain file name, or the size is not positive
     * @throws IllegalStateException    if the directory is closed
     * @throws UncheckedIOException     if the file exists, the file system has less free space than the size, or
     *                                  the file cannot be made; no file is left behind except one that existed
     */
    public MemorySegment createFile(String name, long bytes, Arena arena) {
        Objects.requireNonNull(arena, "arena must not be null");
        Path file = file(name);
        if (bytes <= 0) {
            throw new IllegalArgumentException("file size must be > 0, got " + bytes);
        }
        synchronized (this) {
            requireOpen();
        }
        requireSpace(processDir, bytes, bytes);
        return createAndMap(file, bytes, arena);
    }

    /**
     * @param name a file name: a plain name, not a path
     * @return its path in this process's directory
     * @throws NullPointerException     if the name is null
     * @throws IllegalArgumentException if the name is empty, {@code .} or {@code ..}, or holds a separator
     */
    public Path file(String name) {
        Objects.requireNonNull(name, "name must not be null");
        if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0
                || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("name must be a plain file name, got '" + name + "'");
        }
        return processDir.resolve(name);
    }

    /**
     * Maps an existing file, typically a peer's, read-write or read-only.
     *
     * @param path     the file
     * @param writable whether to map it writable
     * @param arena    the arena owning the mapping
     * @return the mapping of the whole file
     * @throws NullPointerException if the path or the arena is null
     * @throws UncheckedIOException if the file cannot be opened
     */
    public static MemorySegment mapExisting(Path path, boolean writable, Arena arena) {
        Objects.requireNonNull(path, "path must not be null");
        Objects.requireNonNull(arena, "arena must not be null");
        try (FileChannel ch = writable
                ? FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)
                : FileChannel.open(path, StandardOpenOption.READ)) {
            return ch.map(writable ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
        } catch (IOException e) {
            throw new UncheckedIOException("could not map " + path, e);
        }
    }

    private static MemorySegment createAndMap(Path file, long bytes, Arena arena) {
        try {
            Files.createFile(file, FILE_0600);
        } catch (FileAlreadyExistsException e) {
            throw new UncheckedIOException("shared-memory file " + file + " already exists", e);
        } catch (IOException e) {
            throw new UncheckedIOException("could not create shared-memory file " + file, e);
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            // Write zeros rather than extend a sparse file: on a full tmpfs the write fails here with
            // ENOSPC, where touching a sparse mapping later would kill the process with SIGBUS.
            ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(bytes, 1 << 20));
            for (long pos = 0; pos < bytes; ) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), bytes - pos));
                pos += ch.write(zeros, pos);
            }
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena);
        } catch (IOException e) {
            deleteQuietly(file);
            throw new UncheckedIOException("could not size or map shared-memory file " + file
                    + " to " + bytes + " bytes (is the shared-memory file system full?)", e);
        } catch (RuntimeException | Error e) {
            deleteQuietly(file); // no empty or partial file is left behind, whatever failed
            throw e;
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // the original failure is the one to report
        }
    }

    private void requireOpen() {
        if (!open) {
            throw new IllegalStateException("shared-memory directory " + processDir + " is closed");
        }
    }

    /**
     * Closes every region allocated here, removes this process's directory and, if it is then empty,
     * the job directory. Closing twice does nothing.
     */
    @Override
    public void close() {
        List<HostRegion> toClose;
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
            toClose = new ArrayList<>(regions);
            regions.clear();
        }
        for (HostRegion r : toClose) {
            r.close();
        }
        try {
            deleteTree(processDir);
            deleteIfEmpty(jobDir);
        } catch (IOException e) {
            throw new UncheckedIOException("could not remove " + processDir, e);
        }
    }

    /**
     * Forgets a region closed by its user, so that close does not close it again.
     *
     * @param region the region
     */
    synchronized void forget(HostRegion region) {
        regions.remove(region);
    }

    private static void createDirectory(Path dir) throws IOException {
        try {
            Files.createDirectory(dir, DIR_0700);
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir)) {
                throw e;
            }
        }
    }

    private static void deleteIfEmpty(Path dir) {
        try {
            Files.deleteIfExists(dir);
        } catch (DirectoryNotEmptyException e) {
            // still used by another process of the job
        } catch (IOException e) {
            // another process removed or is using it
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (NoSuchFileException e) {
            // removed concurrently
        } catch (UncheckedIOException e) {
            // The walk met an entry that another cleaner removed meanwhile: what is left, it removes.
            if (!(e.getCause() instanceof NoSuchFileException)) {
                throw e.getCause();
            }
        }
    }

    @Override
    public String toString() {
        return "ShmDirectory{" + processDir + "}";
    }
}
