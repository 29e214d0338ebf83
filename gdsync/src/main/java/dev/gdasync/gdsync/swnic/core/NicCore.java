package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.concurrent.AgentDuty;
import dev.gdasync.gdsync.concurrent.Futex;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.TrafficCounters;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import static dev.gdasync.gdsync.swnic.core.Layouts.INT;
import static dev.gdasync.gdsync.swnic.core.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The core of a software NIC, shared by its parts: its settings and name, its shared-memory directory and node
 * file (liveness and the memory-region table that peers read), its queue pairs, its agent, and its transports.
 * The API class ({@code SoftwareNic}) makes one and gives it the transports; the transports and queue pairs
 * reach the NIC only through it.
 *
 * <p>Transports: shared memory is always there; UCX is opened on first use when the settings offer it and UCX can
 * be loaded here, else its absence has a reason ({@link #ucxUnavailableReason()}).
 */
public final class NicCore {
    /** The software NIC's logger. */
    public static final System.Logger LOG = System.getLogger("dev.gdasync.gdsync.swnic");
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final NicSettings settings;
    private final String name;
    private final ShmDirectory directory;
    private final long startMillis;
    private final Arena nodeArena = Arena.ofShared();
    private final MemorySegment node;
    /** The wake file ({@link Layouts.Wake}): threads waiting for peers park on its word; peers wake them. */
    private final MemorySegment wake;
    private final MrTable mrTable;
    private final NicAgent agent;
    private final SecureRandom random = new SecureRandom();
    private final AtomicInteger nextQpn = new AtomicInteger(1);
    private final List<SwQueuePair> queuePairs = new ArrayList<>();
    /** The counts of closed queue pairs. */
    private TrafficCounters retired = TrafficCounters.NONE;
    private final Map<Long, SwQueuePair> byToken = new ConcurrentHashMap<>();
    private final SwTransport shm;
    private final Function<NicCore, SwTransport> ucxFactory;
    private final Object ucxLock = new Object();
    private volatile SwTransport ucx;
    private String ucxUnavailable;
    private final WaitProgress waitProgress = this::progressTransports;
    private volatile boolean open = true;

    /**
     * Opens the NIC's directory (after removing stale ones of dead processes) and node file, and starts its agent.
     *
     * @param settings   the settings
     * @param shmFactory makes the shared-memory transport
     * @param ucxFactory makes the UCX transport when first needed; throws with the reason when UCX cannot be used
     */
    public NicCore(NicSettings settings, Function<NicCore, SwTransport> shmFactory, Function<NicCore, SwTransport> ucxFactory) {
        this.settings = settings;
        this.name = "swnic" + INSTANCES.incrementAndGet() + "@" + ProcessHandle.current().pid();
        this.directory = ShmDirectory.open(settings.shmBase(), settings.jobId());
        this.startMillis = ShmDirectory.currentStartMillis();
        try {
            this.node = directory.createFile("node", Layouts.Node.size(settings.mrCapacity()), nodeArena);
            this.wake = directory.createFile("wake", Layouts.Wake.SIZE, nodeArena);
        } catch (RuntimeException e) {
            nodeArena.close();
            directory.close();
            throw e;
        }
        node.set(JAVA_INT, Layouts.Node.OFF_VERSION, Layouts.VERSION);
        node.set(JAVA_INT, Layouts.Node.OFF_MR_CAPACITY, settings.mrCapacity());
        node.set(JAVA_LONG, Layouts.Node.OFF_PID, ProcessHandle.current().pid());
        node.set(JAVA_LONG, Layouts.Node.OFF_START_MILLIS, startMillis);
        INT.setRelease(node, Layouts.Node.OFF_STATE, Layouts.Node.STATE_ALIVE);
        LONG.setRelease(node, Layouts.Node.OFF_MAGIC, Layouts.Node.MAGIC);
        this.mrTable = new MrTable(node, settings.mrCapacity(), name, settings.keyBits());
        this.shm = shmFactory.apply(this);
        this.ucxFactory = ucxFactory;
        this.agent = new NicAgent(this);
        agent.start();
    }

    /** @return the NIC's name for messages, unique in the process */
    public String name() {
        return name;
    }

    /** @return the settings */
    public NicSettings settings() {
        return settings;
    }

    /** @return the NIC's shared-memory directory */
    public ShmDirectory directory() {
        return directory;
    }

    /** @return when this process started (epoch ms), which endpoints carry to tell a reused pid */
    public long startMillis() {
        return startMillis;
    }

    /** @return the memory-region table */
    public MrTable mrTable() {
        return mrTable;
    }

    /**
     * @param lkey a key
     * @return the live registration of this NIC with that lkey, or null
     */
    public SwMemoryRegion localMr(long lkey) {
        return mrTable.byLkey(lkey);
    }

    /**
     * @param token a queue pair's token
     * @return this NIC's open queue pair with that token, or null
     */
    public SwQueuePair queuePairByToken(long token) {
        return byToken.get(token);
    }

    /** @return whether the NIC is open */
    public boolean isOpen() {
        return open;
    }

    /** @throws IllegalStateException if the NIC is closed */
    public void requireOpen() {
        if (!open) {
            throw new IllegalStateException(name + " is closed");
        }
    }

    /**
     * Creates a queue pair, in state RESET, and hands it to the agent.
     *
     * @param config its sizes
     * @return the queue pair
     */
    public SwQueuePair createQueuePair(QueuePairConfig config) {
        SwQueuePair qp;
        synchronized (this) {
            requireOpen();
            long token;
            do {
                token = random.nextLong();
            } while (token == 0);
            qp = new SwQueuePair(this, nextQpn.getAndIncrement(), config, token);
            queuePairs.add(qp);
            byToken.put(token, qp);
        }
        agent.add(qp);
        return qp;
    }

    /** A queue pair closed: the agent stops polling it before this returns; its counts stay in the NIC's. */
    void forget(SwQueuePair qp) {
        agent.remove(qp);
        synchronized (this) {
            if (queuePairs.remove(qp)) {
                retired = retired.plus(qp.counters());
            }
            byToken.remove(qp.token());
        }
    }

    /** @return each open queue pair's counts, by number */
    public synchronized Map<Integer, TrafficCounters> queuePairCounters() {
        Map<Integer, TrafficCounters> m = new TreeMap<>();
        for (SwQueuePair qp : queuePairs) {
            m.put(qp.number(), qp.counters());
        }
        return m;
    }

    /** @return what every queue pair of this NIC has done, closed ones included */
    public synchronized TrafficCounters counters() {
        TrafficCounters sum = retired;
        for (SwQueuePair qp : queuePairs) {
            sum = sum.plus(qp.counters());
        }
        return sum;
    }

    /** @return the shared-memory transport */
    public SwTransport shm() {
        return shm;
    }

    /**
     * The UCX transport, opened on first use when the settings offer it and UCX can be used here.
     *
     * @return it, or null (then {@link #ucxUnavailableReason()} says why)
     */
    public SwTransport ucx() {
        synchronized (ucxLock) {
            if (ucx == null && ucxUnavailable == null) {
                if (!settings.offersUcx()) {
                    ucxUnavailable = "this NIC's transport is shm";
                } else if (!open) {
                    ucxUnavailable = name + " is closed";
                } else {
                    try {
                        ucx = ucxFactory.apply(this);
                    } catch (RuntimeException | LinkageError e) {
                        ucxUnavailable = e.getMessage();
                        if (settings.ucxOnThisHost()) {
                            LOG.log(System.Logger.Level.WARNING, name + ": " + ucxUnavailable);
                        }
                    }
                }
            }
            return ucx;
        }
    }

    /** @return why {@link #ucx()} is null */
    public String ucxUnavailableReason() {
        synchronized (ucxLock) {
            return ucxUnavailable == null ? "UCX is not open" : ucxUnavailable;
        }
    }

    /** @return this NIC's UCX worker address for endpoint descriptors, or an empty array without UCX */
    byte[] ucxAddress() {
        SwTransport t = ucx();
        return t == null ? new byte[0] : t.address();
    }

    /**
     * Called by a thread that found a completion queue empty: progresses the transports that need it on that
     * thread, so that a polling thread receives its messages itself.
     */
    void pollTransports() {
        progressTransports();
    }

    /** @return the hook with which waiting threads progress the NIC's transports (its prepared waits carry it) */
    public WaitProgress waitProgress() {
        return waitProgress;
    }

    private int progressTransports() {
        SwTransport t = ucx;
        return t != null ? t.progress() : 0;
    }

    /**
     * Parks a thread that waits for its peers on this process's wake word, for at most {@code nanos}: a peer's
     * executor that completes a request into this NIC sees the sleeper count and wakes it ({@code PeerNode}). The
     * count goes up before {@code ready} is asked and the word is read before that, so a delivery that the last look
     * missed either is seen by {@code ready} or changes the word (the futex then does not sleep) or wakes the sleeper.
     *
     * @param nanos the longest park, positive
     * @param ready whether the wait is over
     * @throws NullPointerException     if {@code ready} is null
     * @throws IllegalArgumentException if {@code nanos} is not positive
     */
    public void awaitPeers(long nanos, BooleanSupplier ready) {
        Objects.requireNonNull(ready, "ready must not be null");
        if (nanos <= 0) {
            throw new IllegalArgumentException("nanos must be positive, got " + nanos);
        }
        int seq = (int) INT.getVolatile(wake, Layouts.Wake.OFF_SEQ);
        INT.getAndAdd(wake, Layouts.Wake.OFF_SLEEPERS, 1);
        try {
            if (!ready.getAsBoolean()) {
                Futex.await(wake, Layouts.Wake.OFF_SEQ, seq, nanos);
            }
        } finally {
            INT.getAndAdd(wake, Layouts.Wake.OFF_SLEEPERS, -1);
        }
    }

    /** Cuts the agent's park short: a plain-store ring is now expected, or a stalled send must be retried. */
    public void wakeAgent() {
        agent.wake();
    }

    /**
     * Runs a duty on this NIC's agent thread, in every duty cycle, until it is removed.
     *
     * @param duty the duty
     */
    public void addAgentDuty(AgentDuty duty) {
        requireOpen();
        agent.add(Objects.requireNonNull(duty, "duty must not be null"));
    }

    /**
     * Stops running a duty; returns once the agent can no longer be running it.
     *
     * @param duty the duty
     */
    public void removeAgentDuty(AgentDuty duty) {
        agent.remove(Objects.requireNonNull(duty, "duty must not be null"));
    }

    /**
     * Runs plain-store rings on the calling thread (a host thread that played a kernel), and progresses the UCX
     * transport there too: such a thread calls this between looks while it waits, and a completion that arrives over
     * UCX is delivered only by a thread that progresses the worker, which would otherwise be the agent.
     *
     * @return how many queue pairs had plain-store rings run, plus the transport's progress
     */
    public int progressStoreRings() {
        return agent.runStoreRings() + progressTransports();
    }

    /** Agent step, every liveness interval: the transports' shared state, then every queue pair's peer. */
    void sweep() {
        shm.sweep();
        SwTransport u = ucx;
        if (u != null) {
            u.sweep();
        }
        List<SwQueuePair> qps;
        synchronized (this) {
            qps = new ArrayList<>(queuePairs);
        }
        for (SwQueuePair qp : qps) {
            qp.checkPeer();
        }
    }

    /**
     * Closes every queue pair (peers see them closed), runs {@code beforeAgentStops} (the NIC frees its device
     * regions there, which peers may still be unmapping), stops the agent, closes the transports, marks the node
     * closed and removes the directory. Closing twice does nothing.
     *
     * @param beforeAgentStops what the NIC closes while its agent still answers peers
     */
    public void close(Runnable beforeAgentStops) {
        List<SwQueuePair> qps;
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
            qps = new ArrayList<>(queuePairs);
        }
        INT.setRelease(node, Layouts.Node.OFF_STATE, Layouts.Node.STATE_CLOSED);
        // A last look at the peers: one that died since the agent's last sweep has its files removed now, rather
        // than when some later process opens a NIC.
        shm.sweep();
        for (SwQueuePair qp : qps) {
            qp.close();
        }
        beforeAgentStops.run();
        agent.stop();
        SwTransport u;
        synchronized (ucxLock) {
            u = ucx;
            ucx = null;
            ucxUnavailable = name + " is closed";
        }
        if (u != null) {
            u.close();
        }
        shm.close();
        directory.close();
        nodeArena.close();
    }

    @Override
    public String toString() {
        return name;
    }
}
