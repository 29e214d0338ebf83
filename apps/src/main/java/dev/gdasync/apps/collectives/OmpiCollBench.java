package dev.gdasync.apps.collectives;

import dev.gdasync.apps.common.ChildJob;
import dev.gdasync.apps.pingpong.CPeerBuild;
import dev.gdasync.apps.pingpong.OpenMpi;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The Open MPI baseline of the benchmark ({@code --mode ompi}): the C program {@code cpeers/ompi-coll.c} (beside the
 * ping-pong's peers, built with mpicc at first use by {@link CPeerBuild} into the cache folder's
 * {@code collectives/}), run by rank 0 as a child job ({@link ChildJob}) under Open MPI's mpirun with as many ranks as
 * the gdasync job, over its shared-memory transport ({@link OpenMpi}: pml ob1, btl vader and self, oversubscribed and
 * unbound as the gdasync ranks are) with its tuned collectives ({@code --mca coll tuned,libnbc,basic,self}: not the
 * han, adapt or sm components). It times {@code MPI_Allreduce} (in place), {@code MPI_Alltoall},
 * {@code MPI_Allgather} (in place), {@code MPI_Bcast} and {@code MPI_Barrier} in the cases and reps of the Java
 * ranks and checks a collective on fresh data after every rep; rank 0 prints a {@value #RESULT} line per case.
 */
public final class OmpiCollBench {
    static final String RESULT = "COLLECTIVES-OMPI-RESULT";
    static final String ERROR = "COLLECTIVES-OMPI-ERROR";
    /** The collective components the program may use. */
    static final String COLL = "tuned,libnbc,basic,self";
    /** What to install where the baseline is missing. */
    static final String INSTALL_HINT = "on Debian: apt-get install openmpi-bin libopenmpi-dev (scripts/mprun installs"
            + " them when run as root)";
    private static final String SOURCE = "ompi-coll";

    private final String binary;
    private final String mpirun;
    private final String version;

    private OmpiCollBench(String binary, String mpirun, String version) {
        this.binary = binary;
        this.mpirun = mpirun;
        this.version = version;
    }

    /**
     * Finds mpirun and builds the program (or finds it built).
     *
     * @return the baseline
     * @throws IllegalStateException saying what is missing or why the build failed
     */
    static OmpiCollBench find() {
        String mpirun = OpenMpi.mpirun().orElseThrow(() -> new IllegalStateException("Open MPI's mpirun is not on PATH"));
        CPeerBuild.Built b = CPeerBuild.build(SOURCE, "mpicc", CPeerBuild.FLAGS,
                CPeerBuild.cacheFolder().resolve("collectives"));
        String binary = b.path().orElseThrow(() -> new IllegalStateException(b.problem())).toString();
        return new OmpiCollBench(binary, mpirun, OpenMpi.version(mpirun));
    }

    /**
     * Runs the program on its own, for {@code scripts/bench mpj}, which sets Open MPI's collectives beside MPJ's:
     * {@code OmpiCollBench RANKS REPS COLL:BYTES:ITERS:WARMUP...} (the cases of {@link MpjCollBench}). Prints what runs,
     * then a {@value #RESULT} line per case ({@code COLL BYTES ITERS US_REP1 ...}); where Open MPI or mpicc is missing,
     * a line saying why, and exits 0 (the benchmark then has no Open MPI column); exits 1 if a check or the job failed,
     * 2 on bad arguments.
     */
    public static void main(String[] args) throws IOException, InterruptedException {
        System.exit(run(args, System.out, System.err));
    }

    /** {@link #main}, writing to {@code out} and {@code err}: @return the exit status */
    static int run(String[] args, PrintStream out, PrintStream err) throws IOException, InterruptedException {
        List<BenchCase> cases = new ArrayList<>();
        int ranks;
        int reps;
        try {
            if (args.length < 3) {
                throw new IllegalArgumentException("expected RANKS REPS COLL:BYTES:ITERS:WARMUP..., got "
                        + args.length + " arguments");
            }
            ranks = number(args[0], "RANKS");
            reps = number(args[1], "REPS");
            if (ranks < 2 || reps < 1) {
                throw new IllegalArgumentException("RANKS must be at least 2 and REPS at least 1, got " + ranks
                        + " and " + reps);
            }
            for (int i = 2; i < args.length; i++) {
                BenchCase c = parseCase(args[i]);
                if (c.bytes() < 0 || c.iters() < 1 || c.warmup() < 1
                        || c.collective().sized() && c.count(ranks) < 1) {
                    throw new IllegalArgumentException("case " + args[i] + ": BYTES must give every one of the "
                            + ranks + " ranks an int, ITERS and WARMUP be at least 1");
                }
                cases.add(c);
            }
        } catch (IllegalArgumentException e) {
            err.println("OmpiCollBench: " + e.getMessage());
            return 2;
        }
        OmpiCollBench bench;
        try {
            bench = find();
        } catch (IllegalStateException e) {
            out.println("ompi: skipped: " + e.getMessage() + " (" + INSTALL_HINT + ")");
            return 0;
        }
        out.println(bench.describe(ranks));
        try {
            for (BenchRow r : bench.run(ranks, reps, cases, () -> { })) {
                StringBuilder line = new StringBuilder(RESULT).append(' ').append(r.collective()).append(' ')
                        .append(r.bytes()).append(' ').append(r.iters());
                for (double us : r.repMicros()) {
                    line.append(' ').append(String.format(Locale.ROOT, "%.4f", us));
                }
                out.println(line);
            }
        } catch (IllegalStateException e) {
            err.println("OmpiCollBench: " + e.getMessage());
            return 1;
        }
        return 0;
    }

    private static int number(String s, String what) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " must be a number, got '" + s + "'");
        }
    }

    private static BenchCase parseCase(String arg) {
        try {
            return BenchCase.parse(arg);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("case " + arg + ": BYTES, ITERS and WARMUP must be numbers");
        }
    }

    /** @return what runs, in words */
    String describe(int ranks) {
        return "ompi: C MPI collectives (cpeers/" + SOURCE + ".c) under " + version + ", " + ranks + " ranks, "
                + OpenMpi.TRANSPORT + ", coll " + COLL + " (tuned selected)";
    }

    /**
     * @param ranks the ranks
     * @param reps  timed reps per case
     * @param cases the cases
     * @return the command line
     */
    List<String> command(int ranks, int reps, List<BenchCase> cases) {
        List<String> c = OpenMpi.launch(mpirun, ranks);
        c.addAll(List.of("--mca", "coll", COLL, binary, String.valueOf(reps)));
        cases.forEach(k -> c.add(k.arg()));
        return c;
    }

    /**
     * Runs the program to its end.
     *
     * @param ranks     the ranks
     * @param reps      timed reps per case
     * @param cases     the cases
     * @param heartbeat called every half second meanwhile
     * @return a row per case
     * @throws IllegalStateException if a check failed or the job failed
     * @throws IOException           if mpirun cannot be started
     * @throws InterruptedException  if interrupted meanwhile
     */
    List<BenchRow> run(int ranks, int reps, List<BenchCase> cases, Runnable heartbeat)
            throws IOException, InterruptedException {
        List<BenchRow> rows = new ArrayList<>();
        for (String line : new ChildJob("the Open MPI baseline", command(ranks, reps, cases), RESULT, ERROR)
                .environment(OpenMpi.environment()).echo(ChildJob.Echo.prefixed("ompi: ")).run(heartbeat)) {
            rows.add(BenchRow.fromChild("ompi", ranks, line));
        }
        if (rows.size() != cases.size()) {
            throw new IllegalStateException("the Open MPI baseline printed " + rows.size() + " results for "
                    + cases.size() + " cases");
        }
        return rows;
    }
}
