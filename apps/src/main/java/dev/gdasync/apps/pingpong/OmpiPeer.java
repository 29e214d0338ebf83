package dev.gdasync.apps.pingpong;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code ompi}: an MPI ping-pong in C ({@code cpeers/ompi.c}, {@code MPI_Send}/{@code MPI_Recv}, built with mpicc at
 * first use) under Open MPI's {@code mpirun}, two ranks on this host over its shared-memory transport: the ob1
 * messaging layer with the {@code vader} byte transfer layer (and {@code self}), so that neither UCX nor TCP carries
 * a byte. Each rank pins itself to the CPU of the same rank of the Java modes. As root, mpirun needs
 * {@code --allow-run-as-root}; {@code --oversubscribe} lets two ranks run where the machine's slots are fewer.
 */
final class OmpiPeer implements CPeer {
    private final String binary;
    private final String mpirun;
    private final int[] cpus;
    private final String version;

    /**
     * @param binary  the built program
     * @param mpirun  Open MPI's launcher
     * @param cpus    the CPUs of rank 0 and rank 1, or -1s
     * @param version Open MPI's version line, for the header
     */
    OmpiPeer(String binary, String mpirun, int[] cpus, String version) {
        this.binary = binary;
        this.mpirun = mpirun;
        this.cpus = cpus.clone();
        this.version = version;
    }


    @Override
    public String label() {
        return "ompi";
    }

    @Override
    public String describe() {
        return "ompi: C MPI_Send/MPI_Recv under " + version + ", pml ob1 over btl vader (shared memory) and self";
    }

    @Override
    public List<List<String>> commands(int bytes, int iters) {
        List<String> c = new ArrayList<>(List.of(mpirun));
        if ("root".equals(System.getProperty("user.name"))) {
            c.add("--allow-run-as-root");
        }
        c.addAll(List.of("--oversubscribe", "-np", "2", "--bind-to", "none", "--mca", "pml", "ob1", "--mca", "btl",
                "self,vader", binary, String.valueOf(bytes), String.valueOf(iters), String.valueOf(CPeer.warmupFor(iters)),
                String.valueOf(cpus[0]), String.valueOf(cpus[1])));
        return List.of(c);
    }

    @Override
    public Map<String, String> environment() {
        // No UCX pml or osc even where Open MPI was built with them: they would pick their own transports.
        return Map.of("OMPI_MCA_osc", "^ucx", "OMPI_MCA_btl_base_warn_component_unused", "0");
    }

    @Override
    public CPeerRun parse(String output, int iters) {
        return TripsOutput.parse("ompi", output, iters);
    }
}
