package dev.gdasync.gdsync.concurrent;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BackoffPolicyTest {

    @ParameterizedTest(name = "spins={0} yields={1} min={2} max={3}")
    @CsvSource({
            "-1, 0, 1, 1",
            "0, -1, 1, 1",
            "-9223372036854775808, 0, 1, 1",
            "0, 0, 0, 1",
            "0, 0, -5, 10",
            "0, 0, 10, 9",
            "0, 0, 1, 0",
            "10, 10, 1000, 999",
    })
    void badPoliciesAreRejected(long spins, long yields, long minPark, long maxPark) {
        var e = assertThrows(IllegalArgumentException.class, () -> new BackoffPolicy(spins, yields, minPark, maxPark));
        assertTrue(e.getMessage().contains(spins < 0 || yields < 0 ? "spins and yields" : "park times"), e.getMessage());
    }

    @ParameterizedTest(name = "spins={0} yields={1} min={2} max={3}")
    @CsvSource({
            "0, 0, 1, 1",
            "0, 0, 1, 9223372036854775807",
            "20000, 200, 1000, 50000",
            "9223372036854775807, 0, 5, 5",
    })
    void goodPoliciesAreAccepted(long spins, long yields, long minPark, long maxPark) {
        BackoffPolicy p = assertDoesNotThrow(() -> new BackoffPolicy(spins, yields, minPark, maxPark));
        assertEquals(spins, p.spins());
        assertEquals(yields, p.yields());
        assertEquals(minPark, p.minParkNanos());
        assertEquals(maxPark, p.maxParkNanos());
        assertEquals(yields, p.ownCpuYields(), "four components: as many yields whatever the CPUs");
    }

    @Test
    void spinThenYieldSpinsShortAndParksNoSoonerThanLowLatency() {
        BackoffPolicy p = BackoffPolicy.SPIN_THEN_YIELD;
        assertTrue(p.spins() < BackoffPolicy.LOW_LATENCY.spins(), p.toString());
        assertTrue(p.spins() + p.yields() >= BackoffPolicy.LOW_LATENCY.spins() + BackoffPolicy.LOW_LATENCY.yields(),
                "it parks no sooner than LOW_LATENCY: " + p);
        assertEquals(p.yields(), p.ownCpuYields(), "it yields as often whatever the CPUs");
    }

    @Test
    void peerWaitsYieldLongWithACpuEachAndParkEarlyWhenOversubscribed() {
        BackoffPolicy p = BackoffPolicy.PEER_WAIT;
        assertEquals(BackoffPolicy.SPIN_THEN_YIELD.ownCpuYields(), p.ownCpuYields(), p.toString());
        assertTrue(p.yields() < p.ownCpuYields(), p.toString());
        assertEquals(BackoffPolicy.LOW_LATENCY.maxParkNanos(), p.maxParkNanos());
    }

    @Test
    void negativeOwnCpuYieldsAreRejected() {
        var e = assertThrows(IllegalArgumentException.class, () -> new BackoffPolicy(0, 0, 1, 1, -1));
        assertTrue(e.getMessage().contains("ownCpuYields=-1"), e.getMessage());
    }

    @Test
    void presetsAreValidAndBounded() {
        for (BackoffPolicy p : new BackoffPolicy[] {BackoffPolicy.LOW_LATENCY, BackoffPolicy.BACKGROUND}) {
            assertTrue(p.minParkNanos() > 0 && p.minParkNanos() <= p.maxParkNanos(), p.toString());
            assertTrue(p.maxParkNanos() <= 1_000_000, "a parked poller must notice work within a millisecond: " + p);
        }
        assertTrue(BackoffPolicy.LOW_LATENCY.maxParkNanos() <= BackoffPolicy.BACKGROUND.maxParkNanos());
    }

    @Test
    void idlerParksAfterSpinsPlusYieldsIdles() {
        BackoffIdler idler = new BackoffIdler(new BackoffPolicy(5, 3, 1_000, 4_000));
        for (int i = 0; i < 8; i++) {
            assertFalse(idler.isParking(), "parking after only " + i + " idles");
            idler.idle();
        }
        assertTrue(idler.isParking(), "not parking after spins + yields idles");
        idler.idle(); // a park
        idler.idle();
        assertTrue(idler.isParking());

        idler.reset();
        assertFalse(idler.isParking(), "reset must return to the spin phase");
        for (int i = 0; i < 7; i++) {
            idler.idle();
        }
        assertFalse(idler.isParking(), "after reset the full spin and yield phases come again");
        idler.idle();
        assertTrue(idler.isParking());
    }

    @Test
    void idleWithWorkResets() {
        BackoffIdler idler = new BackoffIdler(new BackoffPolicy(1, 1, 1_000, 1_000));
        idler.idle(0);
        idler.idle(0);
        assertTrue(idler.isParking());
        idler.idle(0);
        assertTrue(idler.isParking());
        idler.idle(3);
        assertFalse(idler.isParking());
        idler.idle(0);
        assertFalse(idler.isParking());
        idler.idle(0);
        assertTrue(idler.isParking());
    }

    @Test
    void noSpinsNoYieldsParksAtOnce() {
        BackoffIdler idler = new BackoffIdler(new BackoffPolicy(0, 0, 1_000, 1_000));
        assertTrue(idler.isParking());
        idler.idle();
        assertTrue(idler.isParking());
    }

    @Test
    void parkTimeIsCappedByMaxPark() {
        // Doubling from 1 µs without the cap would park for over 10^20 ns by the 70th idle; with a 20 µs cap
        // 200 parks take a few milliseconds (plus timer slack). The bound only proves there is no hang.
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
            BackoffIdler idler = new BackoffIdler(new BackoffPolicy(0, 0, 1_000, 20_000));
            for (int i = 0; i < 200; i++) {
                idler.idle();
            }
            idler.reset();
            for (int i = 0; i < 200; i++) {
                idler.idle();
            }
        });
    }
}
