package dev.gdasync.ki.exec;

import dev.gdasync.gdsync.concurrent.AgentThread;
import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.concurrent.CpuShare;
import dev.gdasync.gdsync.concurrent.ThreadAffinity;
import dev.gdasync.gdsync.ki.DeviceAddressMap;
import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.ki.KiException;
import dev.gdasync.ki.KiExecutor;
import dev.gdasync.ki.KiLaunch;
import dev.gdasync.ki.KiLaunchChecks;
import dev.gdasync.ki.kernels.KiExchange;
import dev.gdasync.ki.kernels.KiTemplateArgs;
import dev.gdasync.ki.msccl.MscclKiBlock;
import dev.gdasync.ki.shmem.ShmemDevice;
import dev.gdasync.ki.shmem.ShmemKernel;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.SleepingIdleStrategy;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The host KI executor: runs the KI templates over KI descriptor tables on Java threads, one thread per
 * block, so the KI model runs (and is tested) without a GPU (DESIGN.md §3.6).
 *
 * <p>Threading: launches run in submission order, one after another, like kernels on one CUDA stream.
 * A dispatcher thread takes each launch, hands blocks 1..n-1 to worker threads (started on first use,
 * parked between launches) and runs block 0 itself, so a one-block kernel such as the ping-pong runs with
 * no hand-off at all. The caller's thread only submits and joins. A launch's blocks are always
 * co-resident: each has its own thread.
 *
 * <p>The dispatcher ({@code <name>-block0}) and the workers ({@code <name>-block<b>}) are agents
 * ({@link AgentThread}): the dispatcher's duty cycle runs the next launch, a worker's the next block
 * given to it. Between duty cycles they park (they do not spin: a launch is long next to a wake-up) until
 * a submission or a hand-off unparks them. Waits inside a kernel idle with their block context's
 * {@link BackoffIdler} ({@link Options#waitBackoff()}).
 */
public final class HostKiExecutor implements KiExecutor {
    /** The most blocks one launch may have. */
    public static final int MAX_BLOCKS = 256;
    /** The longest park between launches; every submission, hand-off and close unparks. */
    private static final long IDLE_PARK_NANOS = 100_000_000;

    private final String name;
    private final Options options;
    private final ConcurrentLinkedQueue<HostLaunch> queue = new ConcurrentLinkedQueue<>();
    /** The dispatcher's: created on its thread, stopped by it when it ends. */
    private final List<Worker> workers = new ArrayList<>();
    private final AgentThread dispatcher;
    private volatile boolean closing;

    private HostKiExecutor(String name, Options options) {
        this.name = name;
        this.options = options;
        this.dispatcher = AgentThread.start(new Dispatcher(), new SleepingIdleStrategy(IDLE_PARK_NANOS));
    }

    /**
     * An executor with {@link Options#defaults()}.
     *
     * @param name names its threads
     * @return the executor
     */
    public static HostKiExecutor create(String name) {
        return create(name, Options.defaults());
    }

    /**
     * @param name    names its threads
     * @param options how block threads wait, where they run, what they do after a ring
     * @return the executor
     */
    public static HostKiExecutor create(String name, Options options) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(options, "options");
        return new HostKiExecutor(name, options);
    }

    @Override
    public String name() {
        return "host";
    }

    @Override
    public DeviceAddressMap addresses() {
        return DeviceAddressMap.HOST;
    }

    /** @return whether block threads run an after-ring hook (the NIC's work for their rings) */
    @Override
    public boolean progressesOwnRings() {
        return options.afterRing() != null;
    }

    @Override
    public KiLaunch pingPong(KiTable table, int count, boolean initiator, long computeNs, long timeoutNs) {
        KiLaunchChecks.pingPong(table, count, computeNs, timeoutNs);
        return submit(new PingPongKernel(table, count, initiator, computeNs, timeoutNs, null));
    }

    @Override
    public KiLaunch pingPong(KiTable table, int count, boolean initiator, long computeNs, long timeoutNs, long[] waitEnds) {
        KiLaunchChecks.pingPong(table, count, computeNs, timeoutNs);
        if (waitEnds.length < count) {
            throw new IllegalArgumentException("waitEnds holds " + waitEnds.length + " entries, fewer than the " + count
                    + " iterations");
        }
        return submit(new PingPongKernel(table, count, initiator, computeNs, timeoutNs, waitEnds));
    }

    /** @return true: the block threads are Java threads, they read {@link System#nanoTime()} */
    @Override
    public boolean timesWaits() {
        return true;
    }

    @Override
    public KiLaunch exchange(KiTable table, KiExchange exchange, long timeoutNs) {
        KiLaunchChecks.exchange(table, exchange, timeoutNs);
        if (exchange.blocks() > MAX_BLOCKS) {
            throw new KiException("exchange needs " + exchange.blocks() + " co-resident blocks; the host executor runs at most "
                    + MAX_BLOCKS + ": lower the pack or unpack blocks", (Throwable) null);
        }
        return submit(new ExchangeKernel(table, exchange, timeoutNs));
    }

    @Override
    public KiLaunch sendTemplates(KiTable table, List<KiTemplateArgs> args) {
        return submit(new TemplateSendKernel(table, KiLaunchChecks.sendTemplates(table, args)));
    }

    /**
     * Launches a shmem kernel (the KI model of {@code docs/shmem.md}): {@code blocks} blocks, block b running
     * {@code body} with context b of a state libmp's {@code Shmem.kiPrepare} wrote, then ending its context
     * ({@code gds_shmem::block_exit}: the last block rings the unused slots empty and releases every completion).
     * The same state and table drive {@code shmem.cuh}'s device functions on a GPU.
     *
     * @param table  the state's KI table
     * @param state  the state (its {@code state()})
     * @param blocks the contexts the state was prepared with, at most {@link #MAX_BLOCKS}
     * @param body   what each block does
     * @return the launch; its {@code join} reports the first failure a block recorded
     * @throws NullPointerException     if the table, the state or the body is null
     * @throws IllegalArgumentException if the state is not one for this table and this many blocks
     */
    public KiLaunch shmem(KiTable table, java.lang.foreign.MemorySegment state, int blocks, ShmemKernel body) {
        Objects.requireNonNull(body, "body must not be null");
        checkShmemLaunch(table, state, blocks);
        return submit(new ShmemHostKernel(table, state.address(), blocks, body));
    }

    /**
     * Launches the MSCCL-IR interpreter in its KI form (docs/msccl.md, "From the KI executor"): {@code blocks} blocks,
     * block b running thread block b of a program table that libmp's {@code MscclDeviceTable.encodeRank} wrote for
     * this rank, over context b of a shmem KI state ({@code Shmem.kiPrepare}) whose heap holds the connections; tiles
     * {@code [firstTile, endTile)} of the run. libmp's {@code MscclRuntime.*Ki} calls prepare both and launch through
     * this.
     *
     * @param table     the shmem state's KI table
     * @param state     the shmem state
     * @param program   the program table
     * @param blocks    the program's thread blocks on this rank, at most {@link #MAX_BLOCKS}
     * @param firstTile the first tile this launch runs
     * @param endTile   one past its last tile
     * @return the launch; its {@code join} reports the first failure, naming the PE, thread block, step and tile
     * @throws NullPointerException     if the table, the state or the program is null
     * @throws IllegalArgumentException if the state or the program table does not fit each other and the blocks
     */
    public KiLaunch msccl(KiTable table, java.lang.foreign.MemorySegment state, java.lang.foreign.MemorySegment program,
                          int blocks, int firstTile, int endTile) {
        Objects.requireNonNull(program, "program must not be null");
        checkShmemLaunch(table, state, blocks);
        MscclKiBlock.check(program, blocks, firstTile, endTile);
        long s = state.address();
        long p = program.address();
        return submit(new ShmemHostKernel(table, s, blocks,
                device -> MscclKiBlock.run(device, s, p, device.block(), firstTile, endTile), "msccl interpreter"));
    }

    private static void checkShmemLaunch(KiTable table, java.lang.foreign.MemorySegment state, int blocks) {
        Objects.requireNonNull(table, "table must not be null");
        Objects.requireNonNull(state, "state must not be null");
        if (blocks < 1 || blocks > MAX_BLOCKS) {
            throw new IllegalArgumentException("blocks must be in 1.." + MAX_BLOCKS + ", got " + blocks);
        }
        ShmemDevice.check(table, state, blocks);
    }

    private KiLaunch submit(HostKernel kernel) {
        if (closing) {
            throw new IllegalStateException("the host KI executor " + name + " is closed");
        }
        kernel.table().clearStatusForLaunch();
        HostLaunch launch = new HostLaunch(kernel, name());
        queue.add(launch);
        dispatcher.wake();
        return launch;
    }

    /** The dispatcher: block 0 of every launch, in order. */
    private final class Dispatcher implements Agent {
        private BlockContext ctx;
        private BackoffIdler idler;

        @Override
        public String roleName() {
            return name + "-block0";
        }

        @Override
        public void onStart() {
            pin(0);
            ctx = newContext();
            idler = new BackoffIdler(options.waitBackoff());
        }

        @Override
        public int doWork() {
            HostLaunch launch = queue.poll();
            if (launch == null) {
                if (closing) {
                    // Only once every submitted launch has ended.
                    throw new AgentTerminationException("host KI executor " + name + " closed", true);
                }
                return 0;
            }
            int blocks = launch.kernel.blocks();
            ensureWorkers(blocks - 1);
            for (int b = 1; b < blocks; b++) {
                workers.get(b - 1).give(launch, b);
            }
            launch.runBlock(0, ctx);
            idler.reset();
            while (launch.remainingBlocks() > 0) {
                idler.idle();
            }
            launch.finish();
            return 1;
        }

        @Override
        public void onClose() {
            for (Worker w : workers) {
                w.stop();
            }
        }
    }

    private void ensureWorkers(int n) {
        while (workers.size() < n) {
            Worker w = new Worker(workers.size() + 1);
            workers.add(w);
            w.start();
        }
    }

    private void pin(int block) {
        int[] cpus = options.cpus();
        if (cpus.length > 0 && ThreadAffinity.isSupported()) {
            CpuShare.pinCurrentThread(cpus[block % cpus.length]); // recorded, so that other jobs leave the CPU alone
        }
    }

    private BlockContext newContext() {
        return new BlockContext(new BackoffIdler(options.waitBackoff()), options.afterRing());
    }

    /** Stops the threads once every submitted launch has ended. */
    @Override
    public void close() {
        if (closing) {
            return;
        }
        closing = true;
        dispatcher.close(); // the dispatcher ends once the queue is empty
    }

    @Override
    public String toString() {
        return "host KI executor " + name;
    }

    /** A worker: the agent of one block index above 0, reused by every launch. */
    private final class Worker implements Agent {
        private final int block;
        /** Set, then used, by the dispatcher's thread. */
        private AgentThread thread;
        private BlockContext ctx;
        private volatile HostLaunch launch;
        private volatile boolean stopped;

        Worker(int block) {
            this.block = block;
        }

        void start() {
            thread = AgentThread.start(this, new SleepingIdleStrategy(IDLE_PARK_NANOS));
        }

        void give(HostLaunch l, int b) {
            assert b == block;
            launch = l;
            thread.wake();
        }

        /** Stops the worker; it is idle (every launch has ended), so it ends at its next duty cycle. */
        void stop() {
            stopped = true;
            thread.wake();
        }

        @Override
        public String roleName() {
            return name + "-block" + block;
        }

        @Override
        public void onStart() {
            pin(block);
            ctx = newContext();
        }

        @Override
        public int doWork() {
            if (stopped) {
                throw new AgentTerminationException("host KI executor " + name + " closed", true);
            }
            HostLaunch l = launch;
            if (l == null) {
                return 0;
            }
            launch = null;
            l.runBlock(block, ctx);
            return 1;
        }
    }

    /**
     * How the executor's block threads behave.
     *
     * @param waitBackoff how a block thread idles while waiting on a word: spin, yield, park
     * @param cpus        CPUs to pin block threads to (block b on {@code cpus[b % cpus.length]}); empty: none
     * @param afterRing   run by a block thread after each of its rings, and between looks while it waits, or null.
     *                    Give it the NIC's {@code progressStoreRings} (libmp: {@code Mp::progressStoreRings}) when
     *                    the executor shares a small machine with the NIC's agent: the ringing thread then runs the
     *                    rung work itself, and a waiting thread the work that writes its CQE (the software mlx5
     *                    device's engine), instead of waiting for the agent to be scheduled. Without it the agent
     *                    finds the rings, as it finds a GPU's.
     */
    public record Options(BackoffPolicy waitBackoff, int[] cpus, Runnable afterRing) {
        /** @throws IllegalArgumentException if a CPU number is negative */
        public Options {
            Objects.requireNonNull(waitBackoff, "waitBackoff");
            cpus = cpus.clone();
            for (int c : cpus) {
                if (c < 0) {
                    throw new IllegalArgumentException("CPU numbers are >= 0, got " + c);
                }
            }
        }

        /** @return low-latency waits ({@link BackoffPolicy#LOW_LATENCY}), no pinning, no after-ring hook */
        public static Options defaults() {
            return new Options(BackoffPolicy.LOW_LATENCY, new int[0], null);
        }

        /**
         * @param policy how block threads idle in waits
         * @return these options with that policy
         */
        public Options withWaitBackoff(BackoffPolicy policy) {
            return new Options(policy, cpus, afterRing);
        }

        /**
         * @param pinTo CPUs for the block threads
         * @return these options with that pinning
         */
        public Options withCpus(int... pinTo) {
            return new Options(waitBackoff, pinTo, afterRing);
        }

        /**
         * @param hook run after each ring, or null
         * @return these options with that hook
         */
        public Options withAfterRing(Runnable hook) {
            return new Options(waitBackoff, cpus, hook);
        }

        /** @return the CPUs the block threads are pinned to, a copy (empty: not pinned) */
        @Override
        public int[] cpus() {
            return cpus.clone();
        }
    }
}
