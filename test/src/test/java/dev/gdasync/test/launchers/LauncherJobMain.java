package dev.gdasync.test.launchers;

import dev.gdasync.gdsync.concurrent.CpuShare;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A task of a job that a real launcher starts ({@code srun}, {@code sbatch}, {@code mpirun}): it joins through the
 * environment bootstrap like any gdasync program and uses libmp only, so it runs from the launcher jar too.
 *
 * <p>Modes (the first argument):
 * <ul>
 *   <li>{@code allpairs ROUNDS}: every rank exchanges a message with every other rank, ROUNDS times, each payload
 *       checked word by word (sender, receiver, round and index in every word); then it prints
 *       {@code rank R of N: ROUNDS all-pairs rounds OK; cpus ALLOWED; netns NS} and the CPU share registry's line
 *       ({@code cpu share: ...}) and exits 0.</li>
 *   <li>{@code quit K}: after the job has met, rank K prints {@code rank K quits with status 3} and exits with 3;
 *       the others wait for a message from it.</li>
 *   <li>{@code wait K}: rank K prints {@code ready PID} and sleeps; the others print {@code ready PID} and wait for
 *       a message from it (a test kills rank K, or cancels the job).</li>
 * </ul>
 * A waiting rank whose wait fails prints {@code rank R failed clearly: MESSAGE} (gdasync's error, which names the
 * peer) and exits 1.
 */
public final class LauncherJobMain {
    /** How long a wait may take: far beyond what a peer's failure takes to show, so a missed failure is a timeout. */
    private static final Duration WAIT_TIMEOUT = Duration.ofSeconds(60);
    private static final int BYTES = 4096;

    private LauncherJobMain() {
    }

    /**
     * @param args the mode and its number (see the class comment)
     * @throws Exception a failure, which makes the task exit non-zero
     */
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int number = Integer.parseInt(args[1]);
        MpConfig cfg = MpConfig.defaults().withWaitTimeout(WAIT_TIMEOUT);
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment(); Mp mp = Mp.init(boot, cfg)) {
            switch (mode) {
                case "allpairs" -> allPairs(mp, number);
                case "quit", "wait" -> waitFor(mp, number, mode.equals("quit"));
                default -> throw new IllegalArgumentException("unknown mode " + mode + " (allpairs, quit or wait)");
            }
        }
    }

    private static void allPairs(Mp mp, int rounds) throws IOException {
        int me = mp.rank();
        int n = mp.size();
        MemorySegment mem = mp.allocate(2L * n * BYTES);
        MpRegistration reg = mp.register(mem);
        for (int round = 0; round < rounds; round++) {
            List<MpRequest> all = new ArrayList<>();
            for (int p = 0; p < n; p++) {
                if (p != me) {
                    all.add(mp.irecv(mem.asSlice((long) p * BYTES, BYTES), p, reg));
                }
            }
            for (int p = 0; p < n; p++) {
                if (p != me) {
                    MemorySegment out = mem.asSlice((long) (n + p) * BYTES, BYTES);
                    for (int i = 0; i < BYTES / 8; i++) {
                        out.setAtIndex(JAVA_LONG, i, word(me, p, round, i));
                    }
                    all.add(mp.isend(out, p, reg));
                }
            }
            mp.waitAll(all);
            for (int p = 0; p < n; p++) {
                if (p != me) {
                    MemorySegment in = mem.asSlice((long) p * BYTES, BYTES);
                    for (int i = 0; i < BYTES / 8; i++) {
                        long got = in.getAtIndex(JAVA_LONG, i);
                        if (got != word(p, me, round, i)) {
                            throw new IllegalStateException("rank " + me + ": word " + i + " from rank " + p + " in round "
                                    + round + " is 0x" + Long.toHexString(got));
                        }
                    }
                }
            }
        }
        String netns = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
        System.out.println("rank " + me + " of " + n + ": " + rounds + " all-pairs rounds OK; cpus " + allowedCpus()
                + "; netns " + netns);
        System.out.println("rank " + me + " " + CpuShare.describe());
    }

    private static void waitFor(Mp mp, int victim, boolean quits) throws InterruptedException {
        MemorySegment mem = mp.allocate(BYTES);
        MpRegistration reg = mp.register(mem);
        int me = mp.rank();
        if (me == victim) {
            if (quits) {
                System.out.println("rank " + me + " quits with status 3");
                System.out.flush();
                Runtime.getRuntime().halt(3);
            }
            System.out.println("ready " + ProcessHandle.current().pid());
            System.out.flush();
            Thread.sleep(WAIT_TIMEOUT.toMillis());
            return;
        }
        MpRequest r = mp.irecv(mem, victim, reg);
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        try {
            mp.wait(r);
            System.out.println("rank " + me + ": unexpected, the receive from rank " + victim + " completed");
        } catch (MpException e) {
            System.out.println("rank " + me + " failed clearly: " + e.getMessage());
        }
        System.out.flush();
        Runtime.getRuntime().halt(1);
    }

    private static long word(int from, int to, int round, int index) {
        return ((long) from << 56) | ((long) to << 48) | ((long) round << 24) | index;
    }

    /** @return this process's allowed CPUs as the kernel lists them ({@code Cpus_allowed_list}) */
    static String allowedCpus() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return line.substring("Cpus_allowed_list:".length()).strip();
            }
        }
        return "unknown";
    }
}
