package dev.gdasync.apps.comd;

import dev.gdasync.apps.common.MpjProgram;
import mpi.Intracomm;
import mpi.MPI;

import java.util.Arrays;

/**
 * The {@code mpj} mode's program: CoMD on MPJ Express, started by {@link MpjRunner} under MPJ's starter with the
 * multicore device (the ranks are threads of one JVM). Rank 0 prints CoMD's output (unless told {@code quiet}) and one
 * {@value #RESULT} line; a failure prints {@value #ERROR} and ends the JVM with status 3 (with the multicore device a
 * rank that only threw would leave the others blocked in {@code Sendrecv}).
 */
public final class ComdMpj {
    static final String RESULT = "COMD-MPJ-RESULT";
    static final String ERROR = "COMD-MPJ-ERROR";

    private ComdMpj() {
    }

    /**
     * @param args MPJ's arguments, then {@code print} or {@code quiet}, then CoMD's options
     */
    public static void main(String[] args) {
        MpjProgram.main(args, ERROR, ComdMpj::run);
    }

    private static void run(String[] args) {
        Intracomm world = MPI.COMM_WORLD;
        boolean print = args.length > 0 && args[0].equals("print");
        ComdCommand command = new ComdCommand();
        dev.gdasync.libmp.cli.CommandLines.parseOrThrow(command.commandLine(), Arrays.copyOfRange(args, 1, args.length));
        ComdOptions o = command.options();
        Potential pot = Comd.potential(o);
        RunResult r = ComdRun.run(o, pot, new MpjCollectives(world), sim -> rounds -> new MpjDriver(world, sim.halos()),
                Mode.MPJ.label(), print ? System.out : null);
        if (world.Rank() == 0) {
            System.out.println(RESULT + " " + r.encode());
            System.out.flush();
        }
    }
}
