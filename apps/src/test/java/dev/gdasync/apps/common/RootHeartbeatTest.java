package dev.gdasync.apps.common;

import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.LocalBootstrap;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class RootHeartbeatTest {
    @Test
    void theOtherRanksWaitThroughRankZerosBeatsForItsEnd() throws Exception {
        List<Bootstrap> group = LocalBootstrap.group(3);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (Bootstrap b : group) {
                results.add(pool.submit(() -> new RootHeartbeat(b, "test").onRankZero(heartbeat -> {
                    for (int i = 0; i < 5; i++) {
                        heartbeat.run();
                    }
                    return "done";
                })));
            }
            assertEquals("done", results.get(0).get(30, TimeUnit.SECONDS));
            assertNull(results.get(1).get(30, TimeUnit.SECONDS));
            assertNull(results.get(2).get(30, TimeUnit.SECONDS));
            // The ranks are in step afterwards: a plain barrier completes.
            List<Future<?>> barriers = new ArrayList<>();
            for (Bootstrap b : group) {
                barriers.add(pool.submit(b::barrier));
            }
            for (Future<?> f : barriers) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            group.forEach(Bootstrap::close);
        }
    }

    @Test
    void rankZeroEndsEvenWhenItsWorkFails() throws Exception {
        List<Bootstrap> group = LocalBootstrap.group(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Object> root = pool.submit(() -> new RootHeartbeat(group.get(0), "test").onRankZero(heartbeat -> {
                heartbeat.run();
                throw new IOException("the child could not start");
            }));
            Future<Object> other = pool.submit(() -> new RootHeartbeat(group.get(1), "test").onRankZero(heartbeat -> "never"));
            ExecutionException e = assertThrows(ExecutionException.class, () -> root.get(30, TimeUnit.SECONDS));
            assertInstanceOf(IOException.class, e.getCause());
            assertNull(other.get(30, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
            group.forEach(Bootstrap::close);
        }
    }
}
