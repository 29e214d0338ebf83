package dev.gdasync.libmp.comm;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpKiExport;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.LocalBootstrap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The comm layer: halo exchanges with the ready handshake on the CPU, on streams and in a kernel. */
class CommTest {
    private static final int N = 256; // doubles per halo

    @TempDir
    Path base;

    interface Body {
        void run(Comm comm) throws Exception;
    }

    private void ranks(int n, Body body) throws Exception {
        MpConfig cfg = MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base)).withWaitTimeout(Duration.ofSeconds(20));
        List<Bootstrap> boots = LocalBootstrap.group(n, Duration.ofSeconds(30));
        AtomicReferenceArray<Throwable> failed = new AtomicReferenceArray<>(n);
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            Bootstrap boot = boots.get(r);
            int rank = r;
            threads.add(Thread.ofPlatform().start(() -> {
                try (boot; Mp mp = Mp.init(boot, cfg); Comm comm = Comm.init(mp)) {
                    body.run(comm);
                } catch (Throwable e) {
                    failed.set(rank, e);
                    boot.close();
                }
            }));
        }
        for (Thread t : threads) {
            t.join(120_000);
        }
        for (int r = 0; r < n; r++) {
            if (failed.get(r) != null) {
                throw new AssertionError("rank " + r + " failed", failed.get(r));
            }
        }
    }

    private static int left(Comm c) {
        return (c.rank() + c.size() - 1) % c.size();
    }

    private static int right(Comm c) {
        return (c.rank() + 1) % c.size();
    }

    private static void fillHalo(MemorySegment s, int rank, int step) {
        for (int i = 0; i < N; i++) {
            s.setAtIndex(JAVA_DOUBLE, i, rank * 1000.0 + step + i / 1024.0);
        }
    }

    private static void checkHalo(MemorySegment s, int from, int step) {
        for (int i = 0; i < N; i++) {
            assertEquals(from * 1000.0 + step + i / 1024.0, s.getAtIndex(JAVA_DOUBLE, i), "halo element " + i + " from rank " + from);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void haloExchangeOnTheCpuWithTheReadyHandshake(int n) throws Exception {
        ranks(n, comm -> {
            Mp mp = comm.mp();
            MemorySegment mem = mp.allocate(4L * N * 8);
            MemorySegment fromLeft = mem.asSlice(0, N * 8L);
            MemorySegment fromRight = mem.asSlice(N * 8L, N * 8L);
            MemorySegment toLeft = mem.asSlice(2L * N * 8, N * 8L);
            MemorySegment toRight = mem.asSlice(3L * N * 8, N * 8L);
            for (int step = 0; step < 20; step++) {
                List<MpRequest> recvs = List.of(comm.irecv(fromLeft, N, Datatype.DOUBLE, left(comm)),
                        comm.irecv(fromRight, N, Datatype.DOUBLE, right(comm)));
                comm.sendReady(left(comm));
                comm.sendReady(right(comm));
                fillHalo(toLeft, comm.rank(), step);
                fillHalo(toRight, comm.rank(), step);
                comm.waitReady(left(comm));
                comm.isend(toLeft, N, Datatype.DOUBLE, left(comm));
                comm.waitReady(right(comm));
                comm.isend(toRight, N, Datatype.DOUBLE, right(comm));
                comm.waitAll(recvs);
                checkHalo(fromLeft, left(comm), step);
                checkHalo(fromRight, right(comm), step);
                comm.flush();
                assertEquals(0, comm.outstanding());
            }
            assertSame(comm.register(fromLeft), comm.register(toRight), "one registration for the whole allocation");
        });
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4})
    void haloExchangeOnStreams(int n) throws Exception {
        ranks(n, comm -> {
            Mp mp = comm.mp();
            MemorySegment mem = mp.allocate(4L * N * 8);
            MemorySegment fromLeft = mem.asSlice(0, N * 8L);
            MemorySegment fromRight = mem.asSlice(N * 8L, N * 8L);
            MemorySegment toLeft = mem.asSlice(2L * N * 8, N * 8L);
            MemorySegment toRight = mem.asSlice(3L * N * 8, N * 8L);
            try (HostStream stream = HostStream.create("halo-" + comm.rank())) {
                for (int step = 0; step < 20; step++) {
                    int s = step;
                    List<MpRequest> recvs = List.of(comm.irecv(fromLeft, N, Datatype.DOUBLE, left(comm)),
                            comm.irecv(fromRight, N, Datatype.DOUBLE, right(comm)));
                    comm.sendReadyOnStream(left(comm), stream);
                    comm.sendReadyOnStream(right(comm), stream);
                    stream.launch(() -> {                      // the "pack kernel"
                        fillHalo(toLeft, comm.rank(), s);
                        fillHalo(toRight, comm.rank(), s);
                    });
                    comm.waitReadyOnStream(left(comm), stream);
                    comm.isendOnStream(toLeft, N, Datatype.DOUBLE, left(comm), stream);
                    comm.waitReadyOnStream(right(comm), stream);
                    comm.isendOnStream(toRight, N, Datatype.DOUBLE, right(comm), stream);
                    comm.waitAllOnStream(recvs, stream);
                    stream.launch(() -> {                      // the "unpack kernel"
                        checkHalo(fromLeft, left(comm), s);
                        checkHalo(fromRight, right(comm), s);
                    });
                    stream.synchronize();
                    comm.flush();
                }
            }
        });
    }

    @Test
    void testReadyTakesAnAnnouncementOnlyOnce() throws Exception {
        ranks(2, comm -> {
            int peer = 1 - comm.rank();
            if (comm.rank() == 0) {
                comm.sendReady(peer);
                comm.sendReady(peer);
                comm.mp().barrier();
            } else {
                comm.mp().barrier();
                long deadline = System.nanoTime() + 5_000_000_000L;
                while (!comm.testReady(peer)) {
                    assertTrue(System.nanoTime() < deadline, "the first announcement never arrived");
                }
                comm.waitReady(peer);
                assertFalse(comm.testReady(peer), "only two announcements were sent");
            }
            comm.mp().barrier();
        });
    }

    @Test
    void aKernelWaitsForReadyThenSends() throws Exception {
        ranks(2, comm -> {
            Mp mp = comm.mp();
            MemorySegment mem = mp.allocate(4096);
            int peer = 1 - comm.rank();
            if (comm.rank() == 1) {
                MpRequest r = comm.irecv(mem.asSlice(0, 64), 8, Datatype.LONG, peer);
                comm.sendReady(peer);
                comm.wait(r);
                for (int i = 0; i < 8; i++) {
                    assertEquals(100 + i, mem.getAtIndex(JAVA_LONG, i));
                }
            } else {
                for (int i = 0; i < 8; i++) {
                    mem.setAtIndex(JAVA_LONG, 64 + i, 100 + i);
                }
                MpKiExport ki = mp.kiExport();
                comm.prepareWaitReady(ki, peer);
                MpRequest s = comm.prepareIsend(ki, mem.asSlice(512, 64), 8, Datatype.LONG, peer);
                comm.prepareWaitAll(ki, List.of(s));
                KiTable table = ki.writeTo(mp.allocate(ki.byteSize()));
                Thread kernel = new Thread(() -> {
                    // Wait for "ready" (entry 0), ring the send, wait for its completion (entry 1).
                    KiTable.WaitEntry ready = table.waitEntry(0);
                    MemorySegment word = MemorySegment.ofAddress(ready.wordAddress()).reinterpret(4);
                    while (!ready.condition().test(word.get(ValueLayout.JAVA_INT, 0), ready.value())) {
                        Thread.onSpinWait();
                    }
                    KiTable.SendEntry send = table.send(0);
                    MemorySegment.ofAddress(send.dbrecAddress()).reinterpret(4).set(ValueLayout.JAVA_INT, 0, send.dbrecValue());
                    MemorySegment.ofAddress(send.doorbellAddress()).reinterpret(8).set(JAVA_LONG, 0, send.doorbellValue());
                    KiTable.WaitEntry done = table.waitEntry(1);
                    MemorySegment cqe = MemorySegment.ofAddress(done.wordAddress()).reinterpret(4);
                    while (!done.condition().test(cqe.get(ValueLayout.JAVA_INT, 0), done.value())) {
                        Thread.onSpinWait();
                    }
                    MemorySegment.ofAddress(done.flagAddress()).reinterpret(4).set(ValueLayout.JAVA_INT, 0, done.flagValue());
                });
                kernel.start();
                kernel.join(20_000);
                comm.flush();
            }
        });
    }

    @Test
    void typedCountsAreChecked() throws Exception {
        ranks(2, comm -> {
            MemorySegment mem = comm.mp().allocate(4096);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> comm.isend(mem.asSlice(0, 64), 9, Datatype.DOUBLE, 1 - comm.rank()));
            assertTrue(e.getMessage().contains("need 72 bytes"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> comm.irecv(mem, -1, Datatype.INT, 1 - comm.rank()));
            assertEquals(0, comm.outstanding());
            assertEquals(8, Datatype.DOUBLE.bytes());
        });
    }
}
