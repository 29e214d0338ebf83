package dev.gdasync.apps.shmemrun;

import dev.gdasync.apps.common.RankMain;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.shmem.Shmem;

/**
 * The main of a shmem application run by {@code scripts/mprun}: {@link RankMain} with the shmem runtime started on
 * the Mp, its symmetric heap as large as the application asks.
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
        RankMain.main(name, "PE", new AsRankApp(app), args);
    }

    /** The shmem application as a {@link RankMain.App}; picocli reads the options of the wrapped command. */
    private record AsRankApp(App app) implements RankMain.App {
        @Override
        public Object command() {
            return app;
        }

        @Override
        public String optionsProblem() {
            return app.check();
        }

        @Override
        public boolean run(EnvBootstrap boot, Mp mp) throws Exception {
            try (Shmem shmem = Shmem.init(mp, app.heapBytes(mp))) {
                return app.run(shmem);
            }
        }
    }
}
