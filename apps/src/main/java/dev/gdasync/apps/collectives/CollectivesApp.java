package dev.gdasync.apps.collectives;

import dev.gdasync.apps.common.RankMain;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.cli.ProjectVersion;
import dev.gdasync.libmp.coll.Collectives;
import dev.gdasync.libmp.coll.msccl.MscclConfig;
import dev.gdasync.libmp.coll.msccl.MscclLimits;
import dev.gdasync.libmp.coll.msccl.MscclPrograms;
import dev.gdasync.libmp.coll.msccl.MscclRuntime;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code scripts/mprun -np 4 collectives --xml FILE}: loads MSCCL-IR programs, runs each one's collective on int32
 * data at sizes it is selected for and at one it is not (the built-in runs then), and checks the result exactly on
 * every rank. With {@code --bench}: allreduce, alltoall, allgather, bcast and barrier, programs against the built-in
 * algorithms against MPJ Express and Open MPI ({@code --mode ompi}), side by side in one run, every row with its ratio
 * to Open MPI's.
 */
@Command(name = "scripts/mprun -np N collectives", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        usageHelpAutoWidth = false,
        description = "Runs MSCCL-IR programs (and the built-in collectives where none fits) and checks the results"
                + " exactly; --bench measures allreduce, alltoall, allgather, bcast and barrier: programs, built-ins,"
                + " MPJ Express and Open MPI.")
public final class CollectivesApp implements RankMain.App {
    /** The values of {@code --mode}. */
    private static final List<String> MODES = List.of("host", "sa", "ki", "ompi");

    @Option(names = "--xml", paramLabel = "FILE",
            description = "an MSCCL-IR file or a folder of them (repeatable); default: the files that the"
                    + " gdasync.msccl.xml property or GDASYNC_MSCCL_XML lists")
    List<Path> xml = new ArrayList<>();

    @Option(names = "--mode", split = ",", paramLabel = "MODE", defaultValue = "host,sa,ki",
            description = "models of the check and the benchmark: host (blocking, the caller's thread and a thread per"
                    + " thread block), sa (enqueued on a host stream: a stream per thread block and a NIC stream), ki"
                    + " (run by the blocks of a host KI executor, the CPU only prepares); with --bench also ompi (Open"
                    + " MPI's collectives in C, built with mpicc at first use, the reference every row's ratio is to);"
                    + " default: ${DEFAULT-VALUE}")
    List<String> modes;

    @Option(names = "--bench", description = "measure allreduce, alltoall, allgather, bcast and barrier instead of"
            + " checking")
    boolean bench;

    @Option(names = "--sizes", split = ",", paramLabel = "BYTES",
            defaultValue = "8,64,512,4096,32768,262144,1048576",
            description = "benchmark sizes per rank in bytes, multiples of 4 (default: ${DEFAULT-VALUE})")
    List<Long> sizes;

    @Option(names = "--large", description = "add 4, 16 and 64 MiB to the benchmark sizes")
    boolean large;

    @Option(names = "--iters", paramLabel = "N", defaultValue = "1000",
            description = "collectives per rep for small sizes, as OSU's benchmarks; large sizes get fewer (64 MiB a rep), at"
                    + " least 2 (default: ${DEFAULT-VALUE})")
    int iters;

    @Option(names = "--warmup", paramLabel = "N", defaultValue = "20000",
            description = "collectives of the untimed warm-up rep for small sizes, fewer for large ones (64 MiB), never"
                    + " fewer than a timed rep: the JIT of the Java libraries compiles their paths then; the first"
                    + " thousands of calls of a path are slow while its compiler threads take the CPUs (default:"
                    + " ${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--warmup-seconds", paramLabel = "S", defaultValue = "3",
            description = "warm-up passes over every case before the first is timed, until this long has passed (the"
                    + " Java baselines do the same; default: ${DEFAULT-VALUE})")
    double warmupSeconds;

    @Option(names = "--reps", paramLabel = "N", defaultValue = "5",
            description = "timed reps per size and method after a warm-up rep; the median is reported (default: ${DEFAULT-VALUE})")
    int reps;

    @Option(names = "--slot-bytes", paramLabel = "BYTES", defaultValue = "65536",
            description = "connection slot size of the interpreter (a tile is this over the program's largest cnt)"
                    + " (default: ${DEFAULT-VALUE})")
    int slotBytes;

    @Option(names = "--slots", paramLabel = "N", defaultValue = "4",
            description = "slots per connection: messages a sender may have in flight before it waits for an"
                    + " acknowledgement (default: ${DEFAULT-VALUE})")
    int slots;

    @Option(names = "--threads", description = "run a rank's thread blocks on a thread each instead of in turn on its"
            + " main thread (the host interpreter's default)")
    boolean threads;

    @Option(names = "--no-mpj", description = "leave out the MPJ Express baseline")
    boolean noMpj;

    @Option(names = "--csv", paramLabel = "FILE", description = "also write the benchmark rows as CSV")
    Path csv;

    @Option(names = "--plot", paramLabel = "FILE.png",
            description = "also draw time per collective against size, a line per method: FILE-allreduce.png,"
                    + " FILE-alltoall.png, FILE-allgather.png, FILE-bcast.png, and a bar per method in FILE-barrier.png")
    Path plot;

    /** The programs and interpreter settings the options name, made by {@link #optionsProblem()}. */
    private MscclPrograms programs;
    private MscclConfig config;

    private CollectivesApp() {
    }

    /**
     * @param args the options; {@code --help} lists them
     */
    public static void main(String[] args) {
        RankMain.main("collectives", "rank", new CollectivesApp(), args);
    }

    @Override
    public String optionsProblem() {
        try {
            programs = xml.isEmpty() ? MscclPrograms.fromEnvironment() : MscclPrograms.load(xml, MscclLimits.defaults());
            MscclConfig d = MscclConfig.defaults();
            config = new MscclConfig(slotBytes, slots, d.maxThreadBlocks(), d.timeout(), threads);
            checkOptions();
            return null;
        } catch (RuntimeException e) {
            return e.getMessage();
        }
    }

    @Override
    public boolean run(EnvBootstrap boot, Mp mp) throws Exception {
        try (Collectives coll = Collectives.open(mp)) {
            boolean ok;
            if (bench) {
                try (MscclRuntime rt = MscclRuntime.open(coll, programs, config);
                     HostKiExecutor executor = KiLaunch.executor(mp)) {
                    ok = new CollBench(boot, mp, coll.world(), rt, benchSizes(), iters, warmup, warmupSeconds, reps, modes,
                            KiLaunch.launcher(executor)).run(noMpj, csv, plot);
                }
            } else {
                ok = new ProgramCheck(coll, programs, config, modes).run();
            }
            mp.barrier();
            return ok;
        }
    }

    private void checkOptions() {
        for (long s : sizes) {
            if (s <= 0 || s % 4 != 0) {
                throw new IllegalArgumentException("--sizes must be positive multiples of 4, got " + s);
            }
        }
        for (String m : modes) {
            if (!MODES.contains(m)) {
                throw new IllegalArgumentException("--mode: unknown mode '" + m + "' (host, sa, ki, or ompi with --bench)");
            }
            if (modes.indexOf(m) != modes.lastIndexOf(m)) {
                throw new IllegalArgumentException("--mode: " + m + " is given twice");
            }
        }
        if (modes.contains("ompi") && !bench) {
            throw new IllegalArgumentException("--mode ompi is the benchmark's Open MPI baseline: add --bench, or check"
                    + " with host, sa and ki");
        }
        if (iters < 1 || reps < 1 || warmup < 1) {
            throw new IllegalArgumentException("--iters, --warmup and --reps must be >= 1");
        }
        if (!(warmupSeconds >= 0) || warmupSeconds > 600) {
            throw new IllegalArgumentException("--warmup-seconds must be 0 to 600, got " + warmupSeconds);
        }
        for (Path f : new Path[] {csv, plot}) {
            if (f != null && f.toAbsolutePath().getParent() != null && !Files.isDirectory(f.toAbsolutePath().getParent())) {
                throw new IllegalArgumentException("the folder of " + f + " does not exist");
            }
        }
    }

    private List<Long> benchSizes() {
        List<Long> s = new ArrayList<>(sizes);
        if (large) {
            s.addAll(List.of(4L << 20, 16L << 20, 64L << 20));
        }
        return s;
    }
}
