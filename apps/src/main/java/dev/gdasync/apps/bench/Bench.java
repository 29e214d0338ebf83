package dev.gdasync.apps.bench;

import dev.gdasync.apps.gdsyncpingpong.GdsyncPingPong;
import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.cli.ProjectVersion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

/**
 * {@code scripts/bench NAME [ARGS...]}: runs a benchmark by name. Everything after the name is the benchmark's own
 * command line, {@code --help} included.
 */
@Command(name = "scripts/bench", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        usageHelpAutoWidth = false, synopsisSubcommandLabel = "NAME [ARGS...]",
        description = "Runs a benchmark. 'scripts/bench NAME --help' shows a benchmark's options.",
        commandListHeading = "%nBenchmarks:%n",
        subcommands = {Bench.GdsyncPingPongCommand.class, Bench.JmhCommand.class})
public final class Bench implements CommandLines.Checked {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private Bench() {
    }

    /** The arguments of a benchmark, passed on untouched. */
    abstract static class PassThrough {
        @Parameters(paramLabel = "ARGS", description = "the benchmark's arguments")
        List<String> args = new ArrayList<>();
    }

    /** gdsync-pingpong. */
    @Command(name = "gdsync-pingpong",
            description = "two processes ping-pong through the gdsync API over the shared-memory software NIC")
    static final class GdsyncPingPongCommand extends PassThrough {
    }

    /** jmh. */
    @Command(name = "jmh", description = "JMH micro-benchmarks of single calls: [REGEX] [JMH options, e.g. -f 1 -wi 2]")
    static final class JmhCommand extends PassThrough {
    }

    @Override
    public void check() {
        if (spec.commandLine().getParseResult().subcommand() == null) {
            throw new IllegalArgumentException("no benchmark named: gdsync-pingpong or jmh");
        }
    }

    /**
     * @param args the benchmark's name and its arguments
     * @throws Exception when the benchmark fails
     */
    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        CommandLine cl = CommandLines.of(new Bench());
        for (CommandLine sub : cl.getSubcommands().values()) {
            // The benchmark reads its own options, --help included.
            sub.setUnmatchedOptionsArePositionalParams(true);
            sub.setStopAtPositional(true);
        }
        OptionalInt stop = CommandLines.parse(cl, args, out, err, true);
        if (stop.isPresent()) {
            return stop.getAsInt();
        }
        CommandLine chosen = cl.getParseResult().subcommand().commandSpec().commandLine();
        String[] rest = ((PassThrough) chosen.getCommand()).args.toArray(String[]::new);
        return switch (chosen.getCommandName()) {
            case "gdsync-pingpong" -> GdsyncPingPong.run(rest, out, err);
            case "jmh" -> {
                org.openjdk.jmh.Main.main(rest);
                yield 0;
            }
            default -> throw new IllegalStateException("no such benchmark: " + chosen.getCommandName());
        };
    }
}
