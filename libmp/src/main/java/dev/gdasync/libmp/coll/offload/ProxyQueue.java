package dev.gdasync.libmp.coll.offload;

import dev.gdasync.gdsync.concurrent.Futex;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

// Why this file is long: it declares the queue file's whole layout once for both sides (the ranks and the proxy),
// with every field's accessor beside its offset, so the format has one home.
/**
 * The collective proxy's descriptor queue: one shared-memory file the proxy creates (and registers in its own NIC,
 * so the staging areas in it are the proxy's local memory) and every rank of the host maps. Little-endian,
 * declared once here for both sides.
 *
 * <pre>
 * header (4096 B)   magic, version, proxy pid and start time, ranks, slots per rank, slot size, staging size,
 *                   direct threshold, stopped flag, hosts in the job, this proxy's host, the helpers' bell and
 *                   how many helpers sleep on it, the host of every rank (4 bytes each from offset 64; the header
 *                   grows in 4096-byte steps to hold them)
 * rank area r       control (4096 B): state, the rank's pid and start time, its queue pair's endpoint, the
 *                   proxy's endpoint for it, head (tasks posted), tail (tasks taken), closed flag, refusal text,
 *                   the shared-memory channels it registered (count, then context, members, its index, its area's
 *                   address, key and bytes, the slot size)
 *                   then one link (2048 B) per host: the endpoint of the rank's queue pair for that host's proxy
 *                   and that proxy's endpoint for the rank (used only where the job spans several hosts)
 *                   then SLOTS slots: done word (task number + 1 once finished), status, message, the task
 *                   descriptor (context, collective number, name, entries) and the slot's staging bytes
 * </pre>
 * A rank writes task {@code t} into slot {@code t % SLOTS} and publishes it by storing {@code head = t + 1} with
 * release semantics; the proxy reads {@code head} with acquire, and finishes the task by writing its status and
 * message and then {@code done = t + 1} with release. A rank that posts a non-blocking collective on a shared-memory
 * channel the proxy's helpers serve adds one to the bell, and wakes the helpers sleeping on it (a futex) when the
 * count of sleepers says there are some. Nothing else is shared.
 */
public final class ProxyQueue {
    /** "GDCP". */
    public static final int MAGIC = 0x4744_4350;
    /** The layout's version. */
    public static final int VERSION = 4;
    /** Tasks a rank may have outstanding at once. */
    public static final int SLOTS = 16;
    /** Entries (sends and receives) one task may hold. */
    public static final int MAX_ENTRIES = 512;
    /** Bytes of staging per slot: small sends are copied here when posted. */
    public static final long STAGE_BYTES = 32 * 1024;
    /** Longest endpoint either side publishes. */
    public static final int MAX_ENDPOINT = 1000;
    /** Longest message a failed task carries. */
    public static final int MAX_MESSAGE = 480;

    static final long HEADER = 4096;
    static final long H_MAGIC = 0;
    static final long H_VERSION = 4;
    static final long H_PID = 8;
    static final long H_START = 16;
    static final long H_RANKS = 24;
    static final long H_SLOTS = 28;
    static final long H_STOPPED = 32;
    static final long H_THRESHOLD = 40;
    static final long H_HOSTS = 48;
    static final long H_HOST = 52;
    /** The helpers' bell (int): a rank adds one after posting a non-blocking collective the helpers may fill. */
    static final long H_BELL = 56;
    /** Helpers asleep on the bell (int): a rank makes the wake-up call only while some are. */
    static final long H_SLEEPERS = 60;
    static final long H_PLACEMENT = 64;

    static final long CONTROL = 4096;
    /** 0 free; {@link #RANK_PUBLISHED}; {@link #PROXY_CONNECTED}; {@link #REFUSED}. */
    static final long C_STATE = 0;
    static final long C_PID = 8;
    static final long C_START = 16;
    static final long C_EP_LEN = 24;
    static final long C_EP = 32;
    static final long C_PROXY_EP_LEN = 1040;
    static final long C_PROXY_EP = 1048;
    static final long C_HEAD = 2056;
    static final long C_TAIL = 2064;
    static final long C_CLOSED = 2072;
    static final long C_MESSAGE = 2080;
    /** Shared-memory channels the rank registered (a count, then records; see {@link #registerChannel}). */
    static final long C_CHANNELS = 3136;
    static final long C_CHANNEL_RECORDS = 3200;
    static final long CHANNEL_RECORD = 48;
    /** Channels a rank can register: one per communicator whose shared-memory path the proxy helps. */
    public static final int MAX_CHANNELS = 16;

    /** One link per host: the rank's endpoint for that host's proxy, then the proxy's endpoint for the rank. */
    static final long LINK = 2048;
    static final long L_PROXY = 1024;

    /** The rank published its endpoint. */
    public static final int RANK_PUBLISHED = 1;
    /** The proxy connected a queue pair to the rank and published its endpoint. */
    public static final int PROXY_CONNECTED = 2;
    /** The proxy refused the rank (the control area's message says why). */
    public static final int REFUSED = 3;

    static final long S_DONE = 0;
    static final long S_STATUS = 8;
    static final long S_MESSAGE_LEN = 12;
    static final long S_MESSAGE = 16;
    static final long S_CONTEXT = 512;
    static final long S_SEQ = 516;
    static final long S_COUNT = 520;
    static final long S_NAME = 524;
    static final int NAME_BYTES = 28;
    static final long S_ENTRIES = 552;
    /** kind, peer, part, after (ints), address, length, key (longs). */
    static final long ENTRY = 40;
    static final long S_STAGE = align(S_ENTRIES + MAX_ENTRIES * ENTRY, 64);
    static final long SLOT = align(S_STAGE + STAGE_BYTES, 4096);

    /** Entry kinds. */
    public static final int SEND = 0;
    /** Entry kinds. */
    public static final int RECV = 1;
    /** A send whose bytes were copied into the slot's staging area: its address is an offset in this file. */
    public static final int SEND_STAGED = 2;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final MemorySegment file;
    private final int ranks;
    private final int hosts;

    /**
     * @param file  the mapping of the whole file
     * @param ranks the rank areas it holds
     * @param hosts the hosts of the job (one proxy each)
     */
    public ProxyQueue(MemorySegment file, int ranks, int hosts) {
        this.file = file;
        this.ranks = ranks;
        this.hosts = hosts;
    }

    /**
     * @param ranks the rank areas
     * @param hosts the hosts of the job
     * @return the file's length
     */
    public static long bytes(int ranks, int hosts) {
        return header(ranks) + ranks * rankArea(hosts);
    }

    private static long header(int ranks) {
        return align(H_PLACEMENT + 4L * ranks, HEADER);
    }

    private static long rankArea(int hosts) {
        return CONTROL + hosts * LINK + SLOTS * SLOT;
    }

    private static long align(long v, long a) {
        return (v + a - 1) / a * a;
    }

    /** @return the mapping */
    public MemorySegment file() {
        return file;
    }

    /** @return the rank areas */
    public int ranks() {
        return ranks;
    }

    /** @return the hosts of the job, one proxy each */
    public int hosts() {
        return hosts;
    }

    /**
     * @param rank a rank of the job
     * @return the host it runs on (its proxy's)
     */
    public int hostOf(int rank) {
        return file.get(ValueLayout.JAVA_INT, H_PLACEMENT + 4L * rank);
    }

    /**
     * The proxy writes where every rank runs (before {@link #initHeader}).
     *
     * @param placement the host of every rank
     */
    public void writePlacement(int[] placement) {
        for (int r = 0; r < placement.length; r++) {
            file.set(ValueLayout.JAVA_INT, H_PLACEMENT + 4L * r, placement[r]);
        }
    }

    /** @return the host of the proxy that owns this queue */
    public int host() {
        return file.get(ValueLayout.JAVA_INT, H_HOST);
    }

    /**
     * The proxy initialises the header.
     *
     * @param pid       the proxy's pid
     * @param start     its start time (epoch ms)
     * @param threshold the message size from which a send is read straight from the rank's buffer
     * @param host      the proxy's host, from 0 to {@link #hosts()} - 1
     */
    public void initHeader(long pid, long start, long threshold, int host) {
        file.set(ValueLayout.JAVA_INT, H_HOSTS, hosts);
        file.set(ValueLayout.JAVA_INT, H_HOST, host);
        file.set(ValueLayout.JAVA_LONG, H_PID, pid);
        file.set(ValueLayout.JAVA_LONG, H_START, start);
        file.set(ValueLayout.JAVA_INT, H_RANKS, ranks);
        file.set(ValueLayout.JAVA_INT, H_SLOTS, SLOTS);
        file.set(ValueLayout.JAVA_LONG, H_THRESHOLD, threshold);
        file.set(ValueLayout.JAVA_INT, H_VERSION, VERSION);
        INT.setRelease(file, H_MAGIC, MAGIC);
    }

    /**
     * Reads a mapped file's header and checks it.
     *
     * @param file a mapping of a queue file
     * @return the queue
     * @throws IllegalStateException if the file is not a queue of this version
     */
    public static ProxyQueue attach(MemorySegment file) {
        if (file.byteSize() < HEADER || (int) INT.getAcquire(file, H_MAGIC) != MAGIC) {
            throw new IllegalStateException("the file is not a collective proxy queue (no magic number)");
        }
        int version = file.get(ValueLayout.JAVA_INT, H_VERSION);
        int slots = file.get(ValueLayout.JAVA_INT, H_SLOTS);
        if (version != VERSION || slots != SLOTS) {
            throw new IllegalStateException("the collective proxy speaks queue version " + version + " with " + slots
                    + " slots; this library speaks version " + VERSION + " with " + SLOTS);
        }
        int ranks = file.get(ValueLayout.JAVA_INT, H_RANKS);
        int hosts = file.get(ValueLayout.JAVA_INT, H_HOSTS);
        if (hosts < 1 || file.byteSize() < bytes(ranks, hosts)) {
            throw new IllegalStateException("the collective proxy queue holds " + file.byteSize() + " bytes, not "
                    + bytes(ranks, Math.max(1, hosts)) + " for " + ranks + " ranks on " + hosts + " hosts");
        }
        return new ProxyQueue(file, ranks, hosts);
    }

    /** @return the proxy's pid */
    public long proxyPid() {
        return file.get(ValueLayout.JAVA_LONG, H_PID);
    }

    /** @return the proxy's start time (epoch ms) */
    public long proxyStart() {
        return file.get(ValueLayout.JAVA_LONG, H_START);
    }

    /** @return the size from which sends are not staged */
    public long threshold() {
        return file.get(ValueLayout.JAVA_LONG, H_THRESHOLD);
    }

    /** @return whether the proxy stopped */
    public boolean stopped() {
        return (int) INT.getAcquire(file, H_STOPPED) != 0;
    }

    /** The proxy says it stops. */
    public void markStopped() {
        INT.setRelease(file, H_STOPPED, 1);
    }

    // ---- control area of one rank ----

    private long control(int rank) {
        return header(ranks) + rank * rankArea(hosts);
    }

    private long link(int rank, int host) {
        return control(rank) + CONTROL + host * LINK;
    }

    /**
     * The rank publishes the endpoint of its queue pair for another host's proxy (before {@link #publishRank}).
     *
     * @param rank     the rank
     * @param host     the other host
     * @param endpoint the endpoint
     */
    public void publishLink(int rank, int host, byte[] endpoint) {
        writeEndpoint(link(rank, host), endpoint);
    }

    /**
     * @param rank a published rank
     * @param host another host
     * @return the endpoint of the rank's queue pair for that host's proxy
     */
    public byte[] linkEndpoint(int rank, int host) {
        return readEndpoint(link(rank, host));
    }

    /**
     * The proxy writes another host's proxy's endpoint for the rank (before {@link #publishProxy}).
     *
     * @param rank     the rank
     * @param host     the other host
     * @param endpoint that proxy's endpoint for the rank
     */
    public void publishRemoteProxy(int rank, int host, byte[] endpoint) {
        writeEndpoint(link(rank, host) + L_PROXY, endpoint);
    }

    /**
     * @param rank a connected rank
     * @param host another host
     * @return that host's proxy's endpoint for the rank
     */
    public byte[] remoteProxyEndpoint(int rank, int host) {
        return readEndpoint(link(rank, host) + L_PROXY);
    }

    private void writeEndpoint(long at, byte[] endpoint) {
        requireEndpoint(endpoint);
        file.set(ValueLayout.JAVA_INT, at, endpoint.length);
        MemorySegment.copy(endpoint, 0, file, ValueLayout.JAVA_BYTE, at + 4, endpoint.length);
    }

    private byte[] readEndpoint(long at) {
        return file.asSlice(at + 4, file.get(ValueLayout.JAVA_INT, at)).toArray(ValueLayout.JAVA_BYTE);
    }

    /**
     * @param rank a rank
     * @return its state (0, {@link #RANK_PUBLISHED}, {@link #PROXY_CONNECTED}, {@link #REFUSED})
     */
    public int state(int rank) {
        return (int) INT.getAcquire(file, control(rank) + C_STATE);
    }

    /**
     * @param rank  a rank
     * @param state its new state
     */
    public void setState(int rank, int state) {
        INT.setRelease(file, control(rank) + C_STATE, state);
    }

    /**
     * The rank publishes itself.
     *
     * @param rank     the rank
     * @param pid      its pid
     * @param start    its start time (epoch ms)
     * @param endpoint its queue pair's endpoint
     */
    public void publishRank(int rank, long pid, long start, byte[] endpoint) {
        long c = control(rank);
        requireEndpoint(endpoint);
        file.set(ValueLayout.JAVA_LONG, c + C_PID, pid);
        file.set(ValueLayout.JAVA_LONG, c + C_START, start);
        file.set(ValueLayout.JAVA_INT, c + C_EP_LEN, endpoint.length);
        MemorySegment.copy(endpoint, 0, file, ValueLayout.JAVA_BYTE, c + C_EP, endpoint.length);
        file.set(ValueLayout.JAVA_INT, c + C_CLOSED, 0);
        INT.setRelease(file, c + C_CHANNELS, 0);
        setState(rank, RANK_PUBLISHED);
    }

    /**
     * The proxy publishes its endpoint for a rank.
     *
     * @param rank     the rank
     * @param endpoint the proxy's queue pair's endpoint
     */
    public void publishProxy(int rank, byte[] endpoint) {
        long c = control(rank);
        requireEndpoint(endpoint);
        file.set(ValueLayout.JAVA_INT, c + C_PROXY_EP_LEN, endpoint.length);
        MemorySegment.copy(endpoint, 0, file, ValueLayout.JAVA_BYTE, c + C_PROXY_EP, endpoint.length);
        setState(rank, PROXY_CONNECTED);
    }

    /**
     * The proxy refuses a rank.
     *
     * @param rank the rank
     * @param why  the reason
     */
    public void refuse(int rank, String why) {
        writeText(control(rank) + C_MESSAGE, 1000, why);
        setState(rank, REFUSED);
    }

    /**
     * @param rank a refused rank
     * @return why
     */
    public String refusal(int rank) {
        return readText(control(rank) + C_MESSAGE);
    }

    /**
     * The rank registers its area of a communicator's shared-memory channel, so that the proxy can fill the members'
     * receive buffers while they compute (coll.shm's helper); the proxy assembles a channel once every member
     * registered it.
     *
     * @param rank      the rank
     * @param context   the communicator's context
     * @param members   its size
     * @param index     the rank's index in it
     * @param area      address, key and bytes of the rank's area, and the slot size
     * @return whether it was registered (false: the rank's {@link #MAX_CHANNELS} records are used up; its collectives
     *         then go unhelped)
     */
    public boolean registerChannel(int rank, int context, int members, int index, long[] area) {
        long c = control(rank);
        int count = (int) INT.getAcquire(file, c + C_CHANNELS);
        if (count >= MAX_CHANNELS) {
            return false;
        }
        long at = c + C_CHANNEL_RECORDS + count * CHANNEL_RECORD;
        file.set(ValueLayout.JAVA_INT, at, context);
        file.set(ValueLayout.JAVA_INT, at + 4, members);
        file.set(ValueLayout.JAVA_INT, at + 8, index);
        for (int i = 0; i < 4; i++) {
            file.set(ValueLayout.JAVA_LONG, at + 16 + 8L * i, area[i]);
        }
        INT.setRelease(file, c + C_CHANNELS, count + 1);
        return true;
    }

    /**
     * @param rank a rank
     * @return how many channels it registered
     */
    public int channels(int rank) {
        return (int) INT.getAcquire(file, control(rank) + C_CHANNELS);
    }

    /**
     * @param rank a rank
     * @param i    one of its registrations
     * @return context, members, index, then the area's address, key, bytes and slot size
     */
    public long[] channel(int rank, int i) {
        long at = control(rank) + C_CHANNEL_RECORDS + i * CHANNEL_RECORD;
        long[] v = new long[7];
        for (int k = 0; k < 3; k++) {
            v[k] = file.get(ValueLayout.JAVA_INT, at + 4L * k);
        }
        for (int k = 0; k < 4; k++) {
            v[3 + k] = file.get(ValueLayout.JAVA_LONG, at + 16 + 8L * k);
        }
        return v;
    }

    private static void requireEndpoint(byte[] endpoint) {
        if (endpoint.length > MAX_ENDPOINT) {
            throw new IllegalStateException("an endpoint of " + endpoint.length + " bytes does not fit the proxy queue");
        }
    }

    /**
     * @param rank a published rank
     * @return its endpoint
     */
    public byte[] rankEndpoint(int rank) {
        long c = control(rank);
        return file.asSlice(c + C_EP, file.get(ValueLayout.JAVA_INT, c + C_EP_LEN)).toArray(ValueLayout.JAVA_BYTE);
    }

    /**
     * @param rank a connected rank
     * @return the proxy's endpoint for it
     */
    public byte[] proxyEndpoint(int rank) {
        long c = control(rank);
        return file.asSlice(c + C_PROXY_EP, file.get(ValueLayout.JAVA_INT, c + C_PROXY_EP_LEN)).toArray(ValueLayout.JAVA_BYTE);
    }

    /**
     * @param rank a rank
     * @return its pid
     */
    public long rankPid(int rank) {
        return file.get(ValueLayout.JAVA_LONG, control(rank) + C_PID);
    }

    /**
     * @param rank a rank
     * @return its start time
     */
    public long rankStart(int rank) {
        return file.get(ValueLayout.JAVA_LONG, control(rank) + C_START);
    }

    /**
     * @param rank a rank
     * @return how many tasks it posted
     */
    public long head(int rank) {
        return (long) LONG.getAcquire(file, control(rank) + C_HEAD);
    }

    /**
     * @param rank  a rank
     * @param value how many tasks it posted
     */
    public void setHead(int rank, long value) {
        LONG.setRelease(file, control(rank) + C_HEAD, value);
    }

    /**
     * @param rank a rank
     * @return whether it closed its collectives
     */
    public boolean closed(int rank) {
        return (int) INT.getAcquire(file, control(rank) + C_CLOSED) != 0;
    }

    /**
     * The rank closes its collectives.
     *
     * @param rank the rank
     */
    public void markClosed(int rank) {
        INT.setRelease(file, control(rank) + C_CLOSED, 1);
    }

    // ---- slots ----

    /**
     * @param rank a rank
     * @param slot a slot
     * @return the slot's offset in the file
     */
    public long slot(int rank, int slot) {
        return control(rank) + CONTROL + hosts * LINK + slot * SLOT;
    }

    /**
     * @param slot a slot's offset
     * @return the offset of its staging area
     */
    public static long stage(long slot) {
        return slot + S_STAGE;
    }

    /**
     * @param slot a slot's offset
     * @return the last finished task's number + 1
     */
    public long done(long slot) {
        return (long) LONG.getAcquire(file, slot + S_DONE);
    }

    /**
     * The proxy finishes a task.
     *
     * @param slot    the slot's offset
     * @param number  the task's number
     * @param failure null, or why it failed
     */
    public void finish(long slot, long number, String failure) {
        file.set(ValueLayout.JAVA_INT, slot + S_STATUS, failure == null ? 0 : 1);
        if (failure != null) {
            writeText(slot + S_MESSAGE_LEN, MAX_MESSAGE, failure);
        }
        LONG.setRelease(file, slot + S_DONE, number + 1);
    }

    /**
     * @param slot a finished slot's offset
     * @return null, or why its task failed
     */
    public String failure(long slot) {
        return file.get(ValueLayout.JAVA_INT, slot + S_STATUS) == 0 ? null : readText(slot + S_MESSAGE_LEN);
    }

    /**
     * The rank writes a task's header.
     *
     * @param slot    the slot's offset
     * @param context the communicator's context
     * @param seq     the collective's number
     * @param name    the collective's name
     * @param count   the entries
     */
    public void writeTask(long slot, int context, int seq, String name, int count) {
        file.set(ValueLayout.JAVA_INT, slot + S_CONTEXT, context);
        file.set(ValueLayout.JAVA_INT, slot + S_SEQ, seq);
        file.set(ValueLayout.JAVA_INT, slot + S_COUNT, count);
        writeText(slot + S_NAME, NAME_BYTES - 4, name);
    }

    /**
     * The rank writes one entry.
     *
     * @param slot    the slot's offset
     * @param index   the entry
     * @param kind    {@link #SEND}, {@link #RECV} or {@link #SEND_STAGED}
     * @param peer    the other rank
     * @param part    the message's number between the two ranks in this task
     * @param after   the receive entry a send waits for, or -1
     * @param address the buffer's address (a staged send: its offset in this file)
     * @param length  its length
     * @param key     the registration's rkey
     */
    public void writeEntry(long slot, int index, int kind, int peer, int part, int after, long address, long length,
                           long key) {
        long e = slot + S_ENTRIES + index * ENTRY;
        file.set(ValueLayout.JAVA_INT, e, kind);
        file.set(ValueLayout.JAVA_INT, e + 4, peer);
        file.set(ValueLayout.JAVA_INT, e + 8, part);
        file.set(ValueLayout.JAVA_INT, e + 12, after);
        file.set(ValueLayout.JAVA_LONG, e + 16, address);
        file.set(ValueLayout.JAVA_LONG, e + 24, length);
        file.set(ValueLayout.JAVA_LONG, e + 32, key);
    }

    /**
     * @param slot a slot's offset
     * @return the task's context
     */
    public int context(long slot) {
        return file.get(ValueLayout.JAVA_INT, slot + S_CONTEXT);
    }

    /**
     * @param slot a slot's offset
     * @return the task's collective number
     */
    public int seq(long slot) {
        return file.get(ValueLayout.JAVA_INT, slot + S_SEQ);
    }

    /**
     * @param slot a slot's offset
     * @return the task's entry count
     */
    public int count(long slot) {
        return file.get(ValueLayout.JAVA_INT, slot + S_COUNT);
    }

    /**
     * @param slot a slot's offset
     * @return the task's name
     */
    public String name(long slot) {
        return readText(slot + S_NAME);
    }

    /**
     * @param slot  a slot's offset
     * @param index an entry
     * @param field 0 kind, 1 peer, 2 part, 3 after
     * @return the field
     */
    public int entryInt(long slot, int index, int field) {
        return file.get(ValueLayout.JAVA_INT, slot + S_ENTRIES + index * ENTRY + 4L * field);
    }

    /**
     * @param slot  a slot's offset
     * @param index an entry
     * @param field 0 address, 1 length, 2 key
     * @return the field
     */
    public long entryLong(long slot, int index, int field) {
        return file.get(ValueLayout.JAVA_LONG, slot + S_ENTRIES + index * ENTRY + 16 + 8L * field);
    }

    private void writeText(long at, int max, String text) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(b.length, max);
        file.set(ValueLayout.JAVA_INT, at, n);
        MemorySegment.copy(b, 0, file, ValueLayout.JAVA_BYTE, at + 4, n);
    }

    private String readText(long at) {
        int n = file.get(ValueLayout.JAVA_INT, at);
        return new String(file.asSlice(at + 4, n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
    }

    /**
     * Rings the helpers' bell: a non-blocking collective was posted on a channel they serve. Adds one to the bell
     * (a full fence after the post's publication, so a helper that read the old value before its last look cannot
     * sleep through it) and wakes the helpers only if some sleep on it.
     */
    public void ringHelpers() {
        INT.getAndAdd(file, H_BELL, 1);
        if ((int) INT.getAcquire(file, H_SLEEPERS) > 0) {
            Futex.wakeAll(file, H_BELL);
        }
    }

    /** @return the bell's value, read by a helper before it looks for work */
    public int bell() {
        return (int) INT.getAcquire(file, H_BELL);
    }

    /**
     * Sleeps a helper until the bell moves from {@code seen} (a rank posted since the helper's last look), for at most
     * {@code nanos}.
     *
     * @param seen  the value read before the helper's last look for work
     * @param nanos the longest sleep
     * @return whether the bell rang
     */
    public boolean sleepOnBell(int seen, long nanos) {
        INT.getAndAdd(file, H_SLEEPERS, 1);
        try {
            Futex.await(file, H_BELL, seen, nanos);
        } finally {
            INT.getAndAdd(file, H_SLEEPERS, -1);
        }
        return bell() != seen;
    }
}
