package dev.gdasync.apps.hello;

import dev.gdasync.libmp.bootstrap.BootstrapException;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;
import dev.gdasync.libmp.cli.CommandLines;
import dev.gdasync.libmp.cli.ProjectVersion;
import picocli.CommandLine.Command;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

/**
 * {@code scripts/mprun -np N hello}: every rank joins the job through the environment bootstrap, gathers
 * every rank's pid and prints what it got; a check that the launcher (or srun, or mpirun) and the
 * rendezvous work.
 */
@Command(name = "scripts/mprun -np N hello", mixinStandardHelpOptions = true, versionProvider = ProjectVersion.class,
        usageHelpAutoWidth = false,
        description = "Every rank joins the job through the environment bootstrap, gathers every rank's pid and prints what"
                + " it got: a check that the launcher (or srun, or mpirun) and the rendezvous work.")
public final class Hello {
    private Hello() {
    }

    /**
     * @param args nothing, or {@code --help} or {@code --version}
     */
    public static void main(String[] args) {
        boolean speaker = CommandLines.speaksForJob();
        OptionalInt stop = CommandLines.parse(CommandLines.of(new Hello()), args, System.out, System.err, speaker);
        if (stop.isPresent()) {
            System.exit(stop.getAsInt());
        }
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment()) {
            String mine = "pid " + ProcessHandle.current().pid();
            List<String> all = new ArrayList<>();
            for (byte[] b : boot.allGather(mine.getBytes(StandardCharsets.UTF_8))) {
                all.add(new String(b, StandardCharsets.UTF_8));
            }
            boot.barrier();
            System.out.println("rank " + boot.rank() + " of " + boot.size() + " (job " + boot.jobId() + ", from "
                    + boot.environment().source() + "): " + all);
        } catch (BootstrapException e) {
            System.err.println("hello: " + e.getMessage());
            System.exit(1);
        }
    }
}
