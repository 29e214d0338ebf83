package dev.gdasync.apps.comd;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The energies of the reference CoMD (its serial C build) at every printed step, matched to 1e-9 eV/atom on 1, 2 and 4
 * ranks and in the host, sa and ki modes (mpj is checked under the launcher, {@link ComdLaunchTest}), every atom kept;
 * small cases always, CoMD's default 32000-atom run with {@code -Dgdasync.comd.big=true}.
 */
class ComdReferenceTest {
    static final double TOLERANCE = 1e-9;
    /** The property that runs the default-size cases. */
    static final String BIG = "gdasync.comd.big";

    @TempDir
    Path shm;

    /** @return the reference lines of a resource, by options */
    static Map<String, List<double[]>> reference(String resource) throws IOException {
        Map<String, List<double[]>> cases = new LinkedHashMap<>();
        try (InputStream in = ComdReferenceTest.class.getResourceAsStream(resource);
             BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith("#") || line.isBlank()) {
                    continue;
                }
                String[] parts = line.split(";");
                String[] f = parts[1].split(",");
                double[] v = new double[f.length];
                for (int i = 0; i < f.length; i++) {
                    v[i] = Double.parseDouble(f[i]);
                }
                cases.computeIfAbsent(parts[0], k -> new ArrayList<>()).add(v);
            }
        }
        return cases;
    }

    /** Checks a run against reference lines (step, total, potential, kinetic, temperature, atoms). */
    static void check(String what, List<double[]> expected, RunResult r) {
        for (double[] e : expected) {
            RunResult.EnergyLine got = r.energies().stream().filter(l -> l.step() == (int) e[0]).findFirst()
                    .orElseThrow(() -> new AssertionError(what + ": no line for step " + (int) e[0]));
            assertEquals(e[1], got.total(), TOLERANCE, what + " total energy at step " + got.step());
            assertEquals(e[2], got.potential(), TOLERANCE, what + " potential energy at step " + got.step());
            assertEquals(e[3], got.kinetic(), TOLERANCE, what + " kinetic energy at step " + got.step());
            assertEquals(e[4], got.temperature(), 1e-4, what + " temperature at step " + got.step());
            assertEquals((long) e[5], got.atoms(), what + " atoms at step " + got.step());
        }
        assertEquals(r.atoms0(), r.atomsFinal(), what + ": atoms lost");
    }

    private void runCases(String resource, String decomposition, Mode... modes) throws Exception {
        for (Map.Entry<String, List<double[]>> c : reference(resource).entrySet()) {
            ComdOptions o = ComdRanks.options(ComdRanks.with(c.getKey() + " " + decomposition));
            for (Mode m : modes) {
                RunResult r = ComdRanks.run(shm, o, m, ComdRun.Hooks.NONE);
                check(c.getKey() + " " + decomposition + " --mode " + m.label(), c.getValue(), r);
            }
        }
    }

    @Test
    void oneRankMatchesTheReference() throws Exception {
        runCases("reference-energies.csv", "-i 1", Mode.HOST);
    }

    @Test
    void twoRanksMatchTheReferenceInEveryLibmpMode() throws Exception {
        runCases("reference-energies.csv", "-i 2", Mode.HOST, Mode.SA, Mode.KI);
    }

    @Test
    void fourRanksMatchTheReference() throws Exception {
        runCases("reference-energies.csv", "-i 2 -j 2", Mode.HOST, Mode.SA);
    }

    @Test
    void theDefaultRunMatchesTheReferenceOnOneTwoAndFourRanks() throws Exception {
        Assumptions.assumeTrue(Boolean.getBoolean(BIG), "the 32000-atom runs run with -D" + BIG + "=true");
        runCases("reference-energies-20.csv", "-i 1", Mode.HOST);
        runCases("reference-energies-20.csv", "-i 2", Mode.HOST, Mode.SA, Mode.KI);
        runCases("reference-energies-20.csv", "-i 2 -j 2", Mode.HOST, Mode.SA, Mode.KI);
    }

    @Test
    void energyIsConservedOverAThousandFemtoseconds() throws Exception {
        // 8^3 cells, 600 K, 500 steps of 2 fs: the total energy per atom stays within 1e-4 eV of its start (CoMD's 1 fs
        // default conserves it to 5 digits and more); the kinetic energy moves by far more than that.
        ComdOptions o = ComdRanks.options("-x 8 -y 8 -z 8 -N 500 -n 100 -D 2 -i 2");
        RunResult r = ComdRanks.run(shm, o, Mode.HOST, ComdRun.Hooks.NONE);
        double kMin = Double.MAX_VALUE;
        double kMax = 0;
        for (RunResult.EnergyLine l : r.energies()) {
            assertEquals(r.eInitial(), l.total(), 1e-4, "total energy at step " + l.step());
            kMin = Math.min(kMin, l.kinetic());
            kMax = Math.max(kMax, l.kinetic());
        }
        assertTrue(kMax - kMin > 0.01, "the kinetic energy changes: " + kMin + " .. " + kMax);
        assertEquals(r.atoms0(), r.atomsFinal());
    }
}
