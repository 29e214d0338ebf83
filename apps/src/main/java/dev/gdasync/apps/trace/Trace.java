package dev.gdasync.apps.trace;

import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.cli.OutputFile;
import dev.gdasync.libmp.cli.ProjectVersion;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;

/**
 * {@code scripts/trace DIR}: turns the flight recordings of one job ({@code DIR/rank-N.jfr}, from
 * {@code pingpong --jfr DIR} or {@code mprun --jfr DIR}) into one Chrome/Perfetto trace JSON ({@link ChromeTrace}),
 * and optionally draws the end of it as a PNG ({@link TimelinePicture}). A recording holds every ping-pong
 * iteration; the trace holds a window of it, by default the last {@value #DEFAULT_WINDOW_US} microseconds up to the
 * end of the last work request (the last message sent), so that the file opens quickly; {@code --all} keeps
 * everything.
 */
@Command(name = "scripts/trace", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        sortOptions = false, usageHelpAutoWidth = false,
        description = {"Turns the ranks' flight recordings of one job (DIR/rank-N.jfr: pingpong --jfr DIR, mprun --jfr DIR)"
                + " into one Chrome trace JSON that ui.perfetto.dev opens: a process per rank, a track per thread (CPU,"
                + " streams, the NIC's agent, UCX progress), spans for waits, tasks and work requests, instants for"
                + " doorbells and completions, and flows from a doorbell to its work and from a send to the receiver's"
                + " completion (docs/observability.md)."},
        optionListHeading = "%nOptions:%n")
public final class Trace implements CommandLines.Checked {
    /** The default window, in microseconds. */
    static final int DEFAULT_WINDOW_US = 2000;
    /** The default width of the picture, in microseconds. */
    static final int DEFAULT_PICTURE_US = 30;

    @Parameters(index = "0", paramLabel = "DIR", description = "the folder of the recordings (rank-N.jfr files)")
    Path dir;

    @Option(names = {"-o", "--out"}, paramLabel = "FILE", converter = OutputFile.class,
            description = "where to write the trace JSON (default DIR/trace.json)")
    Path out;

    @Option(names = "--window-us", paramLabel = "US", converter = Micros.class,
            description = "keep the last US microseconds up to the end of the last work request (default " + DEFAULT_WINDOW_US + ")")
    Double windowMicros;

    @Option(names = "--all", description = "keep every event of the recordings (large: every iteration of every warm-up)")
    boolean all;

    @Option(names = "--png", paramLabel = "FILE.png", converter = OutputFile.class,
            description = "also draw the last microseconds of the window as a PNG timeline (headless Java2D)")
    Path png;

    @Option(names = "--png-us", paramLabel = "US", converter = Micros.class,
            description = "how many microseconds the picture shows, ending with the window (default " + DEFAULT_PICTURE_US + ")")
    Double pictureMicros;

    @Option(names = "--title", paramLabel = "TEXT", description = "the picture's title (default: the folder's name)")
    String title;

    private Trace() {
    }

    @Override
    public void check() {
        if (all && windowMicros != null) {
            throw new IllegalArgumentException("--all and --window-us contradict each other: give one");
        }
        if (png == null && (pictureMicros != null || title != null)) {
            throw new IllegalArgumentException("--png-us and --title shape the picture: give --png FILE.png too");
        }
        if (png != null && !png.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".png")) {
            throw new IllegalArgumentException("--png: the file name must end with .png, not '" + png.getFileName() + "'");
        }
    }

    /**
     * @param args see {@code scripts/trace --help}
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * @param args the command line
     * @param out  where the summary goes
     * @param err  where errors go
     * @return 0, 1 when the recordings cannot be read or the files written, 2 for a wrong command line
     */
    static int run(String[] args, PrintStream out, PrintStream err) {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        Trace command = new Trace();
        CommandLine cl = CommandLines.of(command);
        OptionalInt stop = CommandLines.parse(cl, args, out, err, true);
        if (stop.isPresent()) {
            return stop.getAsInt();
        }
        try {
            RankRecordings recordings = RankRecordings.in(command.dir);
            long end = recordings.lastEnd(RankRecordings.LAST_WORK);
            long from = command.all ? Long.MIN_VALUE
                    : end - (long) ((command.windowMicros == null ? DEFAULT_WINDOW_US : command.windowMicros) * 1000);
            long to = command.all ? Long.MAX_VALUE : end;
            List<TimelineEvent> events = recordings.read(from, to);
            if (command.all) {
                from = events.stream().mapToLong(TimelineEvent::startNanos).min().orElse(end);
                to = events.stream().mapToLong(TimelineEvent::endNanos).max().orElse(end);
            }
            Timeline timeline = Timeline.of(events, from, to);
            Path json = command.out != null ? command.out : command.dir.resolve("trace.json");
            ChromeTrace.write(timeline, recordings.files().keySet(), json);
            out.printf(Locale.ROOT, "wrote %s: %d events on %d tracks of %d ranks, %d flows, %.1f us%n", json,
                    timeline.items().size(), timeline.tracks().size(), recordings.files().size(), timeline.flows().size(),
                    (to - from) / 1000.0);
            if (command.png != null) {
                long span = (long) ((command.pictureMicros == null ? DEFAULT_PICTURE_US : command.pictureMicros) * 1000);
                String title = command.title != null ? command.title : String.valueOf(command.dir.toAbsolutePath().getFileName());
                TimelinePicture.write(timeline, Math.max(from, to - span), to, title, command.png);
                out.println("wrote " + command.png);
            }
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("trace: " + e.getMessage());
            return 1;
        } catch (UncheckedIOException e) {
            err.println("trace: " + e.getMessage());
            return 1;
        }
    }

    /** A positive number of microseconds, at most a minute. */
    static final class Micros implements ITypeConverter<Double> {
        @Override
        public Double convert(String v) {
            double d;
            try {
                d = Double.parseDouble(v.strip());
            } catch (NumberFormatException e) {
                throw new TypeConversionException("'" + v + "' is not a number of microseconds");
            }
            if (!(d > 0 && d <= 60e6)) {
                throw new TypeConversionException(v.strip() + " is not from 0 (excluded) to 60000000 microseconds");
            }
            return d;
        }
    }
}
