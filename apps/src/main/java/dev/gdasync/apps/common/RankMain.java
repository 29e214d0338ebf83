package dev.gdasync.apps.common;

import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.cli.CommandLines;

import java.util.OptionalInt;

/**
 * The main of a libmp application run by {@code scripts/mprun}: parses the picocli options (the process that speaks
 * for the job, {@link LauncherRank#speaksForJob}, prints usage and errors), checks them, starts the bootstrap and the
 * Mp, runs the application, and exits 2 for bad options, 1 when the application reports a failed check or the rank
 * fails. The libmp applications' mains ({@code collectives}, {@code gabench}, {@code nbc-overlap}, {@code spmv}, and
 * the shmem ones through {@code ShmemMain}) are this one.
 */
public final class RankMain {
    /** A libmp application: a picocli command object with these two steps. */
    public interface App {
        /** @return the object carrying picocli's {@code @Command} and options: the application itself by default */
        default Object command() {
            return this;
        }

        /** @return what is wrong with the options (checked before any rank starts), or null */
        String optionsProblem();

        /**
         * @param boot this rank's bootstrap
         * @param mp   this rank's Mp, started
         * @return whether every check passed
         * @throws Exception a failure of this rank
         */
        boolean run(EnvBootstrap boot, Mp mp) throws Exception;
    }

    private RankMain() {
    }

    /**
     * Runs an application and exits the JVM.
     *
     * @param name   the application's name, for messages
     * @param member what a process of the job is called in messages ("rank", "PE")
     * @param app    the application, its options not parsed yet
     * @param args   the command line
     */
    public static void main(String name, String member, App app, String[] args) {
        boolean speaker = LauncherRank.speaksForJob();
        OptionalInt stop = CommandLines.parse(CommandLines.of(app.command()), args, System.out, System.err, speaker);
        if (stop.isPresent()) {
            System.exit(stop.getAsInt());
        }
        String bad = app.optionsProblem();
        if (bad != null) {
            if (speaker) {
                System.err.println(name + ": " + bad);
            }
            System.exit(2);
        }
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot)) {
            if (!app.run(boot, mp)) {
                System.exit(1);
            }
        } catch (Exception e) {
            System.err.println(name + ": " + member + " failed: " + e);
            System.exit(1);
        }
    }
}
