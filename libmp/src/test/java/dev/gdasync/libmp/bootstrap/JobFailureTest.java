package dev.gdasync.libmp.bootstrap;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The order in which a job failure is told: the other ranks first, then this process's listeners, once. */
class JobFailureTest {
    @Test
    void theOtherRanksHearBeforeTheListenersWhichMayEndTheProcess() {
        JobFailure f = new JobFailure();
        List<String> order = new ArrayList<>();
        f.listen(why -> order.add("listener: " + why));
        assertTrue(f.fail("rank 1's process is gone", () -> order.add("members told")));
        assertEquals(List.of("members told", "listener: rank 1's process is gone"), order);
    }

    @Test
    void onlyTheFirstFailureCountsAndTellsAnyone() {
        JobFailure f = new JobFailure();
        List<String> order = new ArrayList<>();
        f.listen(order::add);
        assertTrue(f.fail("first", () -> order.add("members told first")));
        assertFalse(f.fail("second", () -> order.add("members told second")));
        assertEquals(List.of("members told first", "first"), order);
        assertEquals("first", f.reason());
        f.listen(why -> order.add("late: " + why));
        assertEquals("late: first", order.getLast(), "a late listener hears the first reason at once");
    }
}
