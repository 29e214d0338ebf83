package dev.gdasync.apps.pingpong;

import java.util.List;
import java.util.Map;

/**
 * {@code ompi}: an MPI ping-pong in C ({@code cpeers/ompi.c}, {@code MPI_Send}/{@code MPI_Recv}, built with mpicc at
 * first use) under Open MPI's {@code mpirun}, two ranks on this host over its shared-memory transport ({@link OpenMpi}). Each
 * rank pins itself to the CPU of the same rank of the Java modes.
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
        return "ompi: C MPI_Send/MPI_Recv under " + version + ", " + OpenMpi.TRANSPORT;
    }

    @Override
    public List<List<String>> commands(int bytes, int iters) {
        List<String> c = OpenMpi.launch(mpirun, 2);
        c.addAll(List.of(binary, String.valueOf(bytes), String.valueOf(iters), String.valueOf(CPeer.warmupFor(iters)),
                String.valueOf(cpus[0]), String.valueOf(cpus[1])));
        return List.of(c);
    }

    @Override
    public Map<String, String> environment() {
        return OpenMpi.environment();
    }

    @Override
    public CPeerRun parse(String output, int iters) {
        return TripsOutput.parse("ompi", output, iters);
    }
}
