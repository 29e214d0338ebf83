package dev.gdasync.apps.common;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Runs an MPJ Express program as N processes on this host over MPJ's niodev (TCP between the rank JVMs), without
 * MPJ's daemons: {@code java -cp APPS NiodevStarter -np N [--error-tag TAG] [--meet-timeout S] [--timeout S] MAIN
 * ARGS...}, with MPJ_HOME set.
 *
 * <p>MPJ's own way is its starter ({@code runtime.starter.MPJRun}) asking a daemon on each host to start the ranks.
 * What a daemon does is start {@code java -cp MPJ_JARS:CLASSPATH runtime.daemon.Wrapper PORTINFO N niodev SERVER PORT
 * RANK MAIN ARGS...} per rank, and what the starter adds is a server socket the ranks' {@code NIODevice.init} send
 * their ports to and get the peer table from. This class does both on one host: the server is a
 * {@link NiodevRendezvous} on an ephemeral port of 127.0.0.1 (niodev binds its own two ports to every address and
 * connects to the address the server saw, so the loopback works); the ranks are {@link NiodevRanks}, watched with
 * timeouts. Their lines come out unchanged on this process's standard output and error.
 *
 * <p>Exit status 0 when every rank exited with 0; 1 on a failure, after a line saying which rank and why (the error
 * tag first when given, so that a {@link ChildJob} with that tag fails with it); 2 on a wrong command line. The apps
 * run it as a child job through {@link #job}, like {@link MpjStarter}'s multicore device.
 */
public final class NiodevStarter {
    /** The protocol switch limit MPJ's starter passes without {@code -psl}: 128 KiB, eager below, rendezvous above. */
    static final int PROTOCOL_SWITCH_LIMIT = 128 * 1024;
    /** MPJ's jars the ranks need: MPI and niodev, and the Wrapper (their manifests name log4j beside them). */
    static final List<String> MPJ_JARS = List.of("mpj.jar", "daemon.jar");
    /** How long the ranks may take to start and meet by default, in seconds. */
    static final int MEET_TIMEOUT_SECONDS = 60;
    /** How long a job may run by default, in seconds. */
    static final int JOB_TIMEOUT_SECONDS = 3600;
    /** The launcher itself only passes lines on: a small, quickly started JVM. */
    private static final List<String> LAUNCHER_JVM = List.of("-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

    private NiodevStarter() {
    }

    /** A command line, read. */
    record Options(int ranks, String errorTag, int meetSeconds, int timeoutSeconds, String mainClass, List<String> args) {
    }

    /**
     * @param mpjHome the value of MPJ_HOME, or null
     * @return why niodev cannot run here, or null if it can
     */
    public static String missing(String mpjHome) {
        if (mpjHome == null || mpjHome.isBlank()) {
            return "MPJ_HOME is not set (scripts/mprun installs MPJ Express and sets it)";
        }
        for (String jar : MPJ_JARS) {
            if (!Files.isRegularFile(Path.of(mpjHome, "lib", jar))) {
                return "MPJ_HOME=" + mpjHome + " has no lib/" + jar;
            }
        }
        // MPJ's Wrapper and NIODevice.init both ask for this host's address first, and fail without it.
        try {
            InetAddress.getLocalHost();
        } catch (UnknownHostException e) {
            return "MPJ's niodev needs this host's name to resolve (InetAddress.getLocalHost: " + e.getMessage() + ")";
        }
        return null;
    }

    /**
     * @param name      the job in words, for the error messages ("the MPJ Express ping-pong on niodev")
     * @param mpjHome   MPJ_HOME, checked ({@link #missing})
     * @param ranks     MPJ ranks, one JVM each
     * @param mainClass the MPJ program's main class, on this JVM's class path
     * @param args      its arguments
     * @param resultTag the first word of its result lines
     * @param errorTag  the first word of its error lines; the launcher's own failure comes with it too
     * @return the job, ready to run: this JVM's java running {@link #main} on this JVM's class path
     */
    public static ChildJob job(String name, String mpjHome, int ranks, String mainClass, List<String> args,
                               String resultTag, String errorTag) {
        List<String> cmd = new ArrayList<>();
        cmd.add(thisJava());
        cmd.addAll(LAUNCHER_JVM);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), NiodevStarter.class.getName(),
                "-np", Integer.toString(ranks), "--error-tag", errorTag, mainClass));
        cmd.addAll(args);
        return new ChildJob(name, cmd, resultTag, errorTag).environment(Map.of(MpjStarter.MPJ_HOME, mpjHome));
    }

    /**
     * @param args see the class comment
     */
    public static void main(String[] args) {
        int status;
        try {
            status = run(args, System.getenv(MpjStarter.MPJ_HOME), System.out, System.err);
        } catch (InterruptedException e) {
            status = 1;
        }
        System.out.flush();
        System.exit(status);
    }

    /**
     * Runs the job to its end.
     *
     * @param args    the command line
     * @param mpjHome MPJ_HOME
     * @param out     where the ranks' standard output goes
     * @param err     where their standard error and the failures go
     * @return the exit status: 0, 1 on a failure, 2 on a wrong command line
     * @throws InterruptedException if interrupted (the ranks are killed)
     */
    static int run(String[] args, String mpjHome, PrintStream out, PrintStream err) throws InterruptedException {
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            err.println("niodev: " + e.getMessage());
            err.println("usage: NiodevStarter -np N [--error-tag TAG] [--meet-timeout S] [--timeout S] MAIN [ARGS...]");
            return 2;
        }
        String prefix = o.errorTag() == null ? "error:" : o.errorTag();
        String missing = missing(mpjHome);
        if (missing != null) {
            err.println(prefix + " " + missing);
            return 1;
        }
        String why;
        try (NiodevRendezvous meet = new NiodevRendezvous(o.ranks())) {
            List<List<String>> commands = new ArrayList<>();
            for (int r = 0; r < o.ranks(); r++) {
                commands.add(rankCommand(thisJava(), mpjHome, System.getProperty("java.class.path"), o.ranks(),
                        meet.host(), meet.port(), r, o.mainClass(), o.args()));
            }
            try (NiodevRanks ranks = NiodevRanks.start(commands, Map.of(MpjStarter.MPJ_HOME, mpjHome), out, err)) {
                why = awaitMeeting(meet, ranks, o, out);
                if (why == null) {
                    why = ranks.awaitEnd(o.timeoutSeconds() * 1000L);
                }
            }
        } catch (IOException e) {
            why = "niodev: " + e;
        }
        if (why != null) {
            err.println(prefix + " " + why);
            err.flush();
            return 1;
        }
        return 0;
    }

    /** @return why the ranks did not meet, or null once each has the peer table */
    private static String awaitMeeting(NiodevRendezvous meet, NiodevRanks ranks, Options o, PrintStream out) throws IOException {
        try {
            meet.await(o.meetSeconds() * 1000L, ranks::exitedBeforeMeeting);
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
        out.println("niodev: " + o.ranks() + " ranks met at " + meet.host() + ":" + meet.port());
        return null;
    }

    /**
     * @return rank {@code rank}'s command: what MPJ's daemon runs, {@code java -cp MPJ_JARS:CLASSPATH
     *         runtime.daemon.Wrapper PORTINFO N niodev HOST PORT RANK MAIN ARGS...}
     */
    static List<String> rankCommand(String java, String mpjHome, String classPath, int ranks, String host, int port,
                                    int rank, String mainClass, List<String> args) {
        List<String> cp = new ArrayList<>();
        for (String jar : MPJ_JARS) {
            cp.add(Path.of(mpjHome, "lib", jar).toString());
        }
        cp.add(classPath);
        List<String> cmd = new ArrayList<>(List.of(java, "-cp", String.join(File.pathSeparator, cp),
                "runtime.daemon.Wrapper", portInfo(ranks), Integer.toString(ranks), "niodev", host,
                Integer.toString(port), Integer.toString(rank), mainClass));
        cmd.addAll(args);
        return cmd;
    }

    /**
     * @return the configuration MPJ's starter hands each rank, its spaces written as '|' as MPJ's daemon writes them
     *         (the Wrapper turns them back); the Wrapper appends the server's name and port
     */
    static String portInfo(int ranks) {
        return ("#temp line;#Number of Processes;" + ranks + ";#Protocol Switch Limit;" + PROTOCOL_SWITCH_LIMIT + ";")
                .replace(' ', '|');
    }

    /**
     * @param args the command line
     * @return the options
     * @throws IllegalArgumentException saying what is wrong
     */
    static Options parse(String[] args) {
        int ranks = -1;
        String errorTag = null;
        int meet = MEET_TIMEOUT_SECONDS;
        int timeout = JOB_TIMEOUT_SECONDS;
        int i = 0;
        for (; i < args.length && args[i].startsWith("-"); i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            String v = args[i + 1];
            switch (args[i]) {
                case "-np" -> ranks = positive("-np", v);
                case "--error-tag" -> errorTag = v;
                case "--meet-timeout" -> meet = positive("--meet-timeout", v);
                case "--timeout" -> timeout = positive("--timeout", v);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (ranks < 0) {
            throw new IllegalArgumentException("-np N is missing");
        }
        if (i >= args.length) {
            throw new IllegalArgumentException("the MPJ program's main class is missing");
        }
        return new Options(ranks, errorTag, meet, timeout, args[i], List.of(args).subList(i + 1, args.length));
    }

    private static int positive(String option, String v) {
        try {
            int n = Integer.parseInt(v);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException(option + " takes a positive number, not '" + v + "'");
    }

    private static String thisJava() {
        return ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }
}
