package dev.gdasync.apps.mpjsuite;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The cases of MPJ Express 0.44's {@code TestSuite}, in its order ({@code testsuite-cases.txt} beside this class):
 * the classes its main constructs, with their packages, and {@link MpjSuiteCases#INIT_LOOP} for its ten
 * {@code MPI.Init}/{@code MPI.Finalize} rounds; and the cases of the suite's folders {@code TestSuite} does not run
 * ({@code beyond-testsuite-cases.txt}: threads, signals, perf, the Java Grande benchmarks, the mpiJava
 * micro-benchmarks).
 */
public final class TestSuiteCases {
    private static final String FILE = "testsuite-cases.txt";
    private static final String BEYOND_FILE = "beyond-testsuite-cases.txt";
    private static final String SMALL_JOBS_ONLY = "np<=2 ";

    private TestSuiteCases() {
    }

    /**
     * @param ranks the job's ranks
     * @return the cases TestSuite runs on that many ranks (the buffer tests only on at most two, as TestSuite)
     */
    public static List<String> forRanks(int ranks) {
        return read(FILE, ranks);
    }

    /**
     * @param ranks the job's ranks
     * @return the cases of the suite's folders TestSuite does not run, for that many ranks
     */
    public static List<String> beyond(int ranks) {
        return read(BEYOND_FILE, ranks);
    }

    private static List<String> read(String file, int ranks) {
        List<String> cases = new ArrayList<>();
        try (InputStream in = TestSuiteCases.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException(file + " is missing beside " + TestSuiteCases.class.getName());
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                String c = line.strip();
                if (c.isEmpty() || c.startsWith("#")) {
                    continue;
                }
                if (c.startsWith(SMALL_JOBS_ONLY)) {
                    if (ranks > 2) {
                        continue;
                    }
                    c = c.substring(SMALL_JOBS_ONLY.length()).strip();
                }
                cases.add(c);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return List.copyOf(cases);
    }
}
