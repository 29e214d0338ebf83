package dev.gdasync.libmp.testutil;

import dev.gdasync.libmp.bootstrap.BootstrapException;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A rank of the bootstrap and launcher tests; joins through {@link EnvBootstrap#fromEnvironment()}.
 * Modes (the first argument):
 * <ul>
 * <li>{@code gather}: prints "joined ...", allGathers contributions of different sizes, prints
 * "gathered ..." (what it got, checked by the tests), a barrier, "done", exit 0; also writes a line to
 * stderr;</li>
 * <li>{@code victim V}: after one allGather prints "ready PID"; rank V then sleeps (to be killed), the
 * others call barrier and print "failed: MESSAGE" and exit 1 when it fails;</li>
 * <li>{@code exit R S}: after one allGather rank R writes 201 lines to stderr, the last "rank R gives up with
 * status S", and exits with status S; the others print "ready PID" and sleep;</li>
 * <li>{@code hang}: after one allGather prints "ready PID" and sleeps;</li>
 * <li>{@code netns}: allGathers "NAMESPACE INODE" ({@code GDASYNC_NETNS} and the target of
 * {@code /proc/self/ns/net}), prints "netns [...]" (every rank's, by rank), a barrier, "done", exit 0.</li>
 * </ul>
 * A bootstrap error prints "failed: MESSAGE" and exits with 1.
 */
public final class RankMain {
    private RankMain() {
    }

    /** @return what rank {@code r} contributes: its number and r * 1000 filler bytes */
    public static String contribution(int r) {
        return "rank" + r + ":" + "x".repeat(r * 1000);
    }

    /** @return how a gathered contribution is printed */
    public static String summary(String contribution) {
        int colon = contribution.indexOf(':');
        return contribution.substring(0, colon) + "/" + contribution.length();
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment()) {
            int me = boot.rank();
            System.out.println("joined rank " + me + " size " + boot.size() + " job " + boot.jobId()
                    + " source " + boot.environment().source());
            List<String> got = new ArrayList<>();
            for (byte[] b : boot.allGather(contribution(me).getBytes(StandardCharsets.UTF_8))) {
                got.add(summary(new String(b, StandardCharsets.UTF_8)));
            }
            System.out.println("gathered " + got);
            switch (mode) {
                case "gather" -> {
                    System.err.println("stderr of rank " + me);
                    boot.barrier();
                    List<byte[]> empty = boot.allGather(new byte[0]);
                    System.out.println("done " + empty.size());
                }
                case "victim" -> {
                    System.out.println("ready " + ProcessHandle.current().pid());
                    if (me == Integer.parseInt(args[1])) {
                        Thread.sleep(120_000);
                    }
                    boot.barrier();
                    System.out.println("unexpected: the barrier passed");
                }
                case "exit" -> {
                    if (me == Integer.parseInt(args[1])) {
                        // A rank's own explanation, long enough that the launcher could overtake it.
                        for (int i = 0; i < 200; i++) {
                            System.err.println("rank " + me + " explains, line " + i);
                        }
                        System.err.println("rank " + me + " gives up with status " + args[2]);
                        System.exit(Integer.parseInt(args[2]));
                    }
                    System.out.println("ready " + ProcessHandle.current().pid());
                    Thread.sleep(120_000);
                }
                case "netns" -> {
                    String mine = System.getenv("GDASYNC_NETNS") + " " + Files.readSymbolicLink(Path.of("/proc/self/ns/net"));
                    List<String> all = new ArrayList<>();
                    for (byte[] b : boot.allGather(mine.getBytes(StandardCharsets.UTF_8))) {
                        all.add(new String(b, StandardCharsets.UTF_8));
                    }
                    System.out.println("netns " + all);
                    boot.barrier();
                    System.out.println("done");
                }
                case "hang" -> {
                    System.out.println("ready " + ProcessHandle.current().pid());
                    Thread.sleep(120_000);
                }
                default -> throw new IllegalArgumentException(mode);
            }
        } catch (BootstrapException e) {
            System.out.println("failed: " + e.getMessage());
            System.exit(1);
        }
    }
}
