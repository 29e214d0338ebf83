package dev.gdasync.libmp.launch;

import dev.gdasync.gdsync.trace.FlightRecording;
import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.cli.ProjectVersion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The launcher's command line as picocli reads it; {@link #options()} turns it into {@link LaunchOptions}.
 * Everything after MAIN belongs to the program, options included.
 */
@Command(name = "mprun", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class, sortOptions = false,
        usageHelpAutoWidth = false,
        description = {"Starts N ranks of a Java program as JVMs on this host, joined by the environment bootstrap "
                + "(GDASYNC_RANK, GDASYNC_SIZE, GDASYNC_RENDEZVOUS, GDASYNC_SECRET, GDASYNC_JOB_ID), prints their "
                + "output line by line prefixed with [rank], stops the others when one fails and exits with its status."},
        parameterListHeading = "%nParameters:%n",
        optionListHeading = "%nOptions:%n",
        footer = {"", "The class path of the ranks is CP (else the variable GDASYNC_CLASSPATH, else CLASSPATH) followed by "
                + "the launcher's own jars. Exit status: 0 when every rank exited with 0, else the first failed rank's; 2 for "
                + "a wrong command line; 130 after Ctrl-C.",
                "",
                "Examples:",
                "  mprun -np 2 --classpath target/classes demo.HelloExchange",
                "  mprun -np 4 --mpj --classpath app.jar my.MpiMain",
                "  java -jar libmp-launcher.jar -np 4 -cp app.jar:lib/* org.example.Main --steps 10"})
final class LaunchCommand implements CommandLines.Checked {
    /** The longest grace period, in seconds. */
    static final int MAX_GRACE_SECONDS = 3600;
    /** The most ranks one launcher starts. */
    static final int MAX_RANKS = 4096;

    @Option(names = {"-np", "-n"}, paramLabel = "N", converter = RanksConverter.class,
            description = "how many ranks to start on this host (default 1)")
    int ranks = 1;

    @Option(names = {"-cp", "--classpath", "--class-path"}, paramLabel = "CP",
            description = "where the program's classes are: folders and jars separated by ':', 'dir/*' for every jar of a "
                    + "folder (default: GDASYNC_CLASSPATH, else CLASSPATH, else only the launcher's jars)")
    String classpath;

    @Option(names = "--jvm-opt", paramLabel = "OPTION",
            description = "an option for every rank's JVM (repeatable), e.g. --jvm-opt -Xmx2g")
    List<String> jvmOpts = new ArrayList<>();

    @Option(names = "--grace", paramLabel = "SECONDS", converter = GraceConverter.class,
            description = "when a rank fails, how long the others may run on before they are stopped (default 3)")
    Duration grace = LaunchOptions.DEFAULT_GRACE;

    @Option(names = "--netns", paramLabel = "K", converter = NetnsConverter.class,
            description = "spread the ranks over K network namespaces, each a \"host\" (1 <= K <= N, K <= 64; needs root; "
                    + "made with scripts/netns up K when missing)")
    int netns;

    @Option(names = "--jfr", paramLabel = "DIR", converter = JfrFolder.class,
            description = "record every rank with the JDK Flight Recorder and gdasync's events into DIR/rank-N.jfr (DIR is made"
                    + " if its parent exists); scripts/trace DIR turns them into one timeline")
    Path jfr;

    @Option(names = "--proxies", description = "start the host's collective proxy beside the ranks (one per host with"
            + " --netns): collectives opened with Collectives.open run offloaded to it (GDASYNC_COLL_ENGINE=offload)")
    boolean proxies;

    @Option(names = "--mpj", description = "the program is an MPJ Express (mpiJava 1.2) program: its MPI calls run over"
            + " gdasync (shared memory on a host, UCX between hosts); MPJ's jars come from MPJ_HOME (docs/mpj.md)")
    boolean mpj;

    @Option(names = "--list", description = "list the programs known by short name and exit")
    boolean list;

    @Parameters(index = "0", arity = "0..1", paramLabel = "MAIN",
            description = "the program: its main class (with or without a package), or a short name from --list")
    String app;

    @Parameters(index = "1..*", paramLabel = "ARGS", description = "the program's arguments")
    List<String> appArgs = new ArrayList<>();

    private final Map<String, String> env;

    /** @param env the launcher's environment (for the class path variables) */
    LaunchCommand(Map<String, String> env) {
        this.env = env;
    }

    /** @return the command line with the launcher's settings: options end at MAIN */
    CommandLine commandLine() {
        CommandLine cl = CommandLines.of(this);
        cl.setStopAtPositional(true);
        // --jvm-opt -cp DIR: the value of --jvm-opt may look like one of the launcher's options.
        cl.setAllowOptionsAsOptionParameters(true);
        return cl;
    }

    @Override
    public void check() {
        if (!list && app == null) {
            throw new IllegalArgumentException("no program given: name its main class (or a short name from --list)");
        }
        if (netns > ranks) {
            throw new IllegalArgumentException("--netns " + netns + " with " + ranks + " rank" + (ranks == 1 ? "" : "s")
                    + " would leave hosts without a rank: K must not exceed -np N");
        }
        options();
    }

    /**
     * @return the options
     * @throws IllegalArgumentException if the class path is given twice or names what does not exist
     */
    LaunchOptions options() {
        List<String> jvm = new ArrayList<>(jvmOpts);
        ClassPath cp = ClassPath.choose(classpath, jvm, env);
        return new LaunchOptions(ranks, netns, grace, List.copyOf(jvm), cp, app, List.copyOf(appArgs), list, jfr, proxies, mpj);
    }

    /** --jfr: a folder, or a new one in an existing folder; no comma (the JVM option's separator). */
    static final class JfrFolder implements ITypeConverter<Path> {
        @Override
        public Path convert(String s) {
            try {
                Path dir = FlightRecording.checkFolder(Path.of(s));
                FlightRecording.jvmOption(dir, 0);
                return dir;
            } catch (IllegalArgumentException e) { // InvalidPathException included
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** -np: 1 to {@value #MAX_RANKS}. */
    static final class RanksConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String s) {
            return whole(s, 1, MAX_RANKS, "a number of ranks");
        }
    }

    /** --netns: 1 to {@link NetNamespaces#MAX_HOSTS}. */
    static final class NetnsConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String s) {
            return whole(s, 1, NetNamespaces.MAX_HOSTS, "a number of namespaces");
        }
    }

    /** --grace: 0 to {@value #MAX_GRACE_SECONDS} seconds, fractions allowed. */
    static final class GraceConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String s) {
            try {
                double seconds = Double.parseDouble(s);
                if (seconds >= 0 && seconds <= MAX_GRACE_SECONDS) {
                    return Duration.ofNanos((long) (seconds * 1e9));
                }
            } catch (NumberFormatException e) {
                // below
            }
            throw new TypeConversionException("'" + s + "' is not a number of seconds from 0 to " + MAX_GRACE_SECONDS);
        }
    }

    private static int whole(String s, int min, int max, String what) {
        try {
            int n = Integer.parseInt(s.strip());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new TypeConversionException("'" + s + "' is not " + what + " from " + min + " to " + max);
    }
}
