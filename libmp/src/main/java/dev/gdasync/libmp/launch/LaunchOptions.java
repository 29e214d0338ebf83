package dev.gdasync.libmp.launch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The launcher's command line:
 * {@code [-np N] [--netns K] [--grace SECONDS] [--jvm-opt OPTION]... APP [ARGS...]}, or {@code --list}, or
 * {@code --help}. Everything after APP belongs to the application.
 *
 * @param ranks   how many ranks to start (-np, default 1)
 * @param netns   over how many network namespaces ("hosts") the ranks are spread (--netns, from 1 to
 *                {@code min(N, 64)}); 0 without the option: every rank runs in the launcher's namespace
 * @param grace   how long the other ranks may run on after one failed (--grace, default 3 s)
 * @param jvmOpts extra options for every rank's JVM (--jvm-opt, repeatable)
 * @param app     the application: a short name or a fully qualified main class (null with --list/--help)
 * @param appArgs the application's arguments
 * @param list    --list: print the registered short names and exit
 * @param help    --help: print the usage and exit
 */
record LaunchOptions(int ranks, int netns, Duration grace, List<String> jvmOpts, String app, List<String> appArgs,
                     boolean list, boolean help) {
    static final Duration DEFAULT_GRACE = Duration.ofSeconds(3);
    static final String USAGE = """
            usage: scripts/mprun [-np N] [--netns K] [--grace SECONDS] [--jvm-opt OPTION]... APP [ARGS...]
                   scripts/mprun --list
              -np N             start N ranks on this host (default 1)
              --netns K         spread the ranks over K network namespaces, each a "host" (1 <= K <= N, K <= 64):
                                rank r runs in gdasync-h{r % K} (10.77.0.{10 + r % K}); made with scripts/netns up K
                                when missing; needs root (docs/netns.md)
              --grace SECONDS   when a rank fails, how long the others may run on before they are killed (default 3)
              --jvm-opt OPTION  an extra option for every rank's JVM (repeatable), e.g. --jvm-opt -Xmx2g
              --list            list the applications known by short name
              APP               a short name (see --list) or a fully qualified main class""";

    /** The command line is wrong; the message says how. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    static LaunchOptions parse(String[] args) throws UsageException {
        int ranks = 1;
        int netns = 0;
        Duration grace = DEFAULT_GRACE;
        List<String> jvmOpts = new ArrayList<>();
        int i = 0;
        while (i < args.length && args[i].startsWith("-")) {
            String a = args[i];
            switch (a) {
                case "-h", "--help" -> {
                    return new LaunchOptions(ranks, netns, grace, List.of(), null, List.of(), false, true);
                }
                case "--list" -> {
                    return new LaunchOptions(ranks, netns, grace, List.of(), null, List.of(), true, false);
                }
                case "-np", "-n", "--np" -> ranks = parseRanks(value(args, i));
                case "--netns" -> netns = parseNetns(value(args, i));
                case "--grace" -> grace = parseGrace(value(args, i));
                case "--jvm-opt" -> jvmOpts.add(value(args, i));
                default -> throw new UsageException("unknown option '" + a + "'");
            }
            i += 2;
        }
        if (i >= args.length) {
            throw new UsageException("no application given");
        }
        if (netns > ranks) {
            throw new UsageException("--netns " + netns + " with " + ranks + " rank" + (ranks == 1 ? "" : "s")
                    + " would leave hosts without a rank: K must not exceed -np N");
        }
        List<String> appArgs = List.of(args).subList(i + 1, args.length);
        return new LaunchOptions(ranks, netns, grace, List.copyOf(jvmOpts), args[i], List.copyOf(appArgs), false, false);
    }

    private static String value(String[] args, int i) throws UsageException {
        if (i + 1 >= args.length) {
            throw new UsageException(args[i] + " needs a value");
        }
        return args[i + 1];
    }

    private static int parseRanks(String s) throws UsageException {
        try {
            int n = Integer.parseInt(s);
            if (n >= 1 && n <= 4096) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new UsageException("-np takes a number of ranks from 1 to 4096, not '" + s + "'");
    }

    private static int parseNetns(String s) throws UsageException {
        try {
            int k = Integer.parseInt(s);
            if (k >= 1 && k <= NetNamespaces.MAX_HOSTS) {
                return k;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new UsageException("--netns takes a number of namespaces from 1 to " + NetNamespaces.MAX_HOSTS + ", not '" + s + "'");
    }

    private static Duration parseGrace(String s) throws UsageException {
        try {
            double seconds = Double.parseDouble(s);
            if (seconds >= 0 && seconds <= 3600) {
                return Duration.ofNanos((long) (seconds * 1e9));
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new UsageException("--grace takes a number of seconds from 0 to 3600, not '" + s + "'");
    }
}
