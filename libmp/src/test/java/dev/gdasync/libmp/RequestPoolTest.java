package dev.gdasync.libmp;

import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.libmp.testutil.FuzzSeeds;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The request pool against a model (the set of requests taken and not ended): random sequences of takes and of the
 * three ways a request ends (released after completing, retired as an executed NOWAIT put, cancelled), plus ends
 * tried a second time. After every step: the slots available are the capacity less the live requests, never more
 * than the capacity and never negative; a take fails exactly when every slot is taken; an ended request's slot
 * comes back; no request (object or id) is handed out twice. {@value #SEQUENCES} sequences by default; see
 * {@link FuzzSeeds} to run more.
 */
class RequestPoolTest {
    private static final int SEQUENCES = 200;
    private static final int STEPS = 400;

    static LongStream seeds() {
        return FuzzSeeds.seeds(SEQUENCES);
    }

    @ParameterizedTest(name = "seed={0}")
    @MethodSource("seeds")
    void randomTakesAndEndsMatchTheModel(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int capacity = random.nextInt(1, 33);
        RequestPool pool = new RequestPool(null, capacity);
        List<MpRequest> live = new ArrayList<>();
        List<MpRequest> ended = new ArrayList<>();
        Set<Long> ids = new HashSet<>();
        Set<MpRequest> handedOut = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        List<String> log = new ArrayList<>();
        try {
            for (int step = 0; step < STEPS; step++) {
                int op = random.nextInt(10);
                if (op < 5) {
                    boolean nowait = random.nextBoolean();
                    log.add("take" + (nowait ? " nowait" : ""));
                    if (live.size() == capacity) {
                        assertTrue(pool.isEmpty());
                        assertThrows(IllegalStateException.class,
                                () -> pool.take(MpRequest.Kind.PUT, 0, 8, nowait));
                    } else {
                        MpRequest r = pool.take(MpRequest.Kind.PUT, 0, 8, nowait);
                        assertTrue(handedOut.add(r), "request handed out twice: " + r.describe());
                        assertTrue(ids.add(r.id()), "id " + r.id() + " handed out twice");
                        assertSame(RequestState.PREPARED, r.state());
                        live.add(r);
                    }
                } else if (op < 9 && !live.isEmpty()) {
                    MpRequest r = live.remove(random.nextInt(live.size()));
                    int how = r.isNowait() ? random.nextInt(3) : random.nextInt(2);
                    log.add(how == 0 ? "cancel" : how == 1 ? "release" : "retire");
                    end(pool, r, how);
                    assertSame(RequestState.RELEASED, r.state());
                    ended.add(r);
                } else if (!ended.isEmpty()) {
                    MpRequest r = ended.get(random.nextInt(ended.size()));
                    int how = random.nextInt(3);
                    log.add("end again by " + how);
                    assertThrows(IllegalStateException.class, () -> end(pool, r, how));
                }
                assertEquals(capacity - live.size(), pool.available(), "slots available");
                assertTrue(pool.available() >= 0 && pool.available() <= capacity, "slots out of [0, capacity]");
                assertEquals(live.isEmpty(), pool.available() == capacity);
            }
            // Every slot comes back.
            for (MpRequest r : live) {
                end(pool, r, 0);
            }
            assertEquals(capacity, pool.available());
            for (int i = 0; i < capacity; i++) {
                pool.take(MpRequest.Kind.GET, 1, 8, false);
            }
            assertTrue(pool.isEmpty());
        } catch (AssertionError e) {
            fail("seed=" + seed + " (capacity " + capacity + "), after " + log.size() + " steps, the last: "
                    + log.subList(Math.max(0, log.size() - 12), log.size()) + ": " + e.getMessage(), e);
        }
    }

    /** Ends a request by one of the three ways (cancel, complete then release, post then retire if NOWAIT). */
    private static void end(RequestPool pool, MpRequest r, int how) {
        switch (how) {
            case 0 -> pool.cancel(r);
            case 1 -> {
                if (r.state() == RequestState.PREPARED) {
                    r.posted();
                    r.complete(new Completion());
                }
                pool.release(r);
            }
            default -> {
                if (r.state() == RequestState.PREPARED) {
                    r.posted();
                }
                pool.retire(r);
            }
        }
    }
}
