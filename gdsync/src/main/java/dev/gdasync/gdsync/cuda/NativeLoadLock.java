package dev.gdasync.gdsync.cuda;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Serialises, across the processes of a machine, the first load of JCuda's native library.
 *
 * <p>JCuda writes its native library from its jar into {@code java.io.tmpdir} under a fixed name when the file
 * is missing, and loads whatever is there otherwise, without writing it atomically. Ranks started together
 * on a fresh machine race: one loads the file while another is still writing it, and the loader dies of
 * SIGBUS. Holding a lock file in the same folder while the class initialises makes the second process wait
 * until the first has written and loaded the whole library.
 */
final class NativeLoadLock {
    private NativeLoadLock() {
    }

    /**
     * Runs an action while holding the machine-wide lock; without a writable temporary folder, runs it unlocked
     * (JCuda's own write would fail there too, and reports why).
     *
     * @param action what loads the library
     */
    static void run(Runnable action) {
        Path lockFile = Path.of(System.getProperty("java.io.tmpdir"), "gdasync-jcuda-load.lock");
        FileChannel channel;
        try {
            channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (IOException | UnsupportedOperationException e) {
            action.run();
            return;
        }
        try (channel; FileLock ignored = channel.lock()) {
            action.run();
        } catch (IOException e) {
            action.run();
        }
    }
}
