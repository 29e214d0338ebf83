package dev.gdasync.libmp.mpj;

import dev.gdasync.libmp.bootstrap.JobEnvironment;

/**
 * The main class of every rank of {@code scripts/mprun --mpj}: installs {@link GdasyncDevice} as MPJ Express's device,
 * then runs the program's main with the arguments MPJ's {@code MPI.Init} expects first ({@code RANK CONF DEVICE}: the
 * rank as the bootstrap finds it ({@code scripts/mprun}'s {@code GDASYNC_RANK}, Open MPI's {@code mpirun}, Slurm's
 * {@code srun}), and {@code gdasync} twice, which MPJ ignores since a device is installed), followed
 * by the program's own arguments, which {@code MPI.Init} returns. The program's main is the one {@code java} would run
 * ({@link ProgramMain}: a class that is not public, an instance main, a {@code main()} without arguments).
 *
 * <pre>java -cp ... dev.gdasync.libmp.mpj.MpjMain MAIN_CLASS [ARGS...]</pre>
 */
public final class MpjMain {
    private MpjMain() {
    }

    /**
     * @param args the program's main class, then its arguments
     * @throws Throwable whatever the program's main throws
     */
    public static void main(String[] args) throws Throwable {
        if (args.length < 1) {
            System.err.println("usage: MpjMain MAIN_CLASS [ARGS...] (started by scripts/mprun --mpj)");
            System.exit(2);
        }
        Class<?> program;
        try {
            program = Class.forName(args[0], true, Thread.currentThread().getContextClassLoader());
        } catch (ClassNotFoundException e) {
            System.err.println("MpjMain: no class " + args[0] + " on the class path");
            System.exit(2);
            return;
        }
        // The rank as the bootstrap finds it: scripts/mprun's GDASYNC_RANK, Open MPI's mpirun, or Slurm's srun.
        String rank;
        try {
            rank = Integer.toString(JobEnvironment.fromEnvironment().rank());
        } catch (RuntimeException e) {
            System.err.println("MpjMain: " + e.getMessage() + " (start MPJ programs over gdasync with scripts/mprun --mpj,"
                    + " or with mpirun or srun as other gdasync jobs: docs/mpj.md)");
            System.exit(2);
            return;
        }
        ProgramMain main;
        try {
            main = ProgramMain.of(program);
        } catch (IllegalArgumentException | SecurityException e) {
            System.err.println("MpjMain: " + e.getMessage());
            System.exit(2);
            return;
        }
        GdasyncDevice.install(new GdasyncDevice());
        String[] mpjArgs = new String[args.length + 2];
        mpjArgs[0] = rank.strip();
        mpjArgs[1] = "gdasync";
        mpjArgs[2] = "gdasync";
        System.arraycopy(args, 1, mpjArgs, 3, args.length - 1);
        main.run(mpjArgs);
    }
}
