package dev.gdasync.gdsync.gdrcopy;

import dev.gdasync.gdsync.memop.MemoryWord;

import java.lang.foreign.Arena;
import java.util.Optional;

/**
 * A 32- or 64-bit word of device memory as the CPU sees it: a {@link MemoryWord} that
 * {@link dev.gdasync.gdsync.memop.HostMemops} can wait on, made by {@link GpuWords}.
 *
 * <ul>
 *   <li><b>Mapped</b> ({@link #isMapped()}): the word lies in a GDRCopy mapping of its GPU page, so every
 *       read of {@link #word()} is a load from device memory across the BAR.</li>
 *   <li><b>Copied</b>: the word is a host copy that a background thread of its {@link GpuWords} refreshes
 *       with a device-to-host copy at a fixed interval ({@link GpuWords#COPY_INTERVAL_PROPERTY});
 *       {@link #refresh()} copies at once. A wait sees a new device value within about one interval plus
 *       one copy. If a copy fails, the word is no longer refreshed and {@link #failure()} says why (a wait
 *       on it then ends with its timeout).</li>
 * </ul>
 *
 * <p>{@link #close()} releases the word: a copied word's host memory at once, a mapped word's page when
 * no other word of its {@link GpuWords} uses it. Do not use the {@link MemoryWord} after that; once its memory
 * is released it throws {@link IllegalStateException} on access (never reads unmapped memory). Writes
 * through {@link #word()} reach device memory only for mapped words; a copied word is for reading.
 */
public final class GpuWordMirror implements AutoCloseable {
    private final GpuWords owner;
    private final long deviceAddress;
    private final MemoryWord word;
    /** The shared mapping of the word's GPU page; null for a copied word. */
    final GpuWords.Page page;
    /** The host copy's memory; null for a mapped word. */
    final Arena hostCopy;
    private volatile String failure;

    GpuWordMirror(GpuWords owner, long deviceAddress, MemoryWord word, GpuWords.Page page, Arena hostCopy) {
        this.owner = owner;
        this.deviceAddress = deviceAddress;
        this.word = word;
        this.page = page;
        this.hostCopy = hostCopy;
    }

    /** @return the word the CPU reads (and, when mapped, writes) */
    public MemoryWord word() {
        return word;
    }

    /** @return the word's device address */
    public long deviceAddress() {
        return deviceAddress;
    }

    /** @return 4 or 8 */
    public int width() {
        return word.width();
    }

    /** @return whether {@link #word()} is device memory seen through a GDRCopy mapping (else a host copy) */
    public boolean isMapped() {
        return page != null;
    }

    /** @return why a copied word stopped being refreshed, or empty */
    public Optional<String> failure() {
        return Optional.ofNullable(failure);
    }

    void fail(String why) {
        failure = why;
    }

    /**
     * Brings the word up to date now: a device-to-host copy for a copied word, nothing for a mapped one.
     *
     * @throws dev.gdasync.gdsync.cuda.CudaException if the copy fails
     * @throws IllegalStateException                 if the word was closed
     */
    public void refresh() {
        if (page == null) {
            owner.refresh(this);
        }
    }

    /** Releases the word (once). */
    @Override
    public void close() {
        owner.release(this);
    }

    @Override
    public String toString() {
        return word.name() + " (device 0x" + Long.toHexString(deviceAddress) + ", " + (page != null
                ? "mapped with GDRCopy" : "copied to the host") + ")";
    }
}
