package dev.gdasync.libmp.launch;

import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.trace.TraceSettings;
import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.proxy.CollProxy;
import picocli.CommandLine;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * {@code mprun}: starts the ranks of a Java program as JVMs on this host, for
 * {@link dev.gdasync.libmp.bootstrap.EnvBootstrap}.
 *
 * <pre>
 * mprun [-np N] [--classpath CP] [--jvm-opt OPTION]... [--grace SECONDS] [--netns K] [--jfr DIR] [--proxies] [--mpj] MAIN [ARGS...]
 * </pre>
 * MAIN is any main class (with or without a package) on CP or on the launcher's class path, or a short name from a
 * {@code META-INF/gdasync-apps.properties} there. The launcher runs as {@code scripts/mprun} (with the
 * project's applications), or from the jars alone as {@code java -jar libmp-VERSION-launcher.jar}. Each output
 * line of a rank is prefixed with {@code [rank]}, stdout to stdout and stderr to stderr. The exit status is 0
 * when every rank exited with 0, else the first failed rank's status; 2 for a wrong command line. With
 * {@code --netns K} the ranks are spread over K network namespaces made by {@code scripts/netns} (see
 * {@link NetNamespaces}); when they cannot be made (not root, no {@code ip}) the launcher says why and exits
 * with 1 before starting any rank. With {@code --proxies} it first starts the host's collective proxy
 * ({@link CollProxy}), one per host with {@code --netns}, and the ranks' {@code Collectives.open} use it; the
 * proxy's lines are prefixed {@code [proxy]} ({@code [proxy hK]} with several hosts), and it is stopped once every
 * rank has ended. With {@code --mpj} the program is an MPJ Express program: every rank runs it through
 * {@code dev.gdasync.libmp.mpj.MpjMain}, with MPJ's jars from {@code MPJ_HOME}, and its MPI calls go over gdasync (docs/mpj.md).
 */
public final class MpRun {
    /** The main class of an MPJ program's ranks (named, not loaded: MPJ's jars are not on the launcher's class path). */
    static final String MPJ_MAIN = "dev.gdasync.libmp.mpj.MpjMain";

    private MpRun() {
    }

    /**
     * Runs the launcher and exits with its status.
     *
     * @param args the command line
     * @throws InterruptedException if interrupted while the ranks run
     */
    public static void main(String[] args) throws InterruptedException {
        System.exit(run(args, System.getenv(), System.out, System.err));
    }

    /**
     * Runs the launcher.
     *
     * @param args the command line
     * @param env  the environment (the class path variables)
     * @param out  where the ranks' standard output goes
     * @param err  where the ranks' standard error and the launcher's messages go
     * @return the exit status
     */
    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) throws InterruptedException {
        LaunchCommand command = new LaunchCommand(env);
        CommandLine cl = command.commandLine();
        OptionalInt stop = CommandLines.parse(cl, args, out, err, true);
        if (stop.isPresent()) {
            return stop.getAsInt();
        }
        LaunchOptions options = command.options();
        List<URL> urls;
        try {
            urls = options.classpath().urls();
        } catch (IllegalArgumentException e) {
            return usageError(cl, err, e.getMessage());
        }
        String mainClass;
        try (URLClassLoader loader = new URLClassLoader("mprun-program", urls.toArray(URL[]::new), MpRun.class.getClassLoader())) {
            AppRegistry registry = AppRegistry.load(loader);
            if (options.list()) {
                if (registry.apps().isEmpty()) {
                    out.println("no program is known by a short name here; run one by its main class");
                }
                for (Map.Entry<String, String> e : registry.apps().entrySet()) {
                    out.println(e.getKey() + "\t" + e.getValue());
                }
                return 0;
            }
            mainClass = registry.resolve(options.app(), options.classpath());
        } catch (IllegalArgumentException | IllegalStateException e) {
            return usageError(cl, err, e.getMessage());
        } catch (IOException e) {
            err.println("mprun: " + e.getMessage());
            return 1;
        }
        List<String> netnsExec = List.of();
        if (options.netns() > 0) {
            try {
                netnsExec = NetNamespaces.ensureUp(options.netns());
            } catch (IllegalStateException e) {
                err.println("mprun: --netns " + options.netns() + ": " + e.getMessage());
                return 1;
            }
        }
        if (options.jfr() != null) {
            try {
                Files.createDirectories(options.jfr());
                TraceSettings.write(options.jfr());
            } catch (IOException | UncheckedIOException e) {
                err.println("mprun: --jfr " + options.jfr() + ": " + e.getMessage());
                return 1;
            }
        }
        String mpjClassPath = null;
        if (options.mpj()) {
            try {
                mpjClassPath = mpjClassPath(env);
            } catch (IllegalStateException e) {
                err.println("mprun: --mpj: " + e.getMessage());
                return 1;
            }
        }
        Path shmBase = shmBase(options.jvmOpts());
        List<String> proxy = List.of();
        if (options.proxies()) {
            List<String> c = new ArrayList<>(rankCommand(options, CollProxy.class.getName()));
            c.subList(c.size() - options.appArgs().size(), c.size()).clear();
            proxy = c;
        }
        return new Job(options, rankCommand(options, mainClass, mpjClassPath), proxy, shmBase, netnsExec, out, err).run();
    }

    private static int usageError(CommandLine cl, PrintStream err, String message) {
        err.println("mprun: " + message);
        err.println(CommandLines.hint(cl));
        return CommandLines.USAGE_ERROR;
    }

    /**
     * @return every rank's JVM command line: this JVM's java binary, native access for FFM, the launcher's
     *         shared-memory setting, the --jvm-opt options, the program's class path then the launcher's, the main
     *         class and the program's arguments
     */
    static List<String> rankCommand(LaunchOptions options, String mainClass) {
        return rankCommand(options, mainClass, null);
    }

    /**
     * @param mpjClassPath MPJ Express's jars (with --mpj), or null
     * @return every rank's JVM command line, as {@link #rankCommand(LaunchOptions, String)}; with MPJ's jars, they
     *         follow the program's class path and the rank runs {@code dev.gdasync.libmp.mpj.MpjMain} with the main class as its first
     *         argument
     */
    static List<String> rankCommand(LaunchOptions options, String mainClass, String mpjClassPath) {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> jvm = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED"));
        String launcherBase = System.getProperty(ShmDirectory.BASE_PROPERTY);
        if (launcherBase != null && !launcherBase.isBlank() && shmBaseOption(options.jvmOpts()) == null) {
            jvm.add("-D" + ShmDirectory.BASE_PROPERTY + "=" + launcherBase); // the ranks use the launcher's setting
        }
        jvm.addAll(options.jvmOpts());
        String own = System.getProperty("java.class.path");
        String cp = options.classpath().isEmpty() ? own : options.classpath().joined() + File.pathSeparator + own;
        if (mpjClassPath != null) {
            cp = options.classpath().isEmpty() ? mpjClassPath + File.pathSeparator + own
                    : options.classpath().joined() + File.pathSeparator + mpjClassPath + File.pathSeparator + own;
            jvm.addAll(List.of("-cp", cp, MPJ_MAIN, mainClass));
        } else {
            jvm.addAll(List.of("-cp", cp, mainClass));
        }
        jvm.addAll(options.appArgs());
        return jvm;
    }

    /**
     * @param env the launcher's environment
     * @return MPJ Express's jars that an MPJ program over gdasync needs: {@code $MPJ_HOME/lib/mpj.jar} (MPJ's mpi,
     *         mpjdev, mpjbuf and xdev layers) and the log4j 1.2 its {@code MPI.Init} uses
     * @throws IllegalStateException if MPJ_HOME is not set or lacks one of them
     */
    static String mpjClassPath(Map<String, String> env) {
        String home = env.get("MPJ_HOME");
        if (home == null || home.isBlank()) {
            throw new IllegalStateException("MPJ_HOME is not set: MPJ programs run MPJ Express's own layers from "
                    + "$MPJ_HOME/lib (scripts/mprun sets it; Debian's libmpj-java package provides MPJ Express)");
        }
        List<String> jars = new ArrayList<>();
        for (String name : List.of("mpj.jar", "log4j-1.2.jar")) {
            Path jar = Path.of(home, "lib", name);
            if (!Files.isRegularFile(jar)) {
                throw new IllegalStateException("MPJ_HOME=" + home + " has no lib/" + name
                        + " (scripts/lib/common.sh's ensure_mpj builds a complete MPJ_HOME)");
            }
            jars.add(jar.toString());
        }
        return String.join(File.pathSeparator, jars);
    }

    /** @return the shared-memory base the ranks will use: a -D option of theirs, else this JVM's setting */
    static Path shmBase(List<String> jvmOpts) {
        String option = shmBaseOption(jvmOpts);
        return option != null ? Path.of(option) : ShmDirectory.defaultBase();
    }

    private static String shmBaseOption(List<String> jvmOpts) {
        String prefix = "-D" + ShmDirectory.BASE_PROPERTY + "=";
        String found = null;
        for (String o : jvmOpts) {
            if (o.startsWith(prefix) && !o.substring(prefix.length()).isBlank()) {
                found = o.substring(prefix.length());
            }
        }
        return found;
    }
}
