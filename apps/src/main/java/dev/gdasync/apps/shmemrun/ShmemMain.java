package dev.gdasync.apps.shmemrun;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.shmem.Shmem;

import java.util.OptionalInt;

/**
 * The main of a shmem application run by {@code scripts/mprun}: parses the picocli options (rank 0 speaks), checks
 * them, starts the Mp and the shmem runtime with the heap the application asks for, runs it, and exits 1 when it
 * reports a failed check or a PE fails, 2 for bad options.
 */
public final class ShmemMain {
    /** A shmem application: a picocli command object with these three steps. */
    public interface App {
        /** @return what is wrong with the options, or null */
        String check();

        /**
         * @param mp this PE's Mp, started
         * @return the symmetric heap's size in bytes
         * @throws Exception if the input cannot be read, or the job does not suit the application
         */
        long heapBytes(Mp mp) throws Exception;

        /**
         * @param shmem this PE's runtime
         * @return whether every check passed
         * @throws Exception a failure of this PE
         */
        boolean run(Shmem shmem) throws Exception;
    }

    private ShmemMain() {
    }

    /**
     * Runs an application and exits the JVM.
     *
     * @param name the application's name, for messages
     * @param app  the application, its options not parsed yet
     * @param args the command line
     */
    public static void main(String name, App app, String[] args) {
        boolean speaker = CommandLines.speaksForJob();
        OptionalInt stop = CommandLines.parse(CommandLines.of(app), args, System.out, System.err, speaker);
        if (stop.isPresent()) {
            System.exit(stop.getAsInt());
        }
        String bad = app.check();
        if (bad != null) {
            if (speaker) {
                System.err.println(name + ": " + bad);
            }
            System.exit(2);
        }
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot)) {
            boolean ok;
            try (Shmem shmem = Shmem.init(mp, app.heapBytes(mp))) {
                ok = app.run(shmem);
            }
            if (!ok) {
                System.exit(1);
            }
        } catch (Exception e) {
            System.err.println(name + ": PE failed: " + e);
            System.exit(1);
        }
    }
}
