package dev.gdasync.gdsync.memory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Whether a process still runs. {@link ProcessHandle#isAlive()} is true for a zombie: a process that was killed
 * but not yet reaped by its parent, which will never touch shared memory or answer a peer again. On Linux its
 * state in {@code /proc/<pid>/stat} says so ({@code Z}, or {@code X} while it is being removed).
 */
public final class ProcessLiveness {
    private static final boolean PROCFS = Files.isDirectory(Path.of("/proc/self"));

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
        // "pid (comm) S ...": the name may hold spaces and parentheses, so the state follows the last ')'.
        int close = stat.lastIndexOf(')');
        if (close < 0 || close + 2 >= stat.length()) {
            return false;
        }
        char state = stat.charAt(close + 2);
        return state == 'Z' || state == 'X' || state == 'x';
    }
}
