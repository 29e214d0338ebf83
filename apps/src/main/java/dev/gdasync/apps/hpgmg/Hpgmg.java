package dev.gdasync.apps.hpgmg;

import dev.gdasync.apps.common.LauncherRank;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.comm.Comm;
import picocli.CommandLine;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

/**
 * HPGMG-FV on libmp: {@code scripts/mprun -np N hpgmg LOG2_BOX BOXES_PER_RANK [--mode host,sa,ki,mpj]}. Prints
 * what upstream's {@code hpgmg-fv} prints (level creation, each F-cycle's residual norm, the timing breakdown,
 * the performance summary) for each mode, the modes' solves interleaved so that they are measured side by
 * side, then a summary of the modes with their gains.
 */
public final class Hpgmg {
    private Hpgmg() {
    }

    /**
     * @param args upstream's two arguments and the options ({@code --help} lists them)
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** One mode on this rank: its transport and its hierarchy. */
    record Run(String mode, Transport transport, MultiGrid mg, List<double[]> results) {
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        HpgmgCommand o = new HpgmgCommand();
        CommandLine cl = CommandLines.of(o);
        boolean speak = LauncherRank.speaksForJob();
        OptionalInt status = CommandLines.parse(cl, args, out, err, speak);
        if (status.isPresent()) {
            return status.getAsInt();
        }
        List<HpgmgCommand.Mode> modes = o.parsedModes();
        int rank = -1;
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment()) {
            rank = boot.rank();
            ProblemSize size;
            try {
                size = ProblemSize.of(o.log2Box, o.boxesPerRank, boot.size());
            } catch (IllegalArgumentException e) {
                if (rank == 0) {
                    err.println("hpgmg: " + e.getMessage());
                }
                return CommandLines.USAGE_ERROR;
            }
            List<String> summary = new ArrayList<>();
            if (modes.contains(HpgmgCommand.Mode.MPJ)) {
                summary.addAll(MpjRunner.run(boot, o, rank == 0 ? out : null));
            }
            List<HpgmgCommand.Mode> libmp = modes.stream().filter(m -> m != HpgmgCommand.Mode.MPJ).toList();
            if (!libmp.isEmpty()) {
                try (Mp mp = Mp.init(boot, MpConfig.defaults())) {
                    summary.addAll(runLibmp(mp, boot, libmp, o, size, rank == 0 ? out : null));
                }
            }
            if (rank == 0) {
                Summary.print(out, summary, o, size, boot.size());
            }
            return 0;
        } catch (Exception e) {
            err.println("hpgmg" + (rank >= 0 ? " (rank " + rank + ")" : "") + ": " + e.getMessage());
            if (System.getenv("GDASYNC_HPGMG_TRACE") != null) {
                e.printStackTrace(err);
            }
            return 1;
        }
    }

    static void header(PrintStream out, int ranks) {
        out.println();
        out.println();
        out.println("********************************************************************************");
        out.println("***                            HPGMG-FV Benchmark                            ***");
        out.println("********************************************************************************");
        out.println(ranks + " MPI Tasks of 1 threads");
        out.println();
        out.println();
        out.println("===== Benchmark setup ==========================================================");
    }

    static List<String> runLibmp(Mp mp, EnvBootstrap boot, List<HpgmgCommand.Mode> modes, HpgmgCommand o,
                                 ProblemSize size, PrintStream out) {
        List<Run> runs = new ArrayList<>();
        Operators ops = new HostOperators();
        try {
            if (out != null) {
                header(out, mp.size());
            }
            for (HpgmgCommand.Mode m : modes) {
                // A comm layer (ready table) per mode: each mode's handshakes count on their own.
                Comm comm = Comm.init(mp);
                Transport t = switch (m) {
                    case HOST -> new HostTransport(mp, comm);
                    case SA -> new StreamTransport(mp, comm, HostStream.create("hpgmg-sa-" + mp.rank()));
                    case KI -> new KiTransport(mp, comm, HostKiExecutor.create("hpgmg-ki-" + mp.rank(),
                            HostKiExecutor.Options.defaults().withAfterRing(mp::progressStoreRings)));
                    case MPJ -> throw new IllegalStateException("mpj runs in its own JVMs");
                };
                MultiGrid mg = new MultiGrid(t, ops, runs.isEmpty() ? out : null);
                runs.add(new Run(t.mode(), t, mg, new ArrayList<>()));
                mg.build(size.boxesIn(), size.boxDim());
            }
            // Rank 0's warm-up decision travels through the bootstrap: outside the timed solves, and the same
            // channel for every mode.
            return Bench.run(runs, o, out, mine -> boot.allGather(new byte[]{(byte) (mine ? 1 : 0)}).getFirst()[0] == 1);
        } finally {
            for (Run r : runs) {
                r.transport().close();
            }
        }
    }
}
