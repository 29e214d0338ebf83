package dev.gdasync.libmp.mpj;

import mpjbuf.BufferFactory;
import mpjbuf.NIOBuffer;
import mpjbuf.RawBuffer;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * MPJ Express's buffer factory while the device runs: buffers of at least the rendezvous size are carved from the
 * device's registered rendezvous area ({@link AreaBuffer}s, which copy the program's arrays while the message travels),
 * so that a large message MPJ packed there is read by its receiver straight from the packed buffer (no copy by the
 * sender), and a large receive lands in registered memory (on one host it is lent the sender's packed message in place
 * instead, {@link #lend}); when the area is full, from its extents
 * ({@link AreaExtents}, made on demand up to a limit), and beyond those from the factory MPJ had (its buddy
 * allocator). Smaller buffers are kept for reuse by power-of-two size class (up to {@value #CACHED} per class): MPJ
 * makes and frees a buffer per call, and its buddy allocator's search costs a noticeable part of a small message's
 * time.
 *
 * <p>MPJ 0.44 keeps its factory in a package-private static field, {@code mpjbuf.BufferFactory.factory}, that every
 * buffer of its layers comes from ({@code BufferFactory.create}/{@code destroy}); the device sets it by reflection at
 * {@code MPI.Init} and puts the previous one back at {@code MPI.Finalize}. Thread-safe: allocation is under the
 * device's lock.
 */
final class RegisteredBuffers extends BufferFactory {
    private final Object lock;
    private final RendezvousPool pool;
    private final MemorySegment area;
    private final int smallest;
    private final BufferFactory previous;
    private final AreaExtents extents;
    /** Buffers of the area and of its extents, with their blocks there. */
    private final Map<RawBuffer, Block> mine = new IdentityHashMap<>();

    /** A buffer's block: its offset in the area's (or an extent's) blocks ({@link AreaBuffer#blockBytes} long). */
    private record Block(RendezvousPool blocks, long offset) {
    }
    /** Receive buffers of the area whose memory is, for now, a peer's message in place ({@link #lend}). */
    private final Map<RawBuffer, Lent> lent = new IdentityHashMap<>();

    /** A lent buffer's own memory, and what to do when MPJ is done with the message. */
    private record Lent(AreaBuffer buffer, ByteBuffer own, Runnable onReturn) {
    }
    private static final int CACHED = 64;
    private static final int SMALLEST_CLASS = 6;
    /** Small buffers free for reuse, by size class (capacity 2^(class + 6)); guarded by this. */
    private final ArrayDeque<NIOBuffer>[] free;

    private RegisteredBuffers(Object lock, RendezvousPool pool, MemorySegment area, AreaExtents extents, int smallest,
                              BufferFactory previous) {
        this.lock = lock;
        this.extents = extents;
        this.pool = pool;
        this.area = area;
        this.smallest = smallest;
        this.previous = previous;
        @SuppressWarnings("unchecked")
        ArrayDeque<NIOBuffer>[] f = new ArrayDeque[Math.max(1, sizeClass(Math.max(1, smallest - 1)) + 1)];
        for (int c = 0; c < f.length; c++) {
            f[c] = new ArrayDeque<>();
        }
        this.free = f;
    }

    /** @return the class of a size: capacities 64, 128, 256 ... */
    private static int sizeClass(int size) {
        int bits = 32 - Integer.numberOfLeadingZeros(Math.max(size, 1 << SMALLEST_CLASS) - 1);
        return bits - SMALLEST_CLASS;
    }

    /**
     * Makes MPJ's buffers of at least {@code smallest} bytes come from the area.
     *
     * @return the factory installed, or null when MPJ's factory cannot be replaced (the device then copies large
     *         messages into the area instead)
     */
    static RegisteredBuffers install(Object lock, RendezvousPool pool, MemorySegment area, AreaExtents extents,
                                     int smallest) {
        try {
            Field f = factoryField();
            synchronized (BufferFactory.class) {
                BufferFactory previous = (BufferFactory) f.get(null);
                if (previous == null || previous instanceof RegisteredBuffers) {
                    return null;
                }
                RegisteredBuffers r = new RegisteredBuffers(lock, pool, area, extents, smallest, previous);
                f.set(null, r);
                return r;
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** Puts MPJ's own factory back; buffers of the area still held by MPJ stay valid until the Mp closes. */
    void uninstall() {
        try {
            Field f = factoryField();
            synchronized (BufferFactory.class) {
                if (f.get(null) == this) {
                    f.set(null, previous);
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            // MPJ's layers are done with buffers by then: nothing depends on the field any more.
        }
    }

    private static Field factoryField() throws NoSuchFieldException {
        Field f = BufferFactory.class.getDeclaredField("factory");
        f.setAccessible(true);
        return f;
    }

    /**
     * Makes a receive buffer of the area read a peer's message in place, until MPJ frees the buffer (after unpacking
     * it): then the buffer gets its own memory back and {@code onReturn} runs, under the device's lock. Under the lock.
     *
     * @param raw     the receive buffer's memory
     * @param message the message, mapped here: at least as long as MPJ reads
     * @param written the sender's written word when it still writes the message ({@link AreaBuffer}), mapped here;
     *                null when the message is whole
     * @param sender  the sender's rank
     * @param waits   what a read waiting for the sender watches
     * @return whether the buffer was lent (false: it is not one of the area's, or lent already)
     */
    boolean lend(RawBuffer raw, MemorySegment message, MemorySegment written, int sender, AreaBuffer.Waits waits,
                 Runnable onReturn) {
        if (NIO_MEMORY == null || !(raw instanceof AreaBuffer buffer) || !mine.containsKey(raw)
                || lent.containsKey(raw)) {
            return false;
        }
        ByteBuffer own = buffer.getBuffer();
        // Read-only: the sender's block may be read by other ranks too (MPJ sends one buffer to several).
        NIO_MEMORY.setRelease(buffer, message.asByteBuffer().asReadOnlyBuffer().order(own.order()));
        if (written != null) {
            buffer.lendWriting(written, sender, waits);
        }
        lent.put(raw, new Lent(buffer, own, onReturn));
        return true;
    }

    /** Gives every lent buffer its memory back and runs its return ({@code MPI.Finalize}). Under the lock. */
    void returnAllLent() {
        for (Lent l : lent.values()) {
            giveBack(l);
        }
        lent.clear();
    }

    /** A lent buffer gets its own memory back; its message's sender hears MPJ is done with it. */
    private static void giveBack(Lent l) {
        NIO_MEMORY.setRelease(l.buffer(), l.own());
        l.buffer().lendingEnded();
        l.onReturn().run();
    }

    /**
     * The memory field of MPJ's {@link NIOBuffer} (private, and its public {@code setBuffer} copies into the memory
     * rather than replacing it), or null where it cannot be reached: the device then copies every large message into
     * the receive's buffer, as before.
     */
    private static final VarHandle NIO_MEMORY = nioMemory();

    private static VarHandle nioMemory() {
        try {
            return MethodHandles.privateLookupIn(NIOBuffer.class, MethodHandles.lookup())
                    .findVarHandle(NIOBuffer.class, "buffer", ByteBuffer.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** @return the offset in the area of a buffer's memory, or -1 if it is not one of the area's */
    long offsetOf(MemorySegment bytes) {
        long at = bytes.address() - area.address();
        if (!bytes.isNative() || at < 0 || bytes.byteSize() > area.byteSize() - at) {
            return -1;
        }
        return at;
    }

    /** @return where a buffer's memory lies in one of the area's extents, or null if it is not an extent's */
    AreaExtents.Place extentPlaceOf(MemorySegment bytes) {
        return extents.placeOf(bytes);
    }

    @Override
    public RawBuffer createBuffer(int size) {
        if (size < smallest) {
            int c = sizeClass(size);
            synchronized (this) {
                NIOBuffer b = free[c].poll();
                if (b != null) {
                    // As a fresh one: MPJ may have set another byte order on it.
                    b.getBuffer().clear().order(ByteOrder.BIG_ENDIAN);
                    return b;
                }
            }
            int capacity = 1 << (c + SMALLEST_CLASS);
            return new NIOBuffer(capacity, ByteBuffer.allocateDirect(capacity));
        }
        if (size >= smallest) {
            synchronized (lock) {
                long n = AreaBuffer.blockBytes(size);
                long at = pool.allocate(n);
                if (at >= 0) {
                    RawBuffer b = new AreaBuffer(size, area.asSlice(at, n), at + AreaBuffer.wordAt(size));
                    mine.put(b, new Block(pool, at));
                    return b;
                }
                AreaExtents.Place x = extents.allocate(n);
                if (x != null) {
                    RawBuffer b = new AreaBuffer(size, x.extent().memory().asSlice(x.offset(), n),
                            x.offset() + AreaBuffer.wordAt(size));
                    mine.put(b, new Block(x.pool(), x.offset()));
                    return b;
                }
            }
        }
        return previous.createBuffer(size);
    }

    @Override
    public void destroyBuffer(RawBuffer b) {
        if (b.getCapacity() >= smallest) {
            // Only buffers of the smallest area size or more can be the area's: the small ones skip the lock.
            synchronized (lock) {
                Lent l = lent.remove(b);
                if (l != null) {
                    giveBack(l);
                }
                Block block = mine.remove(b);
                if (block != null) {
                    ((AreaBuffer) b).discard();
                    block.blocks().ownerFreed(block.offset(), AreaBuffer.blockBytes(b.getCapacity()));
                    return;
                }
            }
        }
        if (b instanceof NIOBuffer nio && nio.getClass() == NIOBuffer.class) {
            // One of the small ones (MPJ's own factory makes its subclasses): kept for reuse, or left to the GC.
            int capacity = b.getCapacity();
            int c = sizeClass(capacity);
            if (Integer.bitCount(capacity) == 1 && capacity >= 1 << SMALLEST_CLASS && c < free.length) {
                synchronized (this) {
                    if (free[c].size() < CACHED) {
                        free[c].push(nio);
                    }
                }
            }
            return;
        }
        previous.destroyBuffer(b);
    }

    @Override
    public void init() {
        // Nothing: the area exists already.
    }

    @Override
    public void finalixe() {
        previous.finalixe();
    }
}
