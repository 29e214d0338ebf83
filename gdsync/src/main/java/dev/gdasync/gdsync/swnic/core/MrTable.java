package dev.gdasync.gdsync.swnic.core;

import dev.gdasync.gdsync.memory.Region;
import dev.gdasync.gdsync.memory.RegionKind;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;

import static dev.gdasync.gdsync.swnic.core.Layouts.INT;
import static dev.gdasync.gdsync.swnic.core.Layouts.LONG;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The owner's side of the memory-region table in the node file. Peers read the table to check the
 * rkeys and lkeys they are given; this class is the only writer.
 *
 * <p>A key is a slot number in its low 16 bits and 48 random bits above (16 with 32-bit keys, for a device whose
 * work requests carry 32-bit keys). Keys are never reused, so a
 * stale or forged key fails the check even when its slot holds a new registration.
 */
public final class MrTable {
    private final MemorySegment node;
    private final int capacity;
    private final SwMemoryRegion[] slots;
    private final int[] freeSlots;
    private final SecureRandom random = new SecureRandom();
    private final int keyBits;
    private int freeCount;
    private final String owner;

    /**
     * @param node     the node file, whose table this class writes
     * @param capacity the table's slots
     * @param owner    the NIC's name, for messages
     * @param keyBits  the key width, 32 or 64
     */
    MrTable(MemorySegment node, int capacity, String owner, int keyBits) {
        this.keyBits = keyBits;
        this.owner = owner;
        this.node = node;
        this.capacity = capacity;
        this.slots = new SwMemoryRegion[capacity];
        this.freeSlots = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            freeSlots[i] = capacity - 1 - i;
        }
        this.freeCount = capacity;
    }

    /**
     * Registers a checked range of a region: a slot, two fresh keys, the entry peers read.
     *
     * @param region the region
     * @param offset the range's offset in it
     * @param length its length
     * @param access the access flags
     * @return the registration
     * @throws IllegalStateException if the table is full
     */
    public synchronized SwMemoryRegion register(Region region, long offset, long length, int access) {
        if (freeCount == 0) {
            throw new IllegalStateException("memory-region table of " + owner + " is full (" + capacity
                    + " registrations): deregister some or raise SwNicConfig.mrCapacity");
        }
        int slot = freeSlots[--freeCount];
        long lkey = newKey(slot);
        long rkey;
        do {
            rkey = newKey(slot);
        } while (rkey == lkey);
        SwMemoryRegion mr = new SwMemoryRegion(this, region, offset, length, access, lkey, rkey, slot);
        long e = entry(slot);
        node.set(JAVA_LONG, e + Layouts.Mr.OFF_ADDRESS, mr.address());
        node.set(JAVA_LONG, e + Layouts.Mr.OFF_LENGTH, length);
        node.set(JAVA_LONG, e + Layouts.Mr.OFF_REGION_ID, region.id());
        node.set(JAVA_LONG, e + Layouts.Mr.OFF_REGION_OFFSET, offset);
        node.set(JAVA_INT, e + Layouts.Mr.OFF_KIND,
                region.kind() == RegionKind.DEVICE ? Layouts.Mr.KIND_DEVICE : Layouts.Mr.KIND_HOST);
        INT.setRelease(node, e + Layouts.Mr.OFF_ACCESS, access);
        // Keys last: a reader that sees a key sees the fields written before it.
        LONG.setRelease(node, e + Layouts.Mr.OFF_LKEY, lkey);
        LONG.setRelease(node, e + Layouts.Mr.OFF_RKEY, rkey);
        slots[slot] = mr;
        return mr;
    }

    /**
     * Ends a registration: both keys stop working at once.
     *
     * @param mr the registration
     * @throws IllegalArgumentException if it is not registered here (deregistered twice?)
     */
    public synchronized void deregister(SwMemoryRegion mr) {
        int slot = mr.slot();
        if (slots[slot] != mr) {
            throw new IllegalArgumentException(mr + " is not registered (deregistered twice?)");
        }
        mr.invalidate();
        long e = entry(slot);
        // Keys first: from here no peer check passes.
        LONG.setVolatile(node, e + Layouts.Mr.OFF_RKEY, 0L);
        LONG.setVolatile(node, e + Layouts.Mr.OFF_LKEY, 0L);
        slots[slot] = null;
        freeSlots[freeCount++] = slot;
    }

    /**
     * Deregisters every live registration of a region (it is closing).
     *
     * @return how many there were
     */
    public synchronized int deregisterAll(Region region) {
        int n = 0;
        for (SwMemoryRegion mr : slots) {
            if (mr != null && mr.region() == region) {
                deregister(mr);
                n++;
            }
        }
        return n;
    }

    /**
     * Finds a live registration of this NIC by lkey; safe from any thread.
     *
     * @param lkey a key
     * @return the region, or null if no live registration has that lkey
     */
    public SwMemoryRegion byLkey(long lkey) {
        int slot = (int) (lkey & Layouts.Mr.SLOT_MASK);
        if (slot >= capacity) {
            return null;
        }
        SwMemoryRegion mr = slots[slot];
        return mr != null && mr.lkey() == lkey && mr.isValid() ? mr : null;
    }

    /**
     * Finds a live registration of this NIC by rkey (requests that arrived over UCX name this NIC's memory by it);
     * safe from any thread.
     *
     * @param rkey a key
     * @return the region, or null if no live registration has that rkey
     */
    public SwMemoryRegion byRkey(long rkey) {
        int slot = (int) (rkey & Layouts.Mr.SLOT_MASK);
        if (slot >= capacity || rkey == 0) {
            return null;
        }
        SwMemoryRegion mr = slots[slot];
        return mr != null && mr.rkey() == rkey && mr.isValid() ? mr : null;
    }

    /** @return live registrations */
    public synchronized int size() {
        return capacity - freeCount;
    }

    private long newKey(int slot) {
        long high;
        do {
            high = random.nextLong() >>> (Layouts.Mr.SLOT_BITS + 64 - keyBits);
        } while (high == 0);
        return (high << Layouts.Mr.SLOT_BITS) | slot;
    }

    private static long entry(int slot) {
        return Layouts.Node.MR_TABLE + slot * Layouts.Mr.SIZE;
    }
}
