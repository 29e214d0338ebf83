package dev.gdasync.gdsync.memory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Whether a process still runs. {@link ProcessHandle#isAlive()} is true for a process that was killed and is still
 * tearing down its memory, and for a zombie (killed, not yet reaped by its parent): neither will touch shared memory
 * or answer a peer again. On Linux {@code /proc/<pid>/stat} says so: the state {@code Z} (or {@code X} while it is
 * being removed), or the kernel's exiting flag ({@code PF_EXITING}) in the flags field while it exits.
 */
public final class ProcessLiveness {
    private static final boolean PROCFS = Files.isDirectory(Path.of("/proc/self"));
    /** The kernel's per-task flag set once a task has begun to exit. */
    private static final long PF_EXITING = 0x4;

    private ProcessLiveness() {
    }

    /**
     * @param process a process
     * @return whether it exists and is neither a zombie nor being removed
     */
    public static boolean isRunning(ProcessHandle process) {
        Objects.requireNonNull(process, "process must not be null");
        return process.isAlive() && !hasEnded(process.pid());
    }

    /** @return whether {@code /proc} shows the process ended (gone, zombie, dead); false where it cannot tell */
    static boolean hasEnded(long pid) {
        if (!PROCFS) {
            return false;
        }
        String stat;
        try {
            stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        } catch (NoSuchFileException e) {
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
        // "pid (comm) state ppid pgrp session tty_nr tpgid flags ...": the name may hold spaces and parentheses, so
        // the fields are counted from the last ')'.
        int close = stat.lastIndexOf(')');
        if (close < 0 || close + 2 >= stat.length()) {
            return false;
        }
        String[] fields = stat.substring(close + 2).split(" ", 8);
        char state = fields[0].isEmpty() ? '?' : fields[0].charAt(0);
        if (state == 'Z' || state == 'X' || state == 'x') {
            return true;
        }
        if (fields.length >= 7) {
            try {
                return (Long.parseUnsignedLong(fields[6]) & PF_EXITING) != 0;
            } catch (NumberFormatException e) {
                return false;
            }
        }
        return false;
    }
}
