package dev.gdasync.apps.comd;

import dev.gdasync.apps.common.LauncherRank;
import dev.gdasync.apps.common.MpjStarter;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.stream.StreamFailedException;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.KiExecutor;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.cli.CommandLines;
import picocli.CommandLine;

import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.function.Function;

/**
 * {@code scripts/mprun -np 2 comd -i 2 --mode mpj,host,sa,ki}: CoMD 1.1, the molecular dynamics proxy application
 * (Lennard-Jones or EAM copper, link cells, velocity Verlet, spatial decomposition), with its halo exchange and atom
 * redistribution in each communication model, run side by side. Every mode prints CoMD's output (the energy table
 * every {@code -n} steps and the validation); rank 0 then prints the time per step of each mode split into force,
 * redistribution and exchange, the gain of each over {@code mpj}, and writes the CSV and the plot.
 */
public final class Comd {
    private Comd() {
    }

    /**
     * @param args CoMD's options and the project's ({@code --mode}, {@code --reps}, {@code --csv}, {@code --plot}); see
     *             {@code --help}
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs CoMD as one rank.
     *
     * @param args the command line
     * @param out  where rank 0 prints
     * @param err  where errors go
     * @return the exit status: 0, 1 on a failure, 2 on a wrong command line
     */
    static int run(String[] args, PrintStream out, PrintStream err) {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        boolean speaker = LauncherRank.speaksForJob();
        ComdCommand command = new ComdCommand();
        CommandLine cl = command.commandLine();
        OptionalInt stop = CommandLines.parse(cl, args, out, err, speaker);
        if (stop.isPresent()) {
            return stop.getAsInt();
        }
        ComdOptions o = command.options();
        Potential pot;
        try {
            pot = potential(o);
            sanityChecks(o, pot, LauncherRank.size());
            if (o.modes().contains(Mode.MPJ)) {
                MpjStarter.require(System.getenv(MpjStarter.MPJ_HOME), "comd");
            }
        } catch (IllegalArgumentException e) {
            if (speaker) {
                err.println("comd: " + e.getMessage());
            }
            return 2;
        } catch (IllegalStateException e) {
            if (speaker) {
                err.println("comd: " + e.getMessage());
            }
            return 1;
        }
        int rank = -1;
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment()) {
            rank = boot.rank();
            if (boot.size() != o.ranks()) {
                if (rank == 0) {
                    err.println("comd: -i x -j x -k = " + o.xproc() + " x " + o.yproc() + " x " + o.zproc() + " = " + o.ranks()
                            + " ranks, but the job has " + boot.size() + " (scripts/mprun -np " + o.ranks() + " comd ...)");
                }
                return 2;
            }
            List<RunResult> results = runModes(boot, o, pot, out);
            if (rank == 0) {
                ComdReport.print(o, results, out);
                if (o.csv() != null) {
                    ComdCsv.append(o, ComdReport.medians(o, results), o.csv());
                    out.println("wrote " + o.csv());
                    if (o.plot() != null) {
                        StepPlot.write(ComdCsv.read(o.csv()), o.plot());
                        out.println("wrote " + o.plot());
                    }
                }
                out.flush();
            }
            return 0;
        } catch (MpException | KiException | StreamFailedException | UncheckedIOException e) { // MpException: bootstrap failures too
            err.println("comd" + (rank >= 0 ? " (rank " + rank + ")" : "") + ": " + e.getMessage());
            return 1;
        } catch (Exception e) {
            err.println("comd" + (rank >= 0 ? " (rank " + rank + ")" : "") + " failed: " + e);
            e.printStackTrace(err);
            return 1;
        }
    }

    private static List<RunResult> runModes(EnvBootstrap boot, ComdOptions o, Potential pot, PrintStream out) throws Exception {
        boolean libmp = o.modes().stream().anyMatch(m -> m != Mode.MPJ);
        List<RunResult> results = new ArrayList<>();
        // Receives are posted a round ahead and sa queues up to 16 rounds: deeper queues than LibMP's 512.
        Mp mp = libmp ? Mp.init(boot, MpConfig.defaults().withQueuePairs(new QueuePairConfig(1024, 1024, 2048))) : null;
        // The libmp models' reductions run on libmp's collectives (collective: every rank opens them here).
        LibmpCollectives coll = libmp ? new LibmpCollectives(mp) : null;
        KiExecutor ki = null;
        try {
            if (o.modes().contains(Mode.KI)) {
                // The kernel's threads run the NIC's work for their own rings (docs/ki.md, "On the host").
                ki = HostKiExecutor.create("comd-ki-rank" + boot.rank(),
                        HostKiExecutor.Options.defaults().withAfterRing(mp::progressStoreRings));
            }
            for (int rep = 0; rep < o.reps(); rep++) {
                for (Mode m : o.modes()) {
                    boolean print = rep == 0;
                    PrintStream p = print && boot.rank() == 0 ? out : null;
                    if (p != null) {
                        p.println();
                        p.println("==== comd --mode " + m.label() + " ====");
                        p.flush();
                    }
                    RunResult r;
                    if (m == Mode.MPJ) {
                        r = MpjRunner.run(boot, o, print, out);
                    } else {
                        r = ComdRun.run(o, pot, coll, driverOf(m, mp, ki), m.label(), p);
                    }
                    if (boot.rank() == 0) {
                        results.add(r);
                        if (!print) {
                            out.println(String.format(Locale.ROOT, "comd: %s run %d of %d: %.3f ms per step; final energy %s,"
                                    + " %d atoms", m.label(), rep + 1, o.reps(), r.stepMs(), Text.fixed(r.eFinal(), 0, 12), r.atomsFinal()));
                            out.flush();
                        }
                    }
                }
            }
        } finally {
            if (ki != null) {
                ki.close();
            }
            if (coll != null) {
                coll.close();
            }
        }
        if (mp != null) {
            mp.close();
        }
        return results;
    }

    static Function<Simulation, Function<Integer, StepDriver>> driverOf(Mode m, Mp mp, KiExecutor ki) {
        return sim -> rounds -> switch (m) {
            case HOST -> new HostDriver(mp, sim.halos(), rounds);
            case SA -> new StreamDriver(mp, sim.halos(), rounds);
            case KI -> new KiDriver(mp, ki, sim.halos(), rounds);
            case MPJ -> throw new IllegalArgumentException("mpj runs in JVMs of its own");
        };
    }

    /** @return a mode's one-line description */
    static String describe(Mode m) {
        return switch (m) {
            case MPJ -> "MPJ Express Sendrecv per axis and face, as CoMD's MPI (multicore device, ranks as threads of one JVM)";
            case HOST -> "libmp on the CPU: receives posted a round ahead, isend of the bytes packed, wait";
            case SA -> "a host stream runs each step: pack, ring the sends, wait for the receives, unpack; the CPU prepares ahead";
            case KI -> "each axis exchange is a fused kernel on the host KI executor (pack and ring, wait, unpack)";
        };
    }

    /**
     * @return the run's potential: Lennard-Jones, or the EAM funcfl file
     * @throws IllegalArgumentException naming the file when it cannot be read
     */
    static Potential potential(ComdOptions o) {
        return o.eam() ? Eam.readFuncfl(o.potDir(), o.potName()) : new LennardJones();
    }

    /**
     * CoMD's checks of the input: the lattice type, and a brick of at least two cutoffs along each axis on every rank.
     *
     * @param size the job's ranks as the launcher gave them, or -1 when unknown
     * @throws IllegalArgumentException with a one-line message that says what to change
     */
    static void sanityChecks(ComdOptions o, Potential pot, int size) {
        if (!pot.latticeType().equalsIgnoreCase("FCC")) {
            throw new IllegalArgumentException("the potential's lattice is " + pot.latticeType() + "; CoMD builds FCC lattices only");
        }
        if (size > 0 && size != o.ranks()) {
            throw new IllegalArgumentException("-i x -j x -k = " + o.xproc() + " x " + o.yproc() + " x " + o.zproc() + " = "
                    + o.ranks() + " ranks, but the job has " + size + " (scripts/mprun -np " + o.ranks() + " comd ...)");
        }
        double lattice = o.lat() < 0 ? pot.lattice() : o.lat();
        int[] cells = {o.nx(), o.ny(), o.nz()};
        int[] procs = {o.xproc(), o.yproc(), o.zproc()};
        String[] axis = {"x", "y", "z"};
        String[] cellOpt = {"-x", "-y", "-z"};
        String[] procOpt = {"-i", "-j", "-k"};
        for (int a = 0; a < 3; a++) {
            double size1 = cells[a] * lattice;
            double min = 2 * pot.cutoff() * procs[a];
            if (size1 < min) {
                int need = (int) Math.ceil(min / lattice);
                throw new IllegalArgumentException(String.format(Locale.ROOT, "the simulation is too small for %d ranks along %s:"
                                + " %d unit cells are %.3f A, and each rank needs two cutoffs (%.3f A) of it; give %s %d or more,"
                                + " or fewer ranks (%s)", procs[a], axis[a], cells[a], size1, 2 * pot.cutoff(), cellOpt[a], need,
                        procOpt[a]));
            }
        }
    }
}
