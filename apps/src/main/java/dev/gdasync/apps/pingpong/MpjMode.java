package dev.gdasync.apps.pingpong;

import dev.gdasync.apps.common.ChildJob;
import dev.gdasync.apps.common.MpjDevice;
import dev.gdasync.apps.common.MpjStarter;
import dev.gdasync.apps.common.RootHeartbeat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * {@code mpj}: rank 0 runs {@link MpjPingPong} under MPJ Express's starter ({@link MpjStarter}: both ranks threads
 * of one JVM) as a child job and reads its results; {@code mpj-niodev} the same on MPJ's niodev
 * ({@link dev.gdasync.apps.common.NiodevStarter}: a JVM per rank, TCP between them); rank 1 keeps pace with rank 0's heartbeat ({@link RootHeartbeat};
 * a plain barrier would time out in the bootstrap during a long MPJ run). Both gdasync ranks stay idle meanwhile, so
 * the MPJ ranks have the CPUs.
 */
final class MpjMode {
    private MpjMode() {
    }

    /**
     * Runs the mode on both ranks.
     *
     * @param pair    the ranks (for the heartbeat)
     * @param options the measurement
     * @param mode    {@code mpj} or {@code mpj-niodev}: the MPJ device, and the rows' mode
     * @param onRow   told of every row as it arrives (rank 0)
     * @return the rows (rank 0; rank 1 gets an empty list)
     */
    static List<Result> run(Pair pair, PingPongOptions options, PingPongOptions.Mode mode, Consumer<Result> onRow)
            throws IOException, InterruptedException {
        MpjDevice device = device(mode);
        return run(pair, device, MpjPingPong.class.getName(), options.measurementArgs(), options.sizes().size(),
                MpjPingPong.RESULT, line -> parse(line, mode.label()), onRow);
    }

    /**
     * @param mode {@code mpj} or {@code mpj-niodev}
     * @return the MPJ Express device it runs on
     */
    static MpjDevice device(PingPongOptions.Mode mode) {
        return switch (mode) {
            case MPJ -> MpjDevice.MULTICORE;
            case MPJ_NIODEV -> MpjDevice.NIODEV;
            default -> throw new IllegalArgumentException(mode.label() + " is not an MPJ Express mode");
        };
    }

    /**
     * Runs an MPJ Express program on both ranks on MPJ's multicore device: rank 0 starts it and reads its result lines.
     *
     * @param pair       the ranks (for the heartbeat)
     * @param mainClass  the MPJ program ({@link MpjMessageRate})
     * @param args       its arguments
     * @param rowsWanted how many result lines it must print
     * @param resultTag  the first word of its result lines
     * @param parse      reads a result line, tag included
     * @param onRow      told of every row as it arrives (rank 0)
     * @param <R>        the rows' type
     * @return the rows (rank 0; rank 1 gets an empty list)
     */
    static <R> List<R> run(Pair pair, String mainClass, List<String> args, int rowsWanted, String resultTag,
                           Function<String, R> parse, Consumer<R> onRow)
            throws IOException, InterruptedException {
        return run(pair, MpjDevice.MULTICORE, mainClass, args, rowsWanted, resultTag, parse, onRow);
    }

    /**
     * Runs an MPJ Express program on both ranks: rank 0 starts it and reads its result lines.
     *
     * @param pair       the ranks (for the heartbeat)
     * @param device     the MPJ Express device it runs on
     * @param mainClass  the MPJ program ({@link MpjPingPong}, {@link MpjMessageRate})
     * @param args       its arguments
     * @param rowsWanted how many result lines it must print
     * @param resultTag  the first word of its result lines
     * @param parse      reads a result line, tag included
     * @param onRow      told of every row as it arrives (rank 0)
     * @param <R>        the rows' type
     * @return the rows (rank 0; rank 1 gets an empty list)
     */
    static <R> List<R> run(Pair pair, MpjDevice device, String mainClass, List<String> args, int rowsWanted,
                           String resultTag, Function<String, R> parse, Consumer<R> onRow)
            throws IOException, InterruptedException {
        String name = "the MPJ Express "
                + (mainClass.equals(MpjPingPong.class.getName()) ? "ping-pong" : "message rate")
                + (device == MpjDevice.NIODEV ? " on niodev" : "");
        String home = System.getenv(MpjStarter.MPJ_HOME);
        List<R> rows = Collections.synchronizedList(new ArrayList<>());
        new RootHeartbeat(pair.bootstrap, "pingpong").onRankZero(heartbeat ->
                device.job(name, home, 2, mainClass, args, resultTag, MpjPingPong.ERROR)
                        .echo(ChildJob.Echo.prefixed(device == MpjDevice.NIODEV ? "mpj-niodev: " : "mpj: "))
                        .onResult(line -> {
                            R row = parse.apply(resultTag + " " + line);
                            rows.add(row);
                            onRow.accept(row);
                        })
                        .run(heartbeat));
        if (pair.initiator && rows.size() != rowsWanted) {
            throw new IllegalStateException(name + " reported " + rows.size() + " of " + rowsWanted
                    + " sizes (its output is above)");
        }
        return List.copyOf(rows);
    }

    /**
     * @param line a result line of {@link #format}, or of its older four-field form (without the distribution)
     * @return the row it carries, of mode {@code mpj}
     */
    static Result parse(String line) {
        return parse(line, PingPongOptions.Mode.MPJ.label());
    }

    /**
     * @param line a result line of {@link #format}, or of its older four-field form (without the distribution)
     * @param mode the row's mode ({@code mpj}, {@code mpj-niodev}): MpjPingPong does not know its device
     * @return the row it carries
     */
    static Result parse(String line, String mode) {
        String[] f = line.split(" ");
        if (f.length != 4 && f.length != 14) {
            throw new IllegalArgumentException("malformed MPJ result line: " + line);
        }
        Result r = new Result(mode, Integer.parseInt(f[1]), Integer.parseInt(f[2]), Double.parseDouble(f[3]));
        if (f.length == 4) {
            return r;
        }
        Latencies l = new Latencies(Long.parseLong(f[4]), Double.parseDouble(f[5]), Double.parseDouble(f[6]),
                Double.parseDouble(f[7]), Double.parseDouble(f[8]), Double.parseDouble(f[9]));
        RunSpread s = new RunSpread(Integer.parseInt(f[10]), Double.parseDouble(f[11]), Double.parseDouble(f[12]),
                Double.parseDouble(f[13]));
        return new Result(r.mode(), r.bytes(), r.iters(), r.oneWayMicros(), l, s);
    }

    /**
     * @param r a row
     * @return {@code MPJ-PINGPONG-RESULT bytes iters oneway_us count min p50 p99 p99.9 max runs run_min run_max spread_pct}
     */
    static String format(Result r) {
        Latencies l = r.latencies();
        RunSpread s = r.runs();
        return String.format(Locale.ROOT, "%s %d %d %.6f %d %.6f %.6f %.6f %.6f %.6f %d %.6f %.6f %.4f", MpjPingPong.RESULT,
                r.bytes(), r.iters(), r.oneWayMicros(), l.count(), l.min(), l.p50(), l.p99(), l.p999(), l.max(), s.runs(),
                s.min(), s.max(), s.percent());
    }
}
