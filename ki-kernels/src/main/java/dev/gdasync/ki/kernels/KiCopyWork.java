package dev.gdasync.ki.kernels;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;

/**
 * Exchange work made of copies, the work the CUDA exchange kernel runs: pack step i copies
 * {@code pack.get(i)} (one per send entry, or none), interior chunk c copies the c-th of
 * {@code interiorChunks} equal parts of {@code interior} and then busy-waits {@code interiorNs}
 * (emulated compute), unpack step j copies {@code unpack.get(j)}.
 */
public final class KiCopyWork implements KiExchangeWork {
    private final List<KiCopy> pack;
    private final List<KiCopy> unpack;
    private final KiCopy interior;
    private final int interiorChunks;
    private final long interiorNs;

    /**
     * @param pack           one copy per send entry of the table, or an empty list
     * @param unpack         the unpack copies
     * @param interior       the interior copy, or null for compute-only chunks
     * @param interiorChunks how many chunks the interior work is split into
     * @param interiorNs     busy time per interior chunk
     */
    public KiCopyWork(List<KiCopy> pack, List<KiCopy> unpack, KiCopy interior, int interiorChunks, long interiorNs) {
        this.pack = List.copyOf(pack);
        this.unpack = List.copyOf(unpack);
        this.interior = interior;
        if (interiorChunks < 0 || interiorNs < 0) {
            throw new IllegalArgumentException("interior chunks and time must be >= 0, got " + interiorChunks + " and "
                    + interiorNs);
        }
        this.interiorChunks = interiorChunks;
        this.interiorNs = interiorNs;
    }

    /** @return the pack copies */
    public List<KiCopy> packCopies() {
        return pack;
    }

    /** @return the unpack copies */
    public List<KiCopy> unpackCopies() {
        return unpack;
    }

    /** @return the interior copy, or null */
    public KiCopy interiorCopy() {
        return interior;
    }

    /** @return busy time per interior chunk */
    public long interiorNs() {
        return interiorNs;
    }

    @Override
    public void pack(int sendIndex) {
        if (!pack.isEmpty()) {
            copy(pack.get(sendIndex));
        }
    }

    @Override
    public int interiorChunks() {
        return interiorChunks;
    }

    @Override
    public void interior(int chunk) {
        Objects.checkIndex(chunk, interiorChunks);
        if (interior != null) {
            long bytes = interior.bytes();
            long from = bytes * chunk / interiorChunks;
            long to = bytes * (chunk + 1) / interiorChunks;
            MemorySegment.copy(interior.from(), from, interior.to(), from, to - from);
        }
        KiDevice.spin(interiorNs);
    }

    @Override
    public int unpackCount() {
        return unpack.size();
    }

    @Override
    public void unpack(int index) {
        copy(unpack.get(index));
    }

    private static void copy(KiCopy c) {
        MemorySegment.copy(c.from(), 0, c.to(), 0, c.bytes());
    }
}
