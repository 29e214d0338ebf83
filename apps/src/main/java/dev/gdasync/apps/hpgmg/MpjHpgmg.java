package dev.gdasync.apps.hpgmg;

import dev.gdasync.apps.common.MpjProgram;
import dev.gdasync.libmp.cli.CommandLines;
import mpi.MPI;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code mpj} mode's program, run by {@link MpjRunner} under MPJ Express's starter with the multicore
 * device (the ranks are threads of one JVM): the same solver and benchmark with {@link MpjTransport}. Rank 0
 * prints upstream's output and one {@value #RESULT} line per problem size; a failure prints {@value #ERROR}
 * and exits the JVM with status 3 (a rank that merely threw would leave its peers blocked).
 */
public final class MpjHpgmg {
    static final String RESULT = "HPGMG-MPJ-RESULT";
    static final String ERROR = "HPGMG-MPJ-ERROR";

    private MpjHpgmg() {
    }

    /**
     * @param args MPJ's arguments, then the hpgmg command line
     */
    public static void main(String[] args) {
        MpjProgram.main(args, ERROR, MpjHpgmg::run);
    }

    private static void run(String[] args) throws Exception {
        HpgmgCommand o = new HpgmgCommand();
        CommandLines.parseOrThrow(CommandLines.of(o), args);
        MpjTransport t = new MpjTransport(MPI.COMM_WORLD);
        ProblemSize size = ProblemSize.of(o.log2Box, o.boxesPerRank, t.size());
        PrintStream out = t.rank() == 0 ? System.out : null;
        MultiGrid mg = new MultiGrid(t, new HostOperators(), out);
        mg.build(size.boxesIn(), size.boxDim());
        List<Hpgmg.Run> runs = List.of(new Hpgmg.Run("mpj", t, mg, new ArrayList<>()));
        List<String> rows = Bench.run(runs, o, out, goOn -> {
            int[] v = {goOn ? 1 : 0};
            MPI.COMM_WORLD.Bcast(v, 0, 1, MPI.INT, 0);
            return v[0] == 1;
        });
        if (out != null) {
            for (String r : rows) {
                out.println(RESULT + " " + r);
            }
            out.flush();
        }
        t.barrier();
    }
}
