package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.pingpong.PingPongOptions.Mode;
import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.cli.OutputFile;
import dev.gdasync.libmp.cli.ProjectVersion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

import java.nio.file.Path;
import java.util.List;

/**
 * The message rate's command line as picocli reads it; {@link #options()} gives the {@link RateOptions}.
 */
@Command(name = "scripts/mprun -np 2 msgrate", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        sortOptions = false, usageHelpAutoWidth = false,
        description = {"Message rate between two ranks, in the style of OSU's osu_mbw_mr: per iteration rank 0 posts a"
                + " window of non-blocking sends, waits for them, then for one acknowledgement from rank 1, which posts"
                + " its receives ahead and acknowledges each full window. Messages per second and bandwidth, the modes"
                + " side by side.",
                "Modes: host (the CPU calls isend/irecv/waitAll), sa (host streams ring the window's sends and wait for the"
                        + " acknowledgement; the CPU prepares windows ahead), jucx (raw JUCX tagged sends; UCX_TLS=tcp"
                        + " forces TCP), ucx (UCX's ucx_perftest -t tag_bw in C: tagged sends streamed one way, no"
                        + " acknowledgement per window; needs ucx-utils), mpj (MPJ Express Isend/Waitall, multicore device)."},
        optionListHeading = "%nOptions:%n",
        footer = {"", "Rate = window x windows / run time, the median of the runs. Rank 0 prints the table."})
final class RateCommand implements CommandLines.Checked {
    @Option(names = "--mode", paramLabel = "M[,M...]", converter = PingPongCommand.ModesConverter.class,
            description = "models to measure, in order: host, sa, jucx, ucx, mpj (default host,sa,jucx,mpj)")
    List<Mode> modes = List.of(Mode.HOST, Mode.SA, Mode.JUCX, Mode.MPJ);

    @Option(names = "--sizes", paramLabel = "S[,S...]", converter = PingPongCommand.SizesConverter.class,
            description = "message sizes in bytes, K or M for KiB and MiB, at most 4M (default 8,64,512,4096,65536)")
    List<Integer> sizes = List.of(8, 64, 512, 4096, 65536);

    @Option(names = "--window", paramLabel = "W", converter = WindowConverter.class,
            description = "messages per window (default 64, at most " + RateOptions.MAX_WINDOW + ")")
    int window = 64;

    @Option(names = "--iters", paramLabel = "N", converter = PingPongCommand.ItersConverter.class,
            description = "windows per timed run (default 2000)")
    int iters = 2000;

    @Option(names = "--reps", paramLabel = "R", converter = PingPongCommand.RepsConverter.class,
            description = "timed runs per size; the median is reported (default 5)")
    int reps = 5;

    @Option(names = "--warmup", paramLabel = "SECONDS", converter = PingPongCommand.WarmupConverter.class,
            description = "warm-up of each mode's first size; other sizes get a third of it (default 2)")
    double warmupSeconds = 2;

    @Option(names = "--csv", paramLabel = "FILE", converter = OutputFile.class,
            description = "write mode,bytes,window,iters,msgs_per_s,mbps,run_min_msgs_per_s,run_max_msgs_per_s,spread_pct"
                    + " rows to FILE (its folder must exist)")
    Path csv;

    @Option(names = "--plot", paramLabel = "FILE.png", converter = PingPongCommand.PlotFile.class,
            description = "draw messages per second against size, one line per mode, into FILE.png")
    Path plot;

    @Option(names = "--pin", paramLabel = "yes|no", converter = PingPongCommand.YesNo.class,
            description = "pin the two sa stream threads to distinct CPUs where the CPU share allows it (default yes)")
    String pin = "yes";

    /** @return the command line with the project's settings */
    CommandLine commandLine() {
        return CommandLines.of(this);
    }

    @Override
    public void check() {
        for (Mode m : modes) {
            if (m == Mode.KI || m == Mode.MPJ_NIODEV || (CPeers.isCPeer(m) && m != Mode.UCX)) {
                throw new IllegalArgumentException("--mode: msgrate measures host, sa, jucx, ucx and mpj, not " + m.label());
            }
        }
        for (Integer b : sizes) {
            if (sizes.indexOf(b) != sizes.lastIndexOf(b)) {
                throw new IllegalArgumentException("--sizes: " + b + " is given twice");
            }
            if (b > RateOptions.MAX_BYTES) {
                throw new IllegalArgumentException("--sizes: " + b + " is more than msgrate's largest message, "
                        + RateOptions.MAX_BYTES + " bytes");
            }
        }
    }

    /** @return the options read */
    RateOptions options() {
        return new RateOptions(modes, sizes, window, iters, reps, warmupSeconds, csv, plot, pin.equals("yes"));
    }

    /** --window: 1 to {@link RateOptions#MAX_WINDOW}. */
    static final class WindowConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String v) {
            long n;
            try {
                n = Long.parseLong(v.strip());
            } catch (NumberFormatException e) {
                throw new TypeConversionException("'" + v + "' is not a whole number from 1 to " + RateOptions.MAX_WINDOW);
            }
            if (n < 1 || n > RateOptions.MAX_WINDOW) {
                throw new TypeConversionException(n + " is not from 1 to " + RateOptions.MAX_WINDOW);
            }
            return (int) n;
        }
    }
}
