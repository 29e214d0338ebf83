package dev.gdasync.libmp.launch;

import dev.gdasync.libmp.cli.CommandLines;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The launcher's settings, read from its command line by {@link LaunchCommand}:
 * {@code [-np N] [--classpath CP] [--jvm-opt OPTION]... [--grace SECONDS] [--netns K] [--jfr DIR] [--proxies] [--mpj] MAIN
 * [ARGS...]}, or
 * {@code --list}.
 *
 * @param ranks     how many ranks to start (-np, default 1)
 * @param netns     over how many network namespaces ("hosts") the ranks are spread (--netns, from 1 to
 *                  {@code min(N, 64)}); 0 without the option: every rank runs in the launcher's namespace
 * @param grace     how long the other ranks may run on after one failed (--grace, default 3 s)
 * @param jvmOpts   extra options for every rank's JVM (--jvm-opt, repeatable), without any class path option
 * @param classpath where the program's classes are, before the launcher's own jars
 * @param app       the program: a short name or a main class (null with --list)
 * @param appArgs   the program's arguments
 * @param list      --list: print the registered short names and exit
 * @param jfr       the folder every rank records its flight recording into ({@code DIR/rank-N.jfr}, --jfr), absolute,
 *                  or null
 * @param proxies   --proxies: start the host's collective proxy beside the ranks (offloaded collectives)
 * @param mpj       --mpj: the program is an MPJ Express (mpiJava 1.2) program, run over gdasync's transport
 *                  ({@link dev.gdasync.libmp.mpj.MpjMain} installs the device; MPJ's jars come from MPJ_HOME)
 */
record LaunchOptions(int ranks, int netns, Duration grace, List<String> jvmOpts, ClassPath classpath, String app,
                     List<String> appArgs, boolean list, Path jfr, boolean proxies, boolean mpj) {
    static final Duration DEFAULT_GRACE = Duration.ofSeconds(3);

    /**
     * Reads a command line, for tests: help and version count as mistakes here.
     *
     * @param env  the environment the class path variables come from
     * @param args the command line
     * @return the options
     * @throws IllegalArgumentException with the one-line message the launcher prints
     */
    static LaunchOptions parse(Map<String, String> env, String... args) {
        LaunchCommand command = new LaunchCommand(env);
        if (!CommandLines.parseOrThrow(command.commandLine(), args)) {
            throw new IllegalArgumentException("help or version asked for");
        }
        return command.options();
    }
}
