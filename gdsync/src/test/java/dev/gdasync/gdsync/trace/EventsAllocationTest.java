package dev.gdasync.gdsync.trace;

import dev.gdasync.gdsync.cuda.FakeCuda;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With recording off, the instrumented hot paths allocate nothing: the events' objects are removed by the JIT (escape
 * analysis) and the counters are plain adds. {@link AllocationProbe} measures, in a fresh JVM, a CPU round trip
 * through the software NIC (every event site of the NIC: ring, drain, work request, both CQEs written, both reaped)
 * and a host executor's batch with a counted wait (the memop batch and stream wait events), per iteration.
 */
class EventsAllocationTest {
    private static final Pattern RESULT = Pattern.compile("roundTrip=(\\d+) batch=(\\d+)");

    @TempDir
    Path tmp;

    @Test
    void theHotPathsAllocateNothingWithoutARecording() {
        assertNoAllocation(List.of());
    }

    @Test
    void theHotPathsAllocateNothingWhenARecordingLeavesTheEventsDisabled() {
        // The JDK's own settings: a recording runs, and gdasync's events are disabled (their default).
        assertNoAllocation(List.of("-XX:StartFlightRecording:settings=default,filename=" + tmp.resolve("default.jfr"),
                "-Xlog:jfr+startup=error"));
    }

    private void assertNoAllocation(List<String> jvmOptions) {
        FakeCuda.Child child = FakeCuda.runChild(tmp, jvmOptions, AllocationProbe.class, tmp.toString());
        assertEquals(0, child.exitCode(), child.toString());
        Matcher m = RESULT.matcher(child.stdout());
        assertTrue(m.find(), child.toString());
        assertEquals(0, Long.parseLong(m.group(1)), "bytes allocated per CPU round trip: " + child.stdout());
        assertEquals(0, Long.parseLong(m.group(2)), "bytes allocated per host batch: " + child.stdout());
    }
}
