package dev.gdasync.apps.collectives;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code OmpiCollBench} run on its own ({@code scripts/bench mpj}'s Open MPI collectives): bad arguments are refused
 * with what is wrong and exit status 2, before anything runs; good ones run the C program under Open MPI and print a
 * result line per case in MpjCollBench's form, or say why Open MPI is missing and exit 0.
 */
@Timeout(120)
class OmpiCollBenchTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) throws Exception {
        return OmpiCollBench.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    /** Runs with {@code args}, which must be refused with exit status 2 and a message containing {@code said}. */
    private void assertRefused(String said, String... args) throws Exception {
        err.reset();
        assertEquals(2, run(args), String.join(" ", args));
        assertTrue(err().contains(said), err());
    }

    @Test
    void badArgumentsAreRefusedWithWhatIsWrong() throws Exception {
        assertRefused("expected RANKS REPS COLL:BYTES:ITERS:WARMUP..., got 2 arguments", "2", "3");
        assertRefused("RANKS must be a number, got 'two'", "two", "3", "allreduce:8:10:1");
        assertRefused("RANKS must be at least 2 and REPS at least 1, got 1 and 3", "1", "3", "allreduce:8:10:1");
        assertRefused("not COLL:BYTES:ITERS:WARMUP: allreduce:8", "2", "3", "allreduce:8");
        assertRefused("case allreduce:8:x:1: BYTES, ITERS and WARMUP must be numbers", "2", "3", "allreduce:8:x:1");
        assertRefused("case alltoall:8:10:1: BYTES must give every one of the 4 ranks an int", "4", "3",
                "alltoall:8:10:1");
        assertRefused("case allreduce:8:0:1: BYTES must give every one of the 2 ranks an int, ITERS and WARMUP be at"
                + " least 1", "2", "3", "allreduce:8:0:1");
        assertEquals("", out.toString(StandardCharsets.UTF_8), "nothing ran");
    }

    @Test
    void goodArgumentsPrintAResultLinePerCaseOrWhyOpenMpiIsMissing() throws Exception {
        assertEquals(0, run("2", "2", "allreduce:8:20:5", "bcast:4096:10:2"), err());
        String o = out.toString(StandardCharsets.UTF_8);
        if (o.contains("ompi: skipped: ")) {
            System.out.println("OmpiCollBenchTest: Open MPI is missing here, only its skip line is checked: " + o.strip());
            assertTrue(o.contains(OmpiCollBench.INSTALL_HINT), o);
            return;
        }
        List<String> results = o.lines().filter(l -> l.startsWith(OmpiCollBench.RESULT + " ")).toList();
        assertEquals(2, results.size(), o);
        assertTrue(results.get(0).matches(OmpiCollBench.RESULT + " allreduce 8 20( [0-9]+\\.[0-9]{4}){2}"), o);
        assertTrue(results.get(1).matches(OmpiCollBench.RESULT + " bcast 4096 10( [0-9]+\\.[0-9]{4}){2}"), o);
    }
}
