package dev.gdasync.gdsync.cuda;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Disjoint host address ranges, each mapped to a device address: the registrations of a
 * {@link CudaAddressMap}, sorted by start address. Not thread-safe; its owner locks.
 */
final class HostRanges {
    private final TreeMap<Long, Range> byStart = new TreeMap<>();

    /**
     * A registered range {@code [start, end)} whose first byte the device sees at {@code deviceAddress}.
     *
     * @param start         the first host address
     * @param end           one past the last host address
     * @param deviceAddress the device address of {@code start}
     * @param io            whether it was registered as I/O memory
     * @param owned         whether the map registered it (and unregisters it on close)
     * @param release       what unregisters it
     */
    record Range(long start, long end, long deviceAddress, boolean io, boolean owned, Runnable release) {
        Range {
            if (end <= start) {
                throw new IllegalArgumentException("empty range [0x" + Long.toHexString(start) + ", 0x"
                        + Long.toHexString(end) + ")");
            }
        }

        /** @return the device address minus the host address, the same for every byte of the range */
        long delta() {
            return deviceAddress - start;
        }

        boolean contains(long address, long bytes) {
            return address >= start && address + bytes <= end;
        }

        @Override
        public String toString() {
            return "[0x" + Long.toHexString(start) + ", 0x" + Long.toHexString(end) + ") -> 0x"
                    + Long.toHexString(deviceAddress) + (io ? " (IOMEMORY)" : "") + (owned ? "" : " (registered elsewhere)");
        }
    }

    /**
     * @param address the first byte
     * @param bytes   how many bytes (at least 1)
     * @return the range holding all of them, or null
     */
    Range find(long address, long bytes) {
        Map.Entry<Long, Range> e = byStart.floorEntry(address);
        return e != null && e.getValue().contains(address, bytes) ? e.getValue() : null;
    }

    /**
     * @param start the first address
     * @param end   one past the last
     * @return the ranges that intersect {@code [start, end)}, in address order
     */
    List<Range> intersecting(long start, long end) {
        List<Range> out = new ArrayList<>();
        Map.Entry<Long, Range> before = byStart.lowerEntry(start);
        if (before != null && before.getValue().end() > start) {
            out.add(before.getValue());
        }
        out.addAll(byStart.subMap(start, true, end, false).values());
        return out;
    }

    /**
     * @param start the first address
     * @param end   one past the last
     * @return the parts of {@code [start, end)} no range covers, as {start, end} pairs in address order
     */
    List<long[]> gaps(long start, long end) {
        List<long[]> out = new ArrayList<>();
        long at = start;
        for (Range r : intersecting(start, end)) {
            if (r.start() > at) {
                out.add(new long[] {at, r.start()});
            }
            at = Math.max(at, r.end());
        }
        if (at < end) {
            out.add(new long[] {at, end});
        }
        return out;
    }

    /**
     * @param range a range that overlaps none of this set's
     * @throws IllegalArgumentException if it overlaps one
     */
    void add(Range range) {
        if (!intersecting(range.start(), range.end()).isEmpty()) {
            throw new IllegalArgumentException(range + " overlaps " + intersecting(range.start(), range.end()));
        }
        byStart.put(range.start(), range);
    }

    /**
     * Removes the ranges that lie entirely inside {@code [start, end)}.
     *
     * @param start the first address
     * @param end   one past the last
     * @return the ranges removed, in address order
     */
    List<Range> removeWithin(long start, long end) {
        List<Range> out = new ArrayList<>();
        for (Range r : intersecting(start, end)) {
            if (r.start() >= start && r.end() <= end) {
                byStart.remove(r.start());
                out.add(r);
            }
        }
        return out;
    }

    /** @return every range, in address order, and an empty set */
    List<Range> removeAll() {
        List<Range> all = new ArrayList<>(byStart.values());
        byStart.clear();
        return all;
    }

    /** @return how many ranges */
    int size() {
        return byStart.size();
    }

    /** @return every range, in address order */
    List<Range> ranges() {
        return List.copyOf(byStart.values());
    }
}
