package dev.gdasync.libmp.bootstrap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.gdasync.libmp.bootstrap.EnvBootstrapTest.SECRET;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Rank 0's rendezvous under a flood of connections that never speak: at most the cap of them authenticate at once
 * (one thread each), the rest are closed at once and counted in rate-limited warnings, and the real rank joins as
 * soon as a slot frees.
 */
@Timeout(120)
class AdmissionFloodTest {
    private static final int FLOOD = 500;
    private static final int CAP = 16;
    private static final Duration HANDSHAKE = Duration.ofSeconds(2);
    private static final Pattern OVER_CAP = Pattern.compile("closed (a|\\d+ more) connection");

    @Test
    void aFloodOfSilentConnectionsCostsBoundedThreadsAndTheRealRankStillJoins() throws Exception {
        String rendezvous = "127.0.0.1:" + EnvBootstrapTest.freePort();
        int port = Integer.parseInt(rendezvous.substring(rendezvous.indexOf(':') + 1));
        JobEnvironment root = JobEnvironment.of(0, 2, rendezvous, SECRET, "flood", Duration.ofSeconds(60));
        JobEnvironment member = JobEnvironment.of(1, 2, rendezvous, SECRET, "flood", Duration.ofSeconds(60));
        List<LogRecord> warnings = new CopyOnWriteArrayList<>();
        Logger log = Logger.getLogger(Admission.class.getPackageName());
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(r);
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(capture);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        List<Socket> flood = new ArrayList<>();
        AtomicReference<Object> admitted = new AtomicReference<>();
        AtomicBoolean sampling = new AtomicBoolean(true);
        AtomicInteger mostHandshakes = new AtomicInteger();
        Thread sampler = Thread.ofPlatform().start(() -> {
            while (sampling.get()) {
                int n = (int) Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().equals("gdasync-bootstrap-handshake")).count();
                mostHandshakes.accumulateAndGet(n, Math::max);
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
        });
        int before = threads.getThreadCount();
        threads.resetPeakThreadCount();
        Thread rank0 = Thread.ofPlatform().start(() -> {
            try {
                admitted.set(Admission.run(root, HANDSHAKE, CAP));
            } catch (Throwable e) {
                admitted.set(e);
            }
        });
        MemberLink link = null;
        try {
            for (int i = 0; i < FLOOD; i++) {
                flood.add(connect(port));
            }
            int peak = threads.getPeakThreadCount();
            assertTrue(peak - before <= CAP + 8, "a flood of " + FLOOD + " connections took " + (peak - before)
                    + " threads; the cap is " + CAP);

            // The real rank joins while the flood's connections are still open: it retries until a slot frees.
            long start = System.nanoTime();
            link = MemberLink.join(member);
            rank0.join(Duration.ofSeconds(30));
            Object result = admitted.get();
            Admission.Admitted[] members = assertInstanceOfMembers(result);
            assertNotNull(members[1]);
            assertEquals(1, members[1].joiner().rank());
            assertTrue(System.nanoTime() - start < Duration.ofSeconds(20).toNanos(), "the real rank waited too long");
            members[1].closeQuietly();
        } finally {
            sampling.set(false);
            sampler.join();
            log.removeHandler(capture);
            for (Socket s : flood) {
                s.close();
            }
            if (link != null) {
                link.close();
            }
        }
        assertTrue(mostHandshakes.get() <= CAP, mostHandshakes.get() + " handshake threads at once; the cap is " + CAP);
        assertTrue(mostHandshakes.get() > 0, "the sampler saw no handshake thread");

        int overCapWarnings = 0;
        int overCapCounted = 0;
        int otherWarnings = 0;
        for (LogRecord r : warnings) {
            Matcher m = OVER_CAP.matcher(r.getMessage());
            if (m.find()) {
                overCapWarnings++;
                overCapCounted += m.group(1).equals("a") ? 1 : Integer.parseInt(m.group(1).split(" ")[0]);
                assertTrue(r.getMessage().contains(CAP + " connections were already authenticating"), r.getMessage());
            } else {
                otherWarnings++;
            }
        }
        assertTrue(overCapWarnings >= 1 && overCapWarnings <= 3, overCapWarnings + " warnings about the cap: " + messages(warnings));
        assertTrue(overCapCounted >= FLOOD / 2, "the warnings counted " + overCapCounted + " refusals of " + FLOOD);
        assertTrue(otherWarnings <= 7, otherWarnings + " warnings about failed handshakes: " + messages(warnings));
    }

    private static Admission.Admitted[] assertInstanceOfMembers(Object result) {
        assertNull(result instanceof Throwable t ? t : null, "rank 0's rendezvous failed");
        return (Admission.Admitted[]) result;
    }

    private static List<String> messages(List<LogRecord> records) {
        return records.stream().map(LogRecord::getMessage).toList();
    }

    /** Connects without speaking, retrying while rank 0 is not listening yet. */
    private static Socket connect(int port) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
                return s;
            } catch (IOException e) {
                s.close();
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(10);
            }
        }
    }
}
