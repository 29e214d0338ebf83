package dev.gdasync.test.faults;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.gdsync.testutil.ChildProcess;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpConfig;
import dev.gdasync.libmp.MpDescQueue;
import dev.gdasync.libmp.MpException;
import dev.gdasync.libmp.MpRegistration;
import dev.gdasync.libmp.MpRequest;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A rank of a job that exchanges messages with every other rank, round after round, until an operation fails: the
 * fault-injection suite ({@link KillDuringTrafficTest}) kills one rank in the middle and measures how long the
 * others take to fail.
 *
 * <p>Every round, this rank posts a receive from every peer, sends every peer a message, waits for all of them
 * ({@link Mp#waitAll}) and checks every payload (sender, receiver and round are in every word). Sizes cycle from 8
 * bytes to 8 KiB (or the largest size given). Two modes:
 * <ul>
 *   <li>{@code host}: {@code irecv}, {@code isend} (the CPU rings), {@code waitAll};</li>
 *   <li>{@code stream}: a host stream fills the send buffers and rings the sends, and waits for the receives'
 *       (and, in odd rounds, the sends') completions; even rounds use {@code isendOnStream} and
 *       {@code waitOnStream}, odd rounds a descriptor queue ({@code sendPrepare}, {@code addSend},
 *       {@code addWaitRecv}, {@code addWaitSend}, {@code postOnStream}); the CPU then reaps with {@code waitAll}.</li>
 * </ul>
 *
 * <p>Output, one line each: {@code dir <path>} (this rank's shared-memory directory), {@code traffic} once the
 * first round is done (every pair has exchanged a message), and, when an operation fails with an
 * {@link MpException}, {@code FAILED <System.nanoTime()> <message>} (the monotonic clock: comparable with the test's
 * on one machine), then {@code CLOSED} once {@code Mp.close()} returned (or {@code CLOSED, close threw <exception>}
 * when it threw: it closes the NIC all the same), and exit status 1. Anything else that goes
 * wrong prints {@code ERROR <System.nanoTime()> <what>} and exits with 2; traffic that runs for the safety limit
 * without a failure prints {@code UNEXPECTED ...} and exits with 3. The rank exits at once (status 4) when its
 * standard input ends: the test JVM is gone.
 *
 * <p>Arguments: the mode ({@code host} or {@code stream}), the shared-memory base, and optionally the largest
 * message (a power of 2, default 8192: larger ones make a kill land in the middle of a copy more often). The job
 * comes from the
 * environment ({@link EnvBootstrap#fromEnvironment()}).
 */
public final class AllPairsRankMain {
    /** The largest message by default: sizes cycle 8, 16, ..., 8192 bytes. */
    static final int DEFAULT_MAX_BYTES = 8192;
    /** How long a rank runs traffic without a failure before it gives up (the test kills well before). */
    private static final long SAFETY_LIMIT_NANOS = Duration.ofSeconds(180).toNanos();
    /**
     * How long an Mp wait may take: far beyond the bound the suite holds failures to, so a wait that misses the
     * failure shows as a timeout, yet short enough that such a wait costs CI 15 s, not the default 60.
     */
    private static final Duration WAIT_TIMEOUT = Duration.ofSeconds(15);

    private final Mp mp;
    private final int me;
    private final int n;
    private final MemorySegment mem;
    private final MpRegistration reg;
    private final int maxBytes;
    private final int sizes;

    private AllPairsRankMain(Mp mp, int maxBytes) {
        this.mp = mp;
        this.me = mp.rank();
        this.n = mp.size();
        this.maxBytes = maxBytes;
        this.sizes = Integer.numberOfTrailingZeros(maxBytes) - 2; // 8 << (sizes - 1) == maxBytes
        this.mem = mp.allocate(2L * n * maxBytes);
        this.reg = mp.register(mem);
    }

    /**
     * Starts this main as one rank of a job in a light child JVM. Its standard input stays open while the test runs:
     * a rank exits when it ends, so a test JVM that dies takes its ranks with it; closing the child kills it.
     *
     * @param name    a name for messages
     * @param command the command line: {@link ChildProcess#javaCommand} of this class with its arguments, or one
     *                that starts it
     * @param env     what a launcher gives a rank ({@code GDASYNC_RANK}, {@code GDASYNC_SIZE}, the rendezvous, the
     *                secret, the job id)
     * @return the running rank
     */
    static ChildProcess start(String name, List<String> command, Map<String, String> env) {
        return ChildProcess.builder(name, command).environment(env).keepStdinOpen(Duration.ZERO).start();
    }

    public static void main(String[] args) {
        String mode = args[0];
        Path base = Path.of(args[1]);
        int maxBytes = args.length > 2 ? Integer.parseInt(args[2]) : DEFAULT_MAX_BYTES;
        if (!mode.equals("host") && !mode.equals("stream")) {
            System.out.println("ERROR " + System.nanoTime() + " unknown mode " + mode + " (host or stream)");
            System.exit(2);
        }
        if (Integer.bitCount(maxBytes) != 1 || maxBytes < 8 || maxBytes > (1 << 26)) {
            System.out.println("ERROR " + System.nanoTime() + " the largest message is a power of 2 in [8, 64 MiB], got "
                    + maxBytes);
            System.exit(2);
        }
        watchStdin();
        int status;
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment()) {
            MpConfig cfg = MpConfig.defaults().withNic(SwNicConfig.defaults().withShmBase(base)).withWaitTimeout(WAIT_TIMEOUT);
            Mp mp = Mp.init(boot, cfg);
            try {
                status = new AllPairsRankMain(mp, maxBytes).run(mode);
            } catch (RuntimeException e) {
                try {
                    mp.close();
                } catch (RuntimeException c) {
                    e.addSuppressed(c); // the first exception is the one reported
                }
                throw e;
            }
            if (status == 1) {
                // Mp.close after a failed operation: when this rank's NIC saw the dead peer before the bootstrap
                // told it, close runs its barrier, which fails (documented); the NIC is closed all the same.
                try {
                    mp.close();
                    System.out.println("CLOSED");
                } catch (RuntimeException e) {
                    System.out.println("CLOSED, close threw " + e);
                }
            } else {
                mp.close();
            }
        } catch (RuntimeException e) {
            System.out.println("ERROR " + System.nanoTime() + " " + e);
            e.printStackTrace();
            status = 2;
        }
        System.out.flush();
        System.exit(status);
    }

    /** Exits at once when standard input ends: the test JVM that started this rank is gone, or gave up on it. */
    private static void watchStdin() {
        Thread.ofPlatform().daemon().name("stdin-watch").start(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing is sent
                }
            } catch (IOException e) {
                // ends the same way
            }
            Runtime.getRuntime().halt(4);
        });
    }

    /**
     * Runs rounds until one fails.
     *
     * @return the exit status: 1 after a failed operation, 2 after a wrong payload, 3 at the safety limit
     */
    private int run(String mode) {
        System.out.println("dir " + ((SoftwareNic) mp.nic()).directory().processDirectory());
        System.out.flush();
        long start = System.nanoTime();
        try (HostStream stream = mode.equals("stream") ? HostStream.create("faults-" + me) : null) {
            for (long round = 0; ; round++) {
                try {
                    if (stream == null) {
                        hostRound(round);
                    } else if (round % 2 == 0) {
                        streamRound(round, stream);
                    } else {
                        descQueueRound(round, stream);
                    }
                } catch (MpException e) {
                    System.out.println("FAILED " + System.nanoTime() + " " + e.getMessage());
                    System.out.flush();
                    return 1;
                }
                String bad = check(round);
                if (bad != null) {
                    System.out.println("ERROR " + System.nanoTime() + " " + bad);
                    return 2;
                }
                if (round == 0) {
                    System.out.println("traffic");
                    System.out.flush();
                }
                if (System.nanoTime() - start > SAFETY_LIMIT_NANOS) {
                    System.out.println("UNEXPECTED " + (round + 1) + " rounds without a failure");
                    return 3;
                }
            }
        }
    }

    private void hostRound(long round) {
        int bytes = bytes(round);
        List<MpRequest> all = new ArrayList<>(2 * (n - 1));
        for (int p : peers()) {
            all.add(mp.irecv(recvSlot(p, bytes), p, reg));
        }
        for (int p : peers()) {
            MemorySegment out = sendSlot(p, bytes);
            fill(out, me, p, round);
            all.add(mp.isend(out, p, reg));
        }
        mp.waitAll(all);
    }

    /** The stream fills each send buffer, rings the send, then waits for every receive; the CPU reaps. */
    private void streamRound(long round, HostStream stream) {
        int bytes = bytes(round);
        List<MpRequest> recvs = new ArrayList<>(n - 1);
        List<MpRequest> all = new ArrayList<>(2 * (n - 1));
        for (int p : peers()) {
            recvs.add(mp.irecv(recvSlot(p, bytes), p, reg));
        }
        for (int p : peers()) {
            MemorySegment out = sendSlot(p, bytes);
            int to = p;
            stream.launch(() -> fill(out, me, to, round));
            all.add(mp.isendOnStream(out, p, reg, stream));
        }
        for (MpRequest r : recvs) {
            mp.waitOnStream(r, stream);
        }
        all.addAll(recvs);
        mp.waitAll(all);
    }

    /** The same through a descriptor queue: one batch of sends and completion waits posted to the stream. */
    private void descQueueRound(long round, HostStream stream) {
        int bytes = bytes(round);
        List<MpRequest> recvs = new ArrayList<>(n - 1);
        List<MpRequest> sends = new ArrayList<>(n - 1);
        for (int p : peers()) {
            recvs.add(mp.irecv(recvSlot(p, bytes), p, reg));
        }
        for (int p : peers()) {
            MemorySegment out = sendSlot(p, bytes);
            fill(out, me, p, round);
            sends.add(mp.sendPrepare(out, p, reg));
        }
        MpDescQueue q = mp.descQueue();
        sends.forEach(q::addSend);
        recvs.forEach(q::addWaitRecv);
        sends.forEach(q::addWaitSend);
        q.postOnStream(stream);
        List<MpRequest> all = new ArrayList<>(sends);
        all.addAll(recvs);
        mp.waitAll(all);
    }

    /** @return a description of the first wrong word received this round, or null */
    private String check(long round) {
        int bytes = bytes(round);
        for (int p : peers()) {
            MemorySegment in = recvSlot(p, bytes);
            for (int i = 0; i < bytes / 8; i++) {
                long want = word(p, me, round, i);
                long got = in.get(JAVA_LONG, 8L * i);
                if (got != want) {
                    return "payload from rank " + p + ", round " + round + ", word " + i + " of " + bytes / 8
                            + ": expected 0x" + Long.toHexString(want) + ", got 0x" + Long.toHexString(got);
                }
            }
        }
        return null;
    }

    /** @return the other ranks, starting after this one (so that ranks do not all address rank 0 first) */
    private int[] peers() {
        int[] ps = new int[n - 1];
        for (int k = 1; k < n; k++) {
            ps[k - 1] = (me + k) % n;
        }
        return ps;
    }

    private int bytes(long round) {
        return 8 << (int) (round % sizes);
    }

    private MemorySegment sendSlot(int peer, int bytes) {
        return mem.asSlice((long) peer * maxBytes, bytes);
    }

    private MemorySegment recvSlot(int peer, int bytes) {
        return mem.asSlice((long) (n + peer) * maxBytes, bytes);
    }

    private static void fill(MemorySegment out, int from, int to, long round) {
        for (int i = 0; i < out.byteSize() / 8; i++) {
            out.set(JAVA_LONG, 8L * i, word(from, to, round, i));
        }
    }

    /** Every word names its sender, receiver, round and index, so a misplaced or stale message shows. */
    private static long word(int from, int to, long round, int index) {
        return ((long) from << 56) | ((long) to << 48) | ((round & 0xffff_ffffL) << 16) | (index & 0xffff);
    }
}
