package dev.gdasync.gdsync.nic;

import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.memory.Region;

import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A NIC provider instance: the device context and protection domain of verbs in one object. Regions,
 * registrations and queue pairs belong to it and die with it.
 */
public interface Nic extends AutoCloseable {

    /** @return the provider and instance, for messages */
    String name();

    /**
     * Allocates host memory that this NIC can register and that peers can reach.
     *
     * @param bytes the length, {@code > 0}
     * @return the region, exactly {@code bytes} long (the provider may back it with more, such as whole pages)
     * @throws IllegalArgumentException if the length is not positive, or too large for the provider to represent
     * @throws IllegalStateException    if the NIC is closed
     * @throws java.io.UncheckedIOException if the memory behind it cannot hold the length (the software NIC: the
     *                                  shared-memory file system has too little free space); nothing is left allocated
     */
    Region allocateHost(long bytes);

    /**
     * Allocates GPU memory that this NIC can register and that peers can reach. The CUDA layer makes the region
     * ({@code dev.gdasync.gdsync.cuda.DeviceRegion}); the NIC allocates it so that it can publish it to its peers
     * and free it once none uses it.
     *
     * @param device the GPU's ordinal
     * @param bytes  the length, {@code > 0}
     * @return a {@link dev.gdasync.gdsync.memory.RegionKind#DEVICE} region
     * @throws IllegalArgumentException      if the length is not positive, no GPU has that ordinal, or the NIC
     *                                       serves another GPU
     * @throws UnsupportedOperationException if this provider cannot use GPU memory (the default)
     */
    default Region allocateDevice(int device, long bytes) {
        throw new UnsupportedOperationException(name() + " cannot use GPU memory");
    }

    /**
     * Registers part of a region.
     *
     * @param region the region
     * @param offset start of the range in the region
     * @param length length of the range, {@code > 0}
     * @param access {@link Access} flags
     * @return the registration
     * @throws NullPointerException     if the region is null
     * @throws IllegalArgumentException if the range is outside the region or empty, the flags are invalid, or the
     *                                  region cannot be registered with this NIC (another's, or closed)
     * @throws IllegalStateException    if the registration table is full, or the NIC is closed
     */
    MemoryRegion register(Region region, long offset, long length, int access);

    /**
     * Registers a whole region.
     *
     * @param region the region
     * @param access {@link Access} flags
     * @return the registration
     * @throws NullPointerException     if the region is null
     * @throws IllegalArgumentException as {@link #register(Region, long, long, int)}
     */
    default MemoryRegion register(Region region, int access) {
        java.util.Objects.requireNonNull(region, "region must not be null");
        return register(region, 0, region.length(), access);
    }

    /**
     * Deregisters; both keys stop working at once.
     *
     * @param mr the registration
     * @throws NullPointerException     if it is null
     * @throws IllegalArgumentException if it is not this NIC's or was already deregistered
     */
    void deregister(MemoryRegion mr);

    /**
     * Creates a queue pair with its two completion queues.
     *
     * @param config sizes
     * @return the queue pair, in state {@link QpState#RESET}
     * @throws NullPointerException  if the sizes are null
     * @throws IllegalStateException if the NIC is closed
     */
    QueuePair createQueuePair(QueuePairConfig config);

    /**
     * Runs, on the calling thread, work whose doorbell was rung by a plain store, instead of leaving it to
     * the provider's agent. A host thread that plays a kernel (the host KI executor) calls it after its rings: on a
     * machine with few CPUs it saves waiting for the agent to be scheduled. Providers whose rings need no
     * help (a hardware NIC) do nothing.
     *
     * @return how many queue pairs had work run
     */
    default int progressStoreRings() {
        return 0;
    }

    /**
     * What a host thread runs between looks at a word this NIC writes (a CQE's validity word, a word a peer
     * puts into): a provider whose transport moves only when progressed gives its progress call, so that a
     * waiting stream receives its own messages. The NIC's prepared waits carry it already
     * ({@link WaitRequest#progress()}); callers that build waits on other words hand it to them.
     *
     * @return the hook, or {@code null} when the NIC's work lands without help (the default)
     */
    default WaitProgress waitProgress() {
        return null;
    }

    /**
     * Parks a host thread that waits for what peers send or write into this NIC (a completion, a word they put
     * into): for at most {@code nanos}, unless {@code ready} says the wait is over, which is asked after the park is
     * announced so that a delivery between the caller's last look and the park is not slept through. A provider
     * whose peers can wake a parked thread of another process (the software NIC over shared memory) ends the park as
     * soon as a peer delivers; the default parks for the time.
     *
     * @param nanos the longest park, positive
     * @param ready whether the wait is over; may poll the NIC
     */
    default void awaitPeers(long nanos, BooleanSupplier ready) {
        java.util.Objects.requireNonNull(ready, "ready must not be null");
        if (nanos <= 0) {
            throw new IllegalArgumentException("nanos must be positive, got " + nanos);
        }
        if (!ready.getAsBoolean()) {
            LockSupport.parkNanos(nanos);
        }
    }

    /**
     * @return what the NIC's queue pairs have done so far, closed ones included: the sum of their
     *         {@link QueuePair#counters()}; providers that count nothing return {@link TrafficCounters#NONE}
     */
    default TrafficCounters counters() {
        return TrafficCounters.NONE;
    }

    /**
     * @return each open queue pair's counts ({@link QueuePair#counters()}), by queue pair number; providers that
     *         count nothing return an empty map
     */
    default Map<Integer, TrafficCounters> queuePairCounters() {
        return Map.of();
    }

    /** Closes every queue pair, registration and region of this NIC. */
    @Override
    void close();
}
