package dev.gdasync.libmp.launch;

import java.util.List;
import java.util.Map;

/**
 * {@code scripts/mprun}: starts the ranks of an application as JVMs on this host, for
 * {@link dev.gdasync.libmp.bootstrap.EnvBootstrap}.
 *
 * <pre>
 * scripts/mprun [-np N] [--netns K] [--grace SECONDS] [--jvm-opt OPTION]... APP [ARGS...]
 * </pre>
 * APP is a short name from a {@code META-INF/gdasync-apps.properties} on the class path, or a fully
 * qualified main class. Each output line of a rank is prefixed with {@code [rank]}, stdout to stdout and
 * stderr to stderr. The exit status is 0 when every rank exited with 0, else the first failed rank's
 * status; 2 for a wrong command line. With {@code --netns K} the ranks are spread over K network
 * namespaces made by {@code scripts/netns} (see {@link NetNamespaces}); when they cannot be made (not
 * root, no {@code ip}) the launcher says why and exits with 1 before starting any rank.
 */
public final class MpRun {
    private MpRun() {
    }

    /**
     * Runs the launcher and exits with its status.
     *
     * @param args the command line
     */
    public static void main(String[] args) throws InterruptedException {
        System.exit(run(args));
    }

    /**
     * Runs the launcher.
     *
     * @param args the command line
     * @return the exit status
     */
    static int run(String[] args) throws InterruptedException {
        LaunchOptions options;
        try {
            options = LaunchOptions.parse(args);
        } catch (LaunchOptions.UsageException e) {
            System.err.println("mprun: " + e.getMessage());
            System.err.println(LaunchOptions.USAGE);
            return 2;
        }
        if (options.help()) {
            System.out.println(LaunchOptions.USAGE);
            return 0;
        }
        AppRegistry registry;
        String mainClass;
        try {
            registry = AppRegistry.load(MpRun.class.getClassLoader());
            if (options.list()) {
                for (Map.Entry<String, String> e : registry.apps().entrySet()) {
                    System.out.println(e.getKey() + "\t" + e.getValue());
                }
                return 0;
            }
            mainClass = registry.resolve(options.app());
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("mprun: " + e.getMessage());
            return 2;
        }
        List<String> netnsExec = List.of();
        if (options.netns() > 0) {
            try {
                netnsExec = NetNamespaces.ensureUp(options.netns());
            } catch (IllegalStateException e) {
                System.err.println("mprun: --netns " + options.netns() + ": " + e.getMessage());
                return 1;
            }
        }
        return new Job(options, mainClass, netnsExec, System.out, System.err).run();
    }
}
