package dev.gdasync.libmp;

import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.stream.StreamFailedException;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.libmp.bootstrap.Bootstrap;
import dev.gdasync.libmp.bootstrap.LocalBootstrap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every public call of {@link Mp}, {@link MpWindow}, {@link MpDescQueue}, {@link MpKiExport} and {@link MpConfig},
 * walked with null, negative, zero, huge and closed-object arguments on rank 0 of a live three-rank job: each must
 * throw the documented exception with a message that names the parameter (a null: exactly
 * {@code "<parameter> must not be null"}) or the rule, and change nothing: the request pool, the NIC's
 * registrations, the shared-memory files, the fixture's requests, queues, windows and streams are compared before
 * and after every case. At the end the untouched prepared send still goes out and every rank still exchanges
 * messages, so no refused call left a queue pair out of order.
 */
@Timeout(300)
class MpArgumentsTest {
    /** Rank r exposes a window of 100 + r bytes: not a page multiple, so a rounded size would show. */
    private static final int EXPOSED = 100;

    @TempDir
    static Path base;
    static MpConfig config;
    static Mp mp;
    static MemorySegment exposed;
    static MpWindow win;
    static MpWindow gone;
    static MemorySegment buf;
    static MpRegistration reg;
    static MpRegistration dereg;
    static MpRequest prepared;
    static MpRequest recv;
    static MpDescQueue queue;
    static MpDescQueue staged;
    static MpKiExport export;
    static HostStream stream;
    static HostStream closedStream;
    static HostStream failedStream;
    static Mp closedMp;
    static MpRegistration otherReg;
    static MpWindow otherWindow;
    static Arena arena;
    static MemorySegment foreign;
    static MemoryWord w32;
    static MemoryWord w64;
    static final List<Thread> peers = new ArrayList<>();
    static final List<AtomicReference<Throwable>> peerFailures = new ArrayList<>();

    @BeforeAll
    static void setUp() throws Exception {
        config = Ranks.config(base).withWaitTimeout(Duration.ofMinutes(4));
        List<Bootstrap> boots = LocalBootstrap.group(3, Duration.ofMinutes(4));
        for (int r = 1; r < 3; r++) {
            Bootstrap boot = boots.get(r);
            int rank = r;
            AtomicReference<Throwable> failure = new AtomicReference<>();
            peerFailures.add(failure);
            peers.add(Thread.ofPlatform().name("args-rank-" + r).start(() -> {
                try (boot; Mp m = Mp.init(boot, config)) {
                    peer(m, rank);
                } catch (Throwable e) {
                    failure.set(e);
                    boot.close();
                }
            }));
        }
        mp = Mp.init(boots.get(0), config);
        exposed = mp.allocate(EXPOSED);
        win = mp.windowCreate(exposed);
        gone = mp.windowCreate(mp.allocate(64));
        mp.windowDestroy(gone);

        buf = mp.allocate(4096);
        reg = mp.register(buf);
        dereg = mp.register(buf.asSlice(0, 64));
        mp.deregister(dereg);
        prepared = mp.sendPrepare(buf.asSlice(0, 8), 2, reg);
        recv = mp.irecv(buf.asSlice(1024, 8), 1, reg);
        queue = mp.descQueue();
        staged = mp.descQueue();
        export = mp.kiExport();
        stream = HostStream.create("args");
        closedStream = HostStream.create("args-closed");
        closedStream.close();
        failedStream = HostStream.create("args-failed");
        failedStream.launch(() -> {
            throw new IllegalStateException("failed on purpose");
        });
        assertThrows(StreamFailedException.class, failedStream::synchronize);
        arena = Arena.ofShared();
        foreign = arena.allocate(4096, 8);
        w32 = MemoryWord.word32(foreign, 0, "w32");
        w64 = MemoryWord.word64(foreign, 8, "w64");
        staged.addWriteValue32(w32, 5);

        // Another Mp, closed: its registration and window belong to another Mp, and it refuses every call.
        List<Bootstrap> other = LocalBootstrap.group(2, Duration.ofMinutes(1));
        Thread otherPeer = Thread.ofPlatform().start(() -> {
            try (Bootstrap b = other.get(1); Mp m = Mp.init(b, config)) {
                m.windowCreate(m.allocate(64));
            }
        });
        closedMp = Mp.init(other.get(0), config);
        MemorySegment otherMemory = closedMp.allocate(64);
        otherReg = closedMp.register(otherMemory);
        otherWindow = closedMp.windowCreate(closedMp.allocate(64));
        closedMp.close();
        other.get(0).close();
        otherPeer.join(TimeUnit.MINUTES.toMillis(1));
    }

    /** Ranks 1 and 2: take part in the collectives, then wait for rank 0's message and answer it. */
    private static void peer(Mp m, int rank) {
        MpWindow w = m.windowCreate(m.allocate(EXPOSED + rank));
        m.windowDestroy(m.windowCreate(m.allocate(64)));
        MemorySegment b = m.allocate(64);
        MpRegistration r = m.register(b);
        MpRequest in = m.irecv(b.asSlice(0, 8), 0, r);
        m.wait(in);
        if (b.get(JAVA_LONG, 0) != 0x1234_0000L + rank) {
            throw new AssertionError("rank " + rank + " received " + Long.toHexString(b.get(JAVA_LONG, 0)));
        }
        b.set(JAVA_LONG, 8, 0x5678_0000L + rank);
        m.wait(m.isend(b.asSlice(8, 8), 0, r));
        m.windowDestroy(w);
    }

    @AfterAll
    static void tearDown() throws Exception {
        try {
            if (mp != null) {
                // The prepared send no case may have touched still goes out, and every rank still talks.
                assertEquals(RequestState.PREPARED, prepared.state());
                buf.set(JAVA_LONG, 0, 0x1234_0002L);
                mp.isendPostOnStream(prepared, stream);
                buf.set(JAVA_LONG, 16, 0x1234_0001L);
                MpRequest to1 = mp.isend(buf.asSlice(16, 8), 1, reg);
                MpRequest from2 = mp.irecv(buf.asSlice(1032, 8), 2, reg);
                mp.waitAll(prepared, to1, recv, from2);
                assertEquals(0x5678_0001L, buf.get(JAVA_LONG, 1024));
                assertEquals(0x5678_0002L, buf.get(JAVA_LONG, 1032));
                mp.windowDestroy(win);
                mp.close();
            }
            for (int i = 0; i < peers.size(); i++) {
                peers.get(i).join(TimeUnit.MINUTES.toMillis(2));
                assertNull(peerFailures.get(i).get(), "rank " + (i + 1) + " failed");
            }
        } finally {
            for (HostStream s : new HostStream[] {stream, closedStream, failedStream}) {
                if (s != null) {
                    s.close();
                }
            }
            if (arena != null) {
                arena.close();
            }
        }
    }

    // ---- the table ----

    /**
     * One row: the method (as {@code Class.name(ParameterTypes)}, which the completeness check matches against
     * reflection), the bad argument, the call, and what it must throw.
     */
    record Case(String method, String argument, Executable call, Class<? extends Throwable> type, String message) {
        @Override
        public String toString() {
            return method + " with " + argument;
        }
    }

    private static Case nul(String method, String parameter, Executable call) {
        return new Case(method, parameter + " = null", call, NullPointerException.class, parameter + " must not be null");
    }

    private static Case bad(String method, String argument, Executable call, Class<? extends Throwable> type, String message) {
        return new Case(method, argument, call, type, message);
    }

    private static final String CLOSED = "Mp of rank 0 is closed";
    private static final String STREAM_CLOSED = "stream 'args-closed' is closed";

    static List<Case> cases() {
        List<Case> c = new ArrayList<>();
        MemorySegment b8 = buf.asSlice(64, 8);
        MemorySegment outside = foreign.asSlice(0, 8);
        List<MemorySegment> nine = Collections.nCopies(9, b8);
        Duration huge = Duration.ofSeconds(Long.MAX_VALUE);
        String send = "Mp.isend(MemorySegment,int,MpRegistration)";

        // joining
        c.add(nul("Mp.init(Bootstrap,MpConfig)", "bootstrap", () -> Mp.init(null, config)));
        c.add(nul("Mp.init(Bootstrap,MpConfig)", "config", () -> Mp.init(LocalBootstrap.group(1).get(0), null)));
        c.add(nul("Mp.init(Bootstrap)", "bootstrap", () -> Mp.init(null)));

        // memory
        c.add(bad("Mp.allocate(long)", "0", () -> mp.allocate(0), IllegalArgumentException.class, "bytes must be > 0, got 0"));
        c.add(bad("Mp.allocate(long)", "-1", () -> mp.allocate(-1), IllegalArgumentException.class,
                "bytes must be > 0, got -1"));
        c.add(bad("Mp.allocate(long)", "Long.MAX_VALUE", () -> mp.allocate(Long.MAX_VALUE), IllegalArgumentException.class,
                Long.MAX_VALUE + " bytes is too large"));
        c.add(bad("Mp.allocate(long)", "more than the free space", () -> mp.allocate(ShmDirectory.MAX_LENGTH),
                UncheckedIOException.class, "bytes free"));
        c.add(bad("Mp.allocate(long)", "a closed Mp", () -> closedMp.allocate(64), IllegalStateException.class, CLOSED));
        c.add(nul("Mp.free(MemorySegment)", "memory", () -> mp.free((MemorySegment) null)));
        c.add(bad("Mp.free(MemorySegment)", "a slice of an allocation", () -> mp.free(buf.asSlice(0, 8)),
                IllegalArgumentException.class, "is only a part of an allocation of 4096 bytes"));
        c.add(bad("Mp.free(MemorySegment)", "memory not from allocate", () -> mp.free(foreign),
                IllegalArgumentException.class, "was not allocated by this Mp"));
        c.add(bad("Mp.free(MemorySegment)", "a closed Mp", () -> closedMp.free(buf), IllegalStateException.class, CLOSED));
        c.add(nul("Mp.free(Region)", "memory", () -> mp.free((dev.gdasync.gdsync.memory.Region) null)));
        c.add(nul("Mp.allocationOf(MemorySegment)", "memory", () -> mp.allocationOf(null)));
        c.add(nul("Mp.abort(String)", "reason", () -> mp.abort(null)));
        c.add(nul("Mp.reserveTwoSided(String)", "holder", () -> mp.reserveTwoSided(null)));
        c.add(bad("Mp.reserveTwoSided(String)", "a closed Mp", () -> closedMp.reserveTwoSided("a layer"),
                IllegalStateException.class, CLOSED));
        c.add(bad("Mp.wakePeer(int)", "rank -1", () -> mp.wakePeer(-1), IllegalArgumentException.class,
                "rank -1 is not another rank of this job: ranks are 0..2, this one 0"));
        c.add(bad("Mp.wakePeer(int)", "a closed Mp", () -> closedMp.wakePeer(1), IllegalStateException.class, CLOSED));
        c.add(bad("Mp.sendsAwaitStream(int)", "rank 3", () -> mp.sendsAwaitStream(3), IllegalArgumentException.class,
                "rank 3 is not another rank of this job: ranks are 0..2, this one 0"));
        c.add(bad("Mp.sendsAwaitStream(int)", "this rank", () -> mp.sendsAwaitStream(0), IllegalArgumentException.class,
                "rank 0 is not another rank of this job"));
        c.add(bad("Mp.sendsAwaitStream(int)", "a closed Mp", () -> closedMp.sendsAwaitStream(1),
                IllegalStateException.class, CLOSED));
        c.add(nul("Mp.onJobFailure(Consumer)", "listener", () -> mp.onJobFailure(null)));
        c.add(bad("Mp.allocationOf(MemorySegment)", "memory not from allocate", () -> mp.allocationOf(outside),
                IllegalArgumentException.class, "is not inside memory from Mp.allocate()"));
        c.add(bad("Mp.allocationOf(MemorySegment)", "one byte past the allocation",
                () -> mp.allocationOf(MemorySegment.ofAddress(exposed.address()).reinterpret(EXPOSED + 1)),
                IllegalArgumentException.class, "is not inside memory from Mp.allocate()"));
        c.add(bad("Mp.allocationOf(MemorySegment)", "a closed Mp", () -> closedMp.allocationOf(buf),
                IllegalStateException.class, CLOSED));
        c.add(nul("Mp.register(MemorySegment)", "memory", () -> mp.register((MemorySegment) null)));
        c.add(bad("Mp.register(MemorySegment)", "zero bytes", () -> mp.register(buf.asSlice(8, 0)),
                IllegalArgumentException.class, "zero-byte registrations are refused"));
        c.add(bad("Mp.register(MemorySegment)", "a heap segment", () -> mp.register(MemorySegment.ofArray(new byte[8])),
                IllegalArgumentException.class, "is a heap segment"));
        c.add(bad("Mp.register(MemorySegment)", "memory not from allocate", () -> mp.register(outside),
                IllegalArgumentException.class, "is not inside memory from Mp.allocate()"));
        c.add(bad("Mp.register(MemorySegment)", "the page the allocation was rounded up to",
                () -> mp.register(MemorySegment.ofAddress(exposed.address()).reinterpret(4096)),
                IllegalArgumentException.class, "(4096 bytes) is not inside memory from Mp.allocate()"));
        c.add(bad("Mp.register(MemorySegment)", "a closed Mp", () -> closedMp.register(buf), IllegalStateException.class, CLOSED));
        c.add(nul("Mp.register(Region)", "memory", () -> mp.register((dev.gdasync.gdsync.memory.Region) null)));
        c.add(nul("Mp.deregister(MpRegistration)", "reg", () -> mp.deregister(null)));
        c.add(bad("Mp.deregister(MpRegistration)", "a deregistered registration", () -> mp.deregister(dereg),
                IllegalArgumentException.class, "is already deregistered"));
        c.add(bad("Mp.deregister(MpRegistration)", "another Mp's registration", () -> mp.deregister(otherReg),
                IllegalArgumentException.class, "belongs to another Mp"));

        // two-sided on the CPU
        c.add(nul("Mp.irecv(MemorySegment,int,MpRegistration)", "buf", () -> mp.irecv(null, 1, reg)));
        c.add(nul("Mp.irecv(MemorySegment,int,MpRegistration)", "reg", () -> mp.irecv(b8, 1, null)));
        c.add(bad("Mp.irecv(MemorySegment,int,MpRegistration)", "peer -1", () -> mp.irecv(b8, -1, reg),
                IllegalArgumentException.class, "unknown peer -1: ranks are 0..2"));
        c.add(bad("Mp.irecv(MemorySegment,int,MpRegistration)", "peer 3 (the size)", () -> mp.irecv(b8, 3, reg),
                IllegalArgumentException.class, "unknown peer 3"));
        c.add(bad("Mp.irecv(MemorySegment,int,MpRegistration)", "this rank", () -> mp.irecv(b8, 0, reg),
                IllegalArgumentException.class, "rank 0 is this rank"));
        c.add(bad("Mp.irecv(MemorySegment,int,MpRegistration)", "a buffer outside the registration",
                () -> mp.irecv(outside, 1, reg), IllegalArgumentException.class, "is not inside"));
        c.add(bad("Mp.irecv(MemorySegment,int,MpRegistration)", "a deregistered registration",
                () -> mp.irecv(b8, 1, dereg), IllegalArgumentException.class, "is deregistered"));
        c.add(bad("Mp.irecv(MemorySegment,int,MpRegistration)", "a closed Mp", () -> closedMp.irecv(b8, 1, otherReg),
                IllegalStateException.class, CLOSED));
        c.add(nul("Mp.irecvv(List,int,MpRegistration)", "bufs", () -> mp.irecvv(null, 1, reg)));
        c.add(bad("Mp.irecvv(List,int,MpRegistration)", "a null buffer", () -> mp.irecvv(Arrays.asList(b8, null), 1, reg),
                NullPointerException.class, "bufs[1] must not be null"));
        c.add(nul("Mp.irecvv(List,int,MpRegistration)", "reg", () -> mp.irecvv(List.of(b8), 1, null)));
        c.add(bad("Mp.irecvv(List,int,MpRegistration)", "no buffers", () -> mp.irecvv(List.of(), 1, reg),
                IllegalArgumentException.class, "a message has 1 to 8 buffers, got 0"));
        c.add(bad("Mp.irecvv(List,int,MpRegistration)", "nine buffers", () -> mp.irecvv(nine, 1, reg),
                IllegalArgumentException.class, "a message has 1 to 8 buffers, got 9"));
        c.add(nul(send, "buf", () -> mp.isend(null, 1, reg)));
        c.add(nul(send, "reg", () -> mp.isend(b8, 1, null)));
        c.add(bad(send, "peer Integer.MAX_VALUE", () -> mp.isend(b8, Integer.MAX_VALUE, reg),
                IllegalArgumentException.class, "unknown peer " + Integer.MAX_VALUE));
        c.add(bad(send, "another Mp's registration", () -> mp.isend(b8, 1, otherReg), IllegalArgumentException.class,
                "belongs to another Mp"));
        c.add(bad(send, "a closed Mp", () -> closedMp.isend(b8, 1, otherReg), IllegalStateException.class, CLOSED));
        c.add(nul("Mp.isendv(List,int,MpRegistration)", "bufs", () -> mp.isendv(null, 1, reg)));
        c.add(bad("Mp.isendv(List,int,MpRegistration)", "a null buffer", () -> mp.isendv(Arrays.asList((MemorySegment) null), 1, reg),
                NullPointerException.class, "bufs[0] must not be null"));
        c.add(nul("Mp.isendv(List,int,MpRegistration)", "reg", () -> mp.isendv(List.of(b8), 1, null)));

        // completion
        c.add(nul("Mp.wait(MpRequest)", "request", () -> mp.wait(null)));
        c.add(bad("Mp.wait(MpRequest)", "a request never posted", () -> mp.wait(prepared), IllegalStateException.class,
                "never posted"));
        c.add(nul("Mp.waitAll(List)", "requests", () -> mp.waitAll((List<MpRequest>) null)));
        c.add(bad("Mp.waitAll(List)", "a null request", () -> mp.waitAll(Arrays.asList((MpRequest) null)),
                NullPointerException.class, "requests[0] must not be null"));
        c.add(nul("Mp.waitAll(MpRequest[])", "requests", () -> mp.waitAll((MpRequest[]) null)));
        c.add(bad("Mp.waitAll(MpRequest[])", "a null request", () -> mp.waitAll(recv, null), NullPointerException.class,
                "requests[1] must not be null"));
        c.add(nul("Mp.progress(MpRequest[])", "requests", () -> mp.progress((MpRequest[]) null)));
        c.add(bad("Mp.progress(MpRequest[])", "a null request", () -> mp.progress(recv, null), NullPointerException.class,
                "requests[1] must not be null"));
        c.add(nul("Mp.test(MpRequest)", "request", () -> mp.test(null)));

        // two-sided on a stream
        c.add(nul("Mp.isendOnStream(MemorySegment,int,MpRegistration,Stream)", "buf", () -> mp.isendOnStream(null, 1, reg, stream)));
        c.add(nul("Mp.isendOnStream(MemorySegment,int,MpRegistration,Stream)", "reg", () -> mp.isendOnStream(b8, 1, null, stream)));
        c.add(nul("Mp.isendOnStream(MemorySegment,int,MpRegistration,Stream)", "stream", () -> mp.isendOnStream(b8, 1, reg, null)));
        c.add(bad("Mp.isendOnStream(MemorySegment,int,MpRegistration,Stream)", "a closed stream",
                () -> mp.isendOnStream(b8, 1, reg, closedStream), IllegalStateException.class, STREAM_CLOSED));
        c.add(bad("Mp.isendOnStream(MemorySegment,int,MpRegistration,Stream)", "a failed stream",
                () -> mp.isendOnStream(b8, 1, reg, failedStream), StreamFailedException.class,
                "stream 'args-failed' failed: java.lang.IllegalStateException: failed on purpose"));
        c.add(nul("Mp.isendvOnStream(List,int,MpRegistration,Stream)", "bufs", () -> mp.isendvOnStream(null, 1, reg, stream)));
        c.add(nul("Mp.isendvOnStream(List,int,MpRegistration,Stream)", "reg", () -> mp.isendvOnStream(List.of(b8), 1, null, stream)));
        c.add(nul("Mp.isendvOnStream(List,int,MpRegistration,Stream)", "stream", () -> mp.isendvOnStream(List.of(b8), 1, reg, null)));
        c.add(bad("Mp.isendvOnStream(List,int,MpRegistration,Stream)", "a closed stream",
                () -> mp.isendvOnStream(List.of(b8), 1, reg, closedStream), IllegalStateException.class, STREAM_CLOSED));
        c.add(nul("Mp.sendOnStream(MemorySegment,int,MpRegistration,Stream)", "buf", () -> mp.sendOnStream(null, 1, reg, stream)));
        c.add(nul("Mp.sendOnStream(MemorySegment,int,MpRegistration,Stream)", "reg", () -> mp.sendOnStream(b8, 1, null, stream)));
        c.add(nul("Mp.sendOnStream(MemorySegment,int,MpRegistration,Stream)", "stream", () -> mp.sendOnStream(b8, 1, reg, null)));
        c.add(bad("Mp.sendOnStream(MemorySegment,int,MpRegistration,Stream)", "a closed stream",
                () -> mp.sendOnStream(b8, 1, reg, closedStream), IllegalStateException.class, STREAM_CLOSED));
        c.add(nul("Mp.sendPrepare(MemorySegment,int,MpRegistration)", "buf", () -> mp.sendPrepare(null, 1, reg)));
        c.add(nul("Mp.sendPrepare(MemorySegment,int,MpRegistration)", "reg", () -> mp.sendPrepare(b8, 1, null)));
        c.add(bad("Mp.sendPrepare(MemorySegment,int,MpRegistration)", "peer -1", () -> mp.sendPrepare(b8, -1, reg),
                IllegalArgumentException.class, "unknown peer -1"));
        c.add(nul("Mp.sendvPrepare(List,int,MpRegistration)", "bufs", () -> mp.sendvPrepare(null, 1, reg)));
        c.add(nul("Mp.sendvPrepare(List,int,MpRegistration)", "reg", () -> mp.sendvPrepare(List.of(b8), 1, null)));
        c.add(bad("Mp.sendvPrepare(List,int,MpRegistration)", "nine buffers", () -> mp.sendvPrepare(nine, 1, reg),
                IllegalArgumentException.class, "got 9"));
        c.add(nul("Mp.sendPostOnStream(MpRequest,Stream)", "request", () -> mp.sendPostOnStream(null, stream)));
        c.add(nul("Mp.sendPostOnStream(MpRequest,Stream)", "stream", () -> mp.sendPostOnStream(prepared, null)));
        c.add(bad("Mp.sendPostOnStream(MpRequest,Stream)", "a closed stream", () -> mp.sendPostOnStream(prepared, closedStream),
                IllegalStateException.class, STREAM_CLOSED));
        c.add(nul("Mp.isendPostOnStream(MpRequest,Stream)", "request", () -> mp.isendPostOnStream(null, stream)));
        c.add(nul("Mp.isendPostOnStream(MpRequest,Stream)", "stream", () -> mp.isendPostOnStream(prepared, null)));
        c.add(bad("Mp.isendPostOnStream(MpRequest,Stream)", "a failed stream", () -> mp.isendPostOnStream(prepared, failedStream),
                StreamFailedException.class, "stream 'args-failed' failed"));
        c.add(nul("Mp.sendPostAllOnStream(List,Stream)", "requests", () -> mp.sendPostAllOnStream(null, stream)));
        c.add(bad("Mp.sendPostAllOnStream(List,Stream)", "a null request",
                () -> mp.sendPostAllOnStream(Arrays.asList(prepared, null), stream), NullPointerException.class,
                "requests[1] must not be null"));
        c.add(nul("Mp.sendPostAllOnStream(List,Stream)", "stream", () -> mp.sendPostAllOnStream(List.of(prepared), null)));
        c.add(nul("Mp.isendPostAllOnStream(List,Stream)", "requests", () -> mp.isendPostAllOnStream(null, stream)));
        c.add(nul("Mp.isendPostAllOnStream(List,Stream)", "stream", () -> mp.isendPostAllOnStream(List.of(prepared), null)));
        c.add(bad("Mp.isendPostAllOnStream(List,Stream)", "a closed stream",
                () -> mp.isendPostAllOnStream(List.of(prepared), closedStream), IllegalStateException.class, STREAM_CLOSED));
        c.add(nul("Mp.waitOnStream(MpRequest,Stream)", "request", () -> mp.waitOnStream(null, stream)));
        c.add(nul("Mp.waitOnStream(MpRequest,Stream)", "stream", () -> mp.waitOnStream(recv, null)));
        c.add(bad("Mp.waitOnStream(MpRequest,Stream)", "a closed stream", () -> mp.waitOnStream(recv, closedStream),
                IllegalStateException.class, STREAM_CLOSED));
        c.add(nul("Mp.waitAllOnStream(List,Stream)", "requests", () -> mp.waitAllOnStream(null, stream)));
        c.add(bad("Mp.waitAllOnStream(List,Stream)", "a null request", () -> mp.waitAllOnStream(Arrays.asList(recv, null), stream),
                NullPointerException.class, "requests[1] must not be null"));
        c.add(nul("Mp.waitAllOnStream(List,Stream)", "stream", () -> mp.waitAllOnStream(List.of(recv), null)));

        // one-sided
        String put = "Mp.iput(MemorySegment,MpRegistration,int,long,MpWindow,int)";
        String get = "Mp.iget(MemorySegment,MpRegistration,int,long,MpWindow)";
        String putS = "Mp.iputOnStream(MemorySegment,MpRegistration,int,long,MpWindow,int,Stream)";
        String getS = "Mp.igetOnStream(MemorySegment,MpRegistration,int,long,MpWindow,Stream)";
        String prep = "Mp.putPrepare(MemorySegment,MpRegistration,int,long,MpWindow,int)";
        c.add(nul("Mp.windowCreate(MemorySegment)", "buffer", () -> mp.windowCreate(null)));
        c.add(bad("Mp.windowCreate(MemorySegment)", "zero bytes", () -> mp.windowCreate(buf.asSlice(0, 0)),
                IllegalArgumentException.class, "zero-byte registrations are refused"));
        c.add(bad("Mp.windowCreate(MemorySegment)", "memory not from allocate", () -> mp.windowCreate(outside),
                IllegalArgumentException.class, "is not inside memory from Mp.allocate()"));
        c.add(bad("Mp.windowCreate(MemorySegment)", "a closed Mp", () -> closedMp.windowCreate(buf),
                IllegalStateException.class, CLOSED));
        c.add(nul("Mp.windowDestroy(MpWindow)", "window", () -> mp.windowDestroy(null)));
        c.add(bad("Mp.windowDestroy(MpWindow)", "a destroyed window", () -> mp.windowDestroy(gone), IllegalStateException.class,
                "already destroyed"));
        c.add(bad("Mp.windowDestroy(MpWindow)", "another Mp's window", () -> mp.windowDestroy(otherWindow),
                IllegalArgumentException.class, "belongs to another Mp"));
        c.add(nul(put, "src", () -> mp.iput(null, reg, 1, 0, win, 0)));
        c.add(nul(put, "reg", () -> mp.iput(b8, null, 1, 0, win, 0)));
        c.add(nul(put, "window", () -> mp.iput(b8, reg, 1, 0, null, 0)));
        c.add(bad(put, "displacement -1", () -> mp.iput(b8, reg, 1, -1, win, 0), IllegalArgumentException.class,
                "displacement -1 + 8 bytes is past the window of rank 1 (101 bytes)"));
        c.add(bad(put, "displacement 94: 8 bytes end one past the exact window", () -> mp.iput(b8, reg, 1, 94, win, 0),
                IllegalArgumentException.class, "displacement 94 + 8 bytes is past the window of rank 1 (101 bytes)"));
        c.add(bad(put, "displacement Long.MAX_VALUE", () -> mp.iput(b8, reg, 1, Long.MAX_VALUE, win, 0),
                IllegalArgumentException.class, "is past the window"));
        c.add(bad(put, "a destroyed window", () -> mp.iput(b8, reg, 1, 0, gone, 0), IllegalStateException.class,
                "the window was destroyed"));
        c.add(bad(put, "another Mp's window", () -> mp.iput(b8, reg, 1, 0, otherWindow, 0), IllegalArgumentException.class,
                "the window belongs to another Mp"));
        c.add(bad(put, "flags -1", () -> mp.iput(b8, reg, 1, 0, win, -1), IllegalArgumentException.class, "unknown put flags"));
        c.add(nul(get, "dst", () -> mp.iget(null, reg, 1, 0, win)));
        c.add(nul(get, "reg", () -> mp.iget(b8, null, 1, 0, win)));
        c.add(nul(get, "window", () -> mp.iget(b8, reg, 1, 0, null)));
        c.add(bad(get, "displacement 95 of rank 2's 102 bytes", () -> mp.iget(b8, reg, 2, 95, win),
                IllegalArgumentException.class, "past the window of rank 2 (102 bytes)"));
        String fa = "Mp.ifetchAdd(MemorySegment,MpRegistration,int,long,long,MpWindow)";
        String cas = "Mp.icompareSwap(MemorySegment,MpRegistration,int,long,long,long,MpWindow)";
        c.add(nul(fa, "result", () -> mp.ifetchAdd(null, reg, 1, 0, 1, win)));
        c.add(nul(fa, "reg", () -> mp.ifetchAdd(b8, null, 1, 0, 1, win)));
        c.add(nul(fa, "window", () -> mp.ifetchAdd(b8, reg, 1, 0, 1, null)));
        c.add(bad(fa, "a 4-byte result", () -> mp.ifetchAdd(buf.asSlice(64, 4), reg, 1, 0, 1, win),
                IllegalArgumentException.class, "an atomic's result buffer is 8 bytes, got 4"));
        c.add(bad(fa, "displacement 4: not aligned", () -> mp.ifetchAdd(b8, reg, 1, 4, 1, win),
                IllegalArgumentException.class, "displacement 4 in the window of rank 1 is not 8-byte aligned"));
        c.add(bad(fa, "displacement 96: the word ends past rank 1's 101 bytes", () -> mp.ifetchAdd(b8, reg, 1, 96, 1, win),
                IllegalArgumentException.class, "displacement 96 + 8 bytes is past the window of rank 1 (101 bytes)"));
        c.add(bad(fa, "this rank", () -> mp.ifetchAdd(b8, reg, 0, 0, 1, win), IllegalArgumentException.class,
                "rank 0 is this rank"));
        c.add(bad(fa, "a destroyed window", () -> mp.ifetchAdd(b8, reg, 1, 0, 1, gone), IllegalStateException.class,
                "the window was destroyed"));
        String fap = "Mp.fetchAddPrepare(MemorySegment,MpRegistration,int,long,long,MpWindow)";
        c.add(nul(fap, "result", () -> mp.fetchAddPrepare(null, reg, 1, 0, 1, win)));
        c.add(nul(fap, "reg", () -> mp.fetchAddPrepare(b8, null, 1, 0, 1, win)));
        c.add(nul(fap, "window", () -> mp.fetchAddPrepare(b8, reg, 1, 0, 1, null)));
        c.add(bad(fap, "displacement 4: not aligned", () -> mp.fetchAddPrepare(b8, reg, 1, 4, 1, win),
                IllegalArgumentException.class, "displacement 4 in the window of rank 1 is not 8-byte aligned"));
        c.add(bad(fap, "this rank", () -> mp.fetchAddPrepare(b8, reg, 0, 0, 1, win), IllegalArgumentException.class,
                "rank 0 is this rank"));
        c.add(nul(cas, "result", () -> mp.icompareSwap(null, reg, 1, 0, 0, 1, win)));
        c.add(nul(cas, "reg", () -> mp.icompareSwap(b8, null, 1, 0, 0, 1, win)));
        c.add(nul(cas, "window", () -> mp.icompareSwap(b8, reg, 1, 0, 0, 1, null)));
        c.add(bad(cas, "another Mp's window", () -> mp.icompareSwap(b8, reg, 1, 0, 0, 1, otherWindow),
                IllegalArgumentException.class, "the window belongs to another Mp"));
        c.add(bad(cas, "displacement -8", () -> mp.icompareSwap(b8, reg, 2, -8, 0, 1, win), IllegalArgumentException.class,
                "displacement -8 + 8 bytes is past the window of rank 2 (102 bytes)"));
        c.add(nul(putS, "src", () -> mp.iputOnStream(null, reg, 1, 0, win, 0, stream)));
        c.add(nul(putS, "reg", () -> mp.iputOnStream(b8, null, 1, 0, win, 0, stream)));
        c.add(nul(putS, "window", () -> mp.iputOnStream(b8, reg, 1, 0, null, 0, stream)));
        c.add(nul(putS, "stream", () -> mp.iputOnStream(b8, reg, 1, 0, win, 0, null)));
        c.add(bad(putS, "a closed stream", () -> mp.iputOnStream(b8, reg, 1, 0, win, 0, closedStream),
                IllegalStateException.class, STREAM_CLOSED));
        c.add(nul(getS, "dst", () -> mp.igetOnStream(null, reg, 1, 0, win, stream)));
        c.add(nul(getS, "reg", () -> mp.igetOnStream(b8, null, 1, 0, win, stream)));
        c.add(nul(getS, "window", () -> mp.igetOnStream(b8, reg, 1, 0, null, stream)));
        c.add(nul(getS, "stream", () -> mp.igetOnStream(b8, reg, 1, 0, win, null)));
        c.add(bad(getS, "a failed stream", () -> mp.igetOnStream(b8, reg, 1, 0, win, failedStream),
                StreamFailedException.class, "stream 'args-failed' failed"));
        c.add(nul(prep, "src", () -> mp.putPrepare(null, reg, 1, 0, win, 0)));
        c.add(nul(prep, "reg", () -> mp.putPrepare(b8, null, 1, 0, win, 0)));
        c.add(nul(prep, "window", () -> mp.putPrepare(b8, reg, 1, 0, null, 0)));
        c.add(bad(prep, "displacement -8", () -> mp.putPrepare(b8, reg, 1, -8, win, 0), IllegalArgumentException.class,
                "displacement -8"));
        c.add(bad(prep, "flags Integer.MIN_VALUE", () -> mp.putPrepare(b8, reg, 1, 0, win, Integer.MIN_VALUE),
                IllegalArgumentException.class, "unknown put flags 0x80000000"));
        c.add(nul("Mp.iputPostOnStream(MpRequest,Stream)", "request", () -> mp.iputPostOnStream(null, stream)));
        c.add(nul("Mp.iputPostOnStream(MpRequest,Stream)", "stream", () -> mp.iputPostOnStream(prepared, null)));
        c.add(nul("Mp.iputPostAllOnStream(List,Stream)", "requests", () -> mp.iputPostAllOnStream(null, stream)));
        c.add(nul("Mp.iputPostAllOnStream(List,Stream)", "stream", () -> mp.iputPostAllOnStream(List.of(prepared), null)));

        // words, queues, exports
        c.add(nul("Mp.wait32(MemoryWord,int,WaitCondition)", "word", () -> mp.wait32(null, 0, WaitCondition.EQ)));
        c.add(nul("Mp.wait32(MemoryWord,int,WaitCondition)", "condition", () -> mp.wait32(w32, 0, null)));
        c.add(nul("Mp.wait32OnStream(MemoryWord,int,WaitCondition,Stream)", "word",
                () -> mp.wait32OnStream(null, 0, WaitCondition.EQ, stream)));
        c.add(nul("Mp.wait32OnStream(MemoryWord,int,WaitCondition,Stream)", "condition", () -> mp.wait32OnStream(w32, 0, null, stream)));
        c.add(nul("Mp.wait32OnStream(MemoryWord,int,WaitCondition,Stream)", "stream",
                () -> mp.wait32OnStream(w32, 0, WaitCondition.EQ, null)));
        c.add(bad("Mp.wait32OnStream(MemoryWord,int,WaitCondition,Stream)", "a 64-bit word",
                () -> mp.wait32OnStream(w64, 0, WaitCondition.EQ, stream), IllegalArgumentException.class,
                "WAIT_VALUE32 needs a 32-bit word"));
        c.add(bad("Mp.wait32OnStream(MemoryWord,int,WaitCondition,Stream)", "a closed stream",
                () -> mp.wait32OnStream(w32, 0, WaitCondition.EQ, closedStream), IllegalStateException.class, STREAM_CLOSED));
        c.add(nul("Mp.write32OnStream(MemoryWord,int,Stream)", "word", () -> mp.write32OnStream(null, 1, stream)));
        c.add(nul("Mp.write32OnStream(MemoryWord,int,Stream)", "stream", () -> mp.write32OnStream(w32, 1, null)));
        c.add(bad("Mp.descQueue()", "a closed Mp", closedMp::descQueue, IllegalStateException.class, CLOSED));
        c.add(bad("Mp.kiExport()", "a closed Mp", closedMp::kiExport, IllegalStateException.class, CLOSED));
        c.add(nul("Mp.kiExport(KiTableExecutor)", "executor", () -> mp.kiExport(null)));
        c.add(bad("Mp.barrier()", "a closed Mp", closedMp::barrier, IllegalStateException.class, CLOSED));

        // windows
        c.add(bad("MpWindow.size(int)", "rank -1", () -> win.size(-1), IllegalArgumentException.class,
                "rank -1 is not a rank of this job: ranks are 0..2"));
        c.add(bad("MpWindow.size(int)", "rank 3", () -> win.size(3), IllegalArgumentException.class, "rank 3 is not a rank"));
        c.add(bad("MpWindow.remoteAddress(int)", "rank Integer.MIN_VALUE", () -> win.remoteAddress(Integer.MIN_VALUE),
                IllegalArgumentException.class, "rank " + Integer.MIN_VALUE + " is not a rank"));
        c.add(bad("MpWindow.rkey(int)", "rank Integer.MAX_VALUE", () -> win.rkey(Integer.MAX_VALUE),
                IllegalArgumentException.class, "rank " + Integer.MAX_VALUE + " is not a rank"));
        c.add(bad("MpWindow.peerMemory(int)", "rank 3", () -> win.peerMemory(3), IllegalArgumentException.class,
                "rank 3 is not a rank"));
        c.add(bad("MpWindow.peerMemory(int)", "a destroyed window", () -> gone.peerMemory(1), IllegalStateException.class,
                "the window was destroyed"));

        // descriptor queues
        c.add(nul("MpDescQueue.addSend(MpRequest)", "request", () -> queue.addSend(null)));
        c.add(bad("MpDescQueue.addSend(MpRequest)", "a posted receive", () -> queue.addSend(recv), IllegalStateException.class,
                "not PREPARED"));
        c.add(nul("MpDescQueue.addWaitSend(MpRequest)", "request", () -> queue.addWaitSend(null)));
        c.add(bad("MpDescQueue.addWaitSend(MpRequest)", "a receive", () -> queue.addWaitSend(recv),
                IllegalArgumentException.class, "is a receive: use addWaitRecv"));
        c.add(nul("MpDescQueue.addWaitRecv(MpRequest)", "request", () -> queue.addWaitRecv(null)));
        c.add(bad("MpDescQueue.addWaitRecv(MpRequest)", "a send", () -> queue.addWaitRecv(prepared),
                IllegalArgumentException.class, "is not a receive: use addWaitSend"));
        c.add(nul("MpDescQueue.addWaitValue32(MemoryWord,int,WaitCondition)", "word",
                () -> queue.addWaitValue32(null, 1, WaitCondition.EQ)));
        c.add(nul("MpDescQueue.addWaitValue32(MemoryWord,int,WaitCondition)", "condition", () -> queue.addWaitValue32(w32, 1, null)));
        c.add(bad("MpDescQueue.addWaitValue32(MemoryWord,int,WaitCondition)", "a 64-bit word",
                () -> queue.addWaitValue32(w64, 1, WaitCondition.EQ), IllegalArgumentException.class, "needs a 32-bit word"));
        c.add(nul("MpDescQueue.addWriteValue32(MemoryWord,int)", "word", () -> queue.addWriteValue32(null, 1)));
        c.add(nul("MpDescQueue.postOnStream(Stream)", "stream", () -> staged.postOnStream(null)));
        c.add(bad("MpDescQueue.postOnStream(Stream)", "a closed stream", () -> staged.postOnStream(closedStream),
                IllegalStateException.class, STREAM_CLOSED));
        c.add(bad("MpDescQueue.postOnStream(Stream)", "a failed stream", () -> staged.postOnStream(failedStream),
                StreamFailedException.class, "stream 'args-failed' failed"));

        // KI exports
        c.add(nul("MpKiExport.addSend(MpRequest)", "request", () -> export.addSend(null)));
        c.add(bad("MpKiExport.addSend(MpRequest)", "a posted receive", () -> export.addSend(recv), IllegalStateException.class,
                "not PREPARED"));
        c.add(nul("MpKiExport.addTemplate(MpRequest)", "request", () -> export.addTemplate(null)));
        c.add(nul("MpKiExport.addWait(MpRequest)", "request", () -> export.addWait(null)));
        c.add(nul("MpKiExport.addWordWait(MemoryWord,int,WaitCondition)", "word", () -> export.addWordWait(null, 1, WaitCondition.EQ)));
        c.add(nul("MpKiExport.addWordWait(MemoryWord,int,WaitCondition)", "condition", () -> export.addWordWait(w32, 1, null)));
        c.add(nul("MpKiExport.writeTo(MemorySegment)", "dest", () -> export.writeTo(null)));
        c.add(bad("MpKiExport.writeTo(MemorySegment)", "8 bytes", () -> export.writeTo(foreign.asSlice(0, 8)),
                IllegalArgumentException.class, "the KI table needs"));

        // settings
        MpConfig d = MpConfig.defaults();
        c.add(nul("MpConfig.new(NicConfig,QueuePairConfig,int,Duration)", "nic",
                () -> new MpConfig(null, QueuePairConfig.DEFAULT, 16, Duration.ofSeconds(1))));
        c.add(nul("MpConfig.new(NicConfig,QueuePairConfig,int,Duration)", "queuePairs",
                () -> new MpConfig(d.nic(), null, 16, Duration.ofSeconds(1))));
        c.add(nul("MpConfig.new(NicConfig,QueuePairConfig,int,Duration)", "waitTimeout",
                () -> new MpConfig(d.nic(), QueuePairConfig.DEFAULT, 16, null)));
        c.add(bad("MpConfig.new(NicConfig,QueuePairConfig,int,Duration)", "requestPool Integer.MIN_VALUE",
                () -> new MpConfig(d.nic(), QueuePairConfig.DEFAULT, Integer.MIN_VALUE, Duration.ofSeconds(1)),
                IllegalArgumentException.class, "requestPool must be >= 1, got " + Integer.MIN_VALUE));
        c.add(nul("MpConfig.withNic(NicConfig)", "nic", () -> d.withNic(null)));
        c.add(nul("MpConfig.withQueuePairs(QueuePairConfig)", "queuePairs", () -> d.withQueuePairs(null)));
        c.add(bad("MpConfig.withRequestPool(int)", "0", () -> d.withRequestPool(0), IllegalArgumentException.class,
                "requestPool must be >= 1, got 0"));
        c.add(nul("MpConfig.withWaitTimeout(Duration)", "waitTimeout", () -> d.withWaitTimeout(null)));
        c.add(bad("MpConfig.withWaitTimeout(Duration)", "zero", () -> d.withWaitTimeout(Duration.ZERO),
                IllegalArgumentException.class, "waitTimeout must be positive, got PT0S"));
        c.add(bad("MpConfig.withWaitTimeout(Duration)", "-1 ns", () -> d.withWaitTimeout(Duration.ofNanos(-1)),
                IllegalArgumentException.class, "waitTimeout must be positive"));
        c.add(bad("MpConfig.withWaitTimeout(Duration)", "Long.MAX_VALUE s", () -> d.withWaitTimeout(huge),
                IllegalArgumentException.class, "waitTimeout must be at most"));
        return c;
    }

    // ---- what must not change ----

    /** Everything a refused call could have touched on rank 0. */
    record State(int requestsAvailable, int registrations, List<String> files, RequestState prepared, RequestState recv,
                 int queue, int staged, long export, boolean winDestroyed, long[] sizes, Throwable streamFailure,
                 boolean streamClosed) {
        @Override
        public boolean equals(Object o) {
            return o instanceof State s && requestsAvailable == s.requestsAvailable && registrations == s.registrations
                    && files.equals(s.files) && prepared == s.prepared && recv == s.recv && queue == s.queue
                    && staged == s.staged && export == s.export && winDestroyed == s.winDestroyed
                    && Arrays.equals(sizes, s.sizes) && streamFailure == s.streamFailure && streamClosed == s.streamClosed;
        }

        @Override
        public int hashCode() {
            return requestsAvailable;
        }

        @Override
        public String toString() {
            return "State{requests " + requestsAvailable + ", registrations " + registrations + ", files " + files
                    + ", prepared " + prepared + ", recv " + recv + ", queue " + queue + ", staged " + staged + ", export "
                    + export + ", window destroyed " + winDestroyed + ", sizes " + Arrays.toString(sizes) + ", stream "
                    + streamFailure + (streamClosed ? " closed" : "") + "}";
        }
    }

    static State state() throws IOException {
        SoftwareNic nic = (SoftwareNic) mp.nic();
        List<String> files;
        try (Stream<Path> list = Files.list(nic.directory().processDirectory())) {
            files = list.map(f -> f.getFileName().toString()).sorted().toList();
        }
        return new State(mp.requestsAvailable(), nic.registrations(), files, prepared.state(), recv.state(), queue.size(),
                staged.size(), export.byteSize(), win.isDestroyed(), new long[] {win.size(0), win.size(1), win.size(2)},
                stream.failure(), stream.isClosed());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void refusesPreciselyAndChangesNothing(Case c) throws IOException {
        State before = state();
        Throwable e = assertThrows(c.type(), c.call(), c::toString);
        String message = String.valueOf(e.getMessage());
        if (c.type() == NullPointerException.class && c.argument().endsWith("= null")) {
            assertEquals(c.message(), message, c.toString());
        } else {
            assertTrue(message.contains(c.message()), c + ": '" + message + "' lacks '" + c.message() + "'");
        }
        assertEquals(before, state(), c + " changed state");
    }

    /**
     * The table covers every public method and constructor of these classes that takes a reference argument: a
     * method added later without a row fails here.
     */
    @Test
    void everyPublicMethodWithAReferenceParameterHasARow() {
        Set<String> covered = cases().stream().map(Case::method).collect(Collectors.toSet());
        Set<String> missing = new TreeSet<>();
        for (Class<?> type : List.of(Mp.class, MpWindow.class, MpDescQueue.class, MpKiExport.class, MpConfig.class,
                MpRegistration.class)) {
            for (Method m : type.getDeclaredMethods()) {
                if (Modifier.isPublic(m.getModifiers()) && !m.getName().equals("equals") && takesReference(m.getParameterTypes())) {
                    require(type.getSimpleName() + "." + m.getName(), m.getParameterTypes(), covered, missing);
                }
            }
            for (var k : type.getConstructors()) {
                if (takesReference(k.getParameterTypes())) {
                    require(type.getSimpleName() + ".new", k.getParameterTypes(), covered, missing);
                }
            }
        }
        assertEquals(Set.of(), missing, "public methods with no row in the table");
    }

    private static boolean takesReference(Class<?>[] parameters) {
        return Arrays.stream(parameters).anyMatch(t -> !t.isPrimitive());
    }

    private static void require(String name, Class<?>[] parameters, Set<String> covered, Set<String> missing) {
        String key = name + "(" + Arrays.stream(parameters).map(Class::getSimpleName).collect(Collectors.joining(",")) + ")";
        if (!covered.contains(key)) {
            missing.add(key);
        }
    }

    // ---- exact sizes ----

    @Test
    void allocateReturnsExactlyTheLengthAndWindowsPublishIt() {
        assertEquals(EXPOSED, exposed.byteSize());
        for (int r = 0; r < 3; r++) {
            assertEquals(EXPOSED + r, win.size(r), "rank " + r + "'s window");
        }
        MemorySegment odd = mp.allocate(4097);
        assertEquals(4097, odd.byteSize());
        MemorySegment slice = odd.asSlice(4000, 97);
        MemorySegment whole = mp.allocationOf(slice);
        assertEquals(odd.address(), whole.address());
        assertEquals(4097, whole.byteSize());
        MpRegistration r = mp.register(slice);
        assertEquals(97, r.segment().byteSize());
        mp.deregister(r);
        MpRegistration all = mp.register(odd);
        assertEquals(4097, all.segment().byteSize());
        mp.free(odd);
        assertTrue(!all.isValid(), "freeing ends the registration");
        assertThrows(IllegalArgumentException.class, () -> mp.allocationOf(slice));
    }

    @Test
    void aPutMayEndExactlyAtTheEndOfAWindow() {
        MemorySegment src = buf.asSlice(256, 8);
        src.set(JAVA_LONG, 0, 0x0102030405060708L);
        MpRequest r = mp.iput(src, reg, 1, EXPOSED + 1 - 8, win, 0);
        mp.wait(r);
        MemorySegment back = buf.asSlice(512, 8);
        mp.wait(mp.iget(back, reg, 1, EXPOSED + 1 - 8, win));
        assertEquals(0x0102030405060708L, back.get(JAVA_LONG, 0));
        assertSame(RequestState.PREPARED, prepared.state());
    }
}
