package dev.gdasync.apps.collectives;

import dev.gdasync.apps.common.ChildJob;
import dev.gdasync.apps.pingpong.CPeerBuild;
import dev.gdasync.apps.pingpong.OpenMpi;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

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
final class OmpiCollBench {
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
