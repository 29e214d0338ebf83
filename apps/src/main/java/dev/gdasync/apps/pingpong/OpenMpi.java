package dev.gdasync.apps.pingpong;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Open MPI as the C peers run it ({@link OmpiPeer}, the collectives benchmark's {@code ompi} mode): {@code mpirun} on
 * this host, its ranks unbound, over its shared-memory transport only, the ob1 messaging layer with the {@code vader}
 * byte transfer layer (and {@code self}), so that neither UCX nor TCP carries a byte. As root, mpirun needs
 * {@code --allow-run-as-root}; {@code --oversubscribe} lets the ranks run where the machine's slots are fewer.
 */
public final class OpenMpi {
    /** The transport of {@link #launch}, in words, for the benchmarks' header lines. */
    public static final String TRANSPORT = "pml ob1 over btl vader (shared memory) and self";

    private OpenMpi() {
    }

    /** @return Open MPI's launcher on PATH, or empty */
    public static Optional<String> mpirun() {
        return Executables.onPath("mpirun").map(Object::toString);
    }

    /**
     * @param mpirun Open MPI's launcher
     * @param np     the ranks
     * @return the launcher and its options, to be followed by the program and its arguments
     */
    public static List<String> launch(String mpirun, int np) {
        List<String> c = new ArrayList<>(List.of(mpirun));
        if ("root".equals(System.getProperty("user.name"))) {
            c.add("--allow-run-as-root");
        }
        c.addAll(List.of("--oversubscribe", "-np", String.valueOf(np), "--bind-to", "none", "--mca", "pml", "ob1",
                "--mca", "btl", "self,vader"));
        return c;
    }

    /** @return the environment the launcher gets on top of this process's */
    public static Map<String, String> environment() {
        // No UCX pml or osc even where Open MPI was built with them: they would pick their own transports.
        return Map.of("OMPI_MCA_osc", "^ucx", "OMPI_MCA_btl_base_warn_component_unused", "0");
    }

    /**
     * @param mpirun Open MPI's launcher
     * @return its version line ({@code Open MPI 4.1.4}), or the launcher's path when it prints nothing in time
     * @throws IllegalStateException if it cannot be run
     */
    public static String version(String mpirun) {
        try {
            Process p = new ProcessBuilder(mpirun, "--version").redirectErrorStream(true).start();
            p.getOutputStream().close();
            String s = new String(p.getInputStream().readNBytes(4096), StandardCharsets.UTF_8).strip();
            p.waitFor(10, TimeUnit.SECONDS);
            p.destroyForcibly();
            String line = s.lines().findFirst().orElse("").strip();
            return line.isEmpty() ? mpirun : line.replace("mpirun (Open MPI) ", "Open MPI ");
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + mpirun + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return mpirun;
        }
    }
}
