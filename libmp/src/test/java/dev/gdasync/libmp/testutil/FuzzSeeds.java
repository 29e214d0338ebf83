package dev.gdasync.libmp.testutil;

import java.util.stream.LongStream;

/**
 * Seeds for the random-sequence (property) tests: a fixed, bounded set by default so that the normal test run stays
 * short and repeatable; more, or a different start, on request.
 *
 * <ul>
 *   <li>{@code -Dgdasync.fuzz.sequences=N}: run N sequences per property instead of each test's default.</li>
 *   <li>{@code -Dgdasync.fuzz.seed=S}: start the seeds at S instead of {@link #BASE}.</li>
 * </ul>
 * Each sequence is named by its seed ({@code seed=...}) in the test name and in every failure message, so that a
 * failing sequence can be run alone with {@code -Dgdasync.fuzz.seed=S -Dgdasync.fuzz.sequences=1}.
 */
public final class FuzzSeeds {
    /** The first seed when none is given. */
    public static final long BASE = 0x31A110CL;
    /** The system property that sets how many sequences a property runs. */
    public static final String SEQUENCES = "gdasync.fuzz.sequences";
    /** The system property that sets the first seed. */
    public static final String SEED = "gdasync.fuzz.seed";

    private FuzzSeeds() {
    }

    /**
     * @param defaultCount sequences to run when {@value #SEQUENCES} is not set
     * @return consecutive seeds from {@value #SEED} (or {@link #BASE})
     */
    public static LongStream seeds(int defaultCount) {
        long count = Long.getLong(SEQUENCES, defaultCount);
        long first = Long.decode(System.getProperty(SEED, Long.toString(BASE)));
        return LongStream.range(0, count).map(i -> first + i);
    }
}
