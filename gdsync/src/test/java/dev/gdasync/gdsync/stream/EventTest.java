package dev.gdasync.gdsync.stream;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Events made outside this package: the completer that ends them, and listeners. */
class EventTest {
    @Test
    void aPendingEventEndsOnceThroughItsCompleterAndRunsItsListenersOnce() {
        Event.Completer c = Event.pending("cuda");
        Event e = c.event();
        List<String> calls = new ArrayList<>();
        e.whenDone(() -> calls.add("first"));
        e.whenDone(() -> calls.add("second"));
        assertFalse(e.isDone());
        assertFalse(e.synchronize(Duration.ofMillis(1)));
        c.complete();
        c.fail(new IllegalStateException("too late"));
        assertTrue(e.isDone());
        assertNull(e.failure());
        assertTrue(e.synchronize(Duration.ofMillis(1)));
        e.whenDone(() -> calls.add("after"));
        assertEquals(List.of("first", "second", "after"), calls);
        assertEquals("Event{stream=cuda, complete}", e.toString());
    }

    @Test
    void aFailedEventReportsItsCauseToWaitersAndListeners() {
        Event.Completer c = Event.pending("cuda");
        IllegalStateException why = new IllegalStateException("stream failed");
        AtomicReference<Throwable> seen = new AtomicReference<>();
        c.event().whenDone(() -> seen.set(c.event().failure()));
        c.fail(why);
        c.complete();
        assertSame(why, seen.get());
        StreamFailedException e = assertThrows(StreamFailedException.class, () -> c.event().synchronize());
        assertSame(why, e.getCause());
        assertEquals("stream 'cuda' failed: " + why, e.getMessage());
    }

    @Test
    void aListenerThatThrowsDoesNotStopTheOthersOrTheCompleter() {
        Event.Completer c = Event.pending("cuda");
        List<Throwable> uncaught = new ArrayList<>();
        Thread t = Thread.currentThread();
        Thread.UncaughtExceptionHandler old = t.getUncaughtExceptionHandler();
        t.setUncaughtExceptionHandler((thread, ex) -> uncaught.add(ex));
        try {
            List<String> calls = new ArrayList<>();
            c.event().whenDone(() -> {
                throw new IllegalStateException("listener bug");
            });
            c.event().whenDone(() -> calls.add("ran"));
            c.complete();
            assertEquals(List.of("ran"), calls);
            assertEquals(1, uncaught.size());
            assertEquals("listener bug", uncaught.getFirst().getMessage());
        } finally {
            t.setUncaughtExceptionHandler(old);
        }
    }

    @Test
    void hostStreamEventsRunListenersToo() {
        try (HostStream s = HostStream.create("h")) {
            Event e = s.record();
            AtomicReference<Boolean> ran = new AtomicReference<>(false);
            e.whenDone(() -> ran.set(true));
            s.synchronize();
            assertTrue(e.isDone());
            assertTrue(ran.get());
        }
    }
}
