package dev.gdasync.libmp.mpj;

// Why this file is long: MPJ's RawBuffer has a write, gather, read, scatter and strided variant for each of its 8
// element types, and every one that writes or reads the buffer's memory must keep the remembered writes' order or wait
// for the sender's pieces: 48 short overrides, which only MPJ's interface could make fewer.

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import mpjbuf.NIOBuffer;
import xdev.XDevException;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * An MPJ buffer carved from the device's rendezvous area (or an extent of it), whose large copies are made while the
 * message travels rather than before it, so that a large message's two copies (MPJ's pack at the sender, its unpack
 * at the receiver) overlap instead of following each other.
 *
 * <p><b>At the sender</b>, a large write of a program's array (MPJ's pack of a contiguous section) is remembered, not
 * copied: MPI lets a send read its buffer until the send returns (or, non-blocking, completes), and the device's send
 * call copies every remembered write before it returns ({@link #writeOut}). On one host the device first sends the
 * request to send, then copies in pieces of {@value #PIECE} bytes, each time storing in the buffer's <em>written
 * word</em> (8 bytes after its capacity, in the same registered memory) how many of the message's first bytes are final
 * ({@link #writeOutTelling}). Every other write (headers, gathers of derived datatypes) is made at once, after the
 * remembered ones it overlaps; a read of bytes they cover copies them first.
 *
 * <p><b>At the receiver</b>, a receive buffer lent a peer's message in place while the peer still writes it
 * ({@link #lendWriting}) waits, at each of MPJ's reads, until the peer's written word covers the bytes read: MPJ
 * unpacks each piece as soon as it landed. A wait fails (an {@link XDevException}, which MPJ's call wraps in its
 * {@code MPIException}) when the job fails, naming the rank, or after the job's wait timeout.
 *
 * <p>Not thread-safe, as MPJ's buffers: one thread packs and sends a buffer, one unpacks it.
 */
final class AreaBuffer extends NIOBuffer {
    /** The length of the written word, after the capacity (rounded up to 8) of every such buffer's block. */
    static final int WORD_BYTES = 8;
    /** A written word's value once the whole message is final. */
    static final long ALL_WRITTEN = Long.MAX_VALUE;
    /** Writes at least this long are remembered rather than made at once. */
    static final int REMEMBERED = 16 * 1024;
    /** The copies of remembered writes go in pieces of this many bytes, each told in the written word. */
    static final int PIECE = 32 * 1024;
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();

    /** A remembered write: {@code elements} of {@code array} from {@code from}, to byte {@code at} of the buffer. */
    private record Write(Object array, int from, int elements, int at, int elementBytes) {
    }

    /** Where this buffer's written word is: in its own memory, and as an offset there (area or extent). */
    private final MemorySegment word;
    private final long wordOffset;
    private final List<Write> remembered = new ArrayList<>(2);
    /** The span the remembered writes cover, in increasing order; empty when none. */
    private int rememberedFrom = Integer.MAX_VALUE;
    private int rememberedTo;

    /** While lent a message its sender still writes: the sender's written word, else null. */
    private MemorySegment peerWord;
    private long knownWritten;
    private int writer;
    private Waits waits;

    /** What a receiver's wait for a peer's bytes watches. */
    interface Waits {
        /** @return why the job failed, or null while it is healthy */
        String failure();

        /** @return how long a wait may last, in nanoseconds */
        long timeoutNanos();
    }

    /**
     * @param capacity   the buffer's capacity
     * @param memory     its memory: {@code capacity} bytes, then (at {@link #wordAt}) its written word
     * @param wordOffset where the written word is, as an offset in the area or extent the buffer is carved from
     */
    AreaBuffer(int capacity, MemorySegment memory, long wordOffset) {
        super(capacity, memory.asSlice(0, capacity).asByteBuffer());
        this.word = memory.asSlice(wordAt(capacity), WORD_BYTES);
        this.wordOffset = wordOffset;
    }

    /** @return where the written word of a buffer of that capacity is, from the start of its memory */
    static long wordAt(long capacity) {
        return (capacity + WORD_BYTES - 1) & -WORD_BYTES;
    }

    /** @return the length of the block a buffer of that capacity takes */
    static long blockBytes(long capacity) {
        return wordAt(capacity) + WORD_BYTES;
    }

    // ---- the sender's side ----

    /** @return whether writes are remembered that a send must still copy */
    boolean hasRemembered() {
        return !remembered.isEmpty();
    }

    /**
     * Starts telling a receiver how far the message is written: its written word says the bytes before the first
     * remembered write are final. Call before the request to send goes out, then {@link #writeOutTelling}.
     *
     * @return the written word's offset in the area or extent, for the request to send
     */
    long startTelling() {
        tell(remembered.isEmpty() ? ALL_WRITTEN : rememberedFrom);
        return wordOffset;
    }

    /** Copies the remembered writes in pieces, telling the written word after each piece, and forgets them. */
    void writeOutTelling() {
        copyRemembered(true);
    }

    /** Copies the remembered writes at once (the message is not read before the send's call returns). */
    void writeOut() {
        if (!remembered.isEmpty()) {
            copyRemembered(false);
        }
    }

    private void copyRemembered(boolean tell) {
        for (int i = 0; i < remembered.size(); i++) {
            Write w = remembered.get(i);
            int step = Math.max(1, PIECE / w.elementBytes());
            for (int done = 0; done < w.elements(); done += step) {
                int n = Math.min(step, w.elements() - done);
                copy(w, done, n);
                if (tell) {
                    tell(w.at() + (long) (done + n) * w.elementBytes());
                }
            }
            if (tell) {
                tell(i + 1 < remembered.size() ? remembered.get(i + 1).at() : ALL_WRITTEN);
            }
        }
        forget();
    }

    /** Stores the written word after the bytes it covers (a release: a reader that sees it sees them). */
    private void tell(long written) {
        WORD.setRelease(word, 0L, written);
    }

    private void copy(Write w, int done, int n) {
        int from = w.from() + done;
        int at = w.at() + done * w.elementBytes();
        switch (w.array()) {
            case byte[] a -> super.write(a, from, n, at);
            case short[] a -> super.write(a, from, n, at);
            case int[] a -> super.write(a, from, n, at);
            case long[] a -> super.write(a, from, n, at);
            case char[] a -> super.write(a, from, n, at);
            case float[] a -> super.write(a, from, n, at);
            case double[] a -> super.write(a, from, n, at);
            case boolean[] a -> super.write(a, from, n, at);
            default -> throw new IllegalStateException("remembered a write of " + w.array().getClass());
        }
    }

    private void forget() {
        remembered.clear();
        rememberedFrom = Integer.MAX_VALUE;
        rememberedTo = 0;
    }

    /**
     * Remembers a write if it is large, valid and after the remembered ones; else makes it now (after the remembered
     * writes it overlaps).
     *
     * @return whether it was remembered
     */
    private boolean remember(Object array, int arrayLength, int from, int elements, int at, int elementBytes) {
        long bytes = (long) elements * elementBytes;
        if (bytes < REMEMBERED || from < 0 || elements < 0 || from > arrayLength - elements || at < rememberedTo
                || at < 0 || at + bytes > Math.min(getCapacity(), getBuffer().limit())) {
            beforeWriting(at, bytes);
            return false;
        }
        remembered.add(new Write(array, from, elements, at, elementBytes));
        rememberedFrom = Math.min(rememberedFrom, at);
        rememberedTo = (int) (at + bytes);
        return true;
    }

    /** A write made now of {@code bytes} at {@code at}: the remembered writes it overlaps are made first. */
    private void beforeWriting(long at, long bytes) {
        if (!remembered.isEmpty() && at < rememberedTo && at + bytes > rememberedFrom) {
            writeOut();
        }
    }

    /** Drops what the buffer remembers and any lending (MPJ freed it). */
    void discard() {
        forget();
        peerWord = null;
        waits = null;
    }

    // ---- the receiver's side ----

    /**
     * The buffer reads a message its sender still writes (it was just lent the message's memory): each read waits
     * until the sender's written word covers it.
     *
     * @param peerWord the sender's written word, mapped here
     * @param writer   the sender's rank, for messages
     */
    void lendWriting(MemorySegment peerWord, int writer, Waits waits) {
        this.peerWord = peerWord;
        this.writer = writer;
        this.waits = waits;
        this.knownWritten = 0;
    }

    /** The lending ended: reads go to the buffer's own memory again. */
    void lendingEnded() {
        peerWord = null;
        waits = null;
    }

    /**
     * Before reading bytes from {@code start} to {@code end}: copies the remembered writes they overlap (the device
     * reads the section's header, before them, without copying them), or waits for the sender to write them.
     */
    private void beforeReading(long start, long end) {
        if (!remembered.isEmpty() && start < rememberedTo && end > rememberedFrom) {
            writeOut();
        }
        if (peerWord != null && knownWritten < end) {
            try {
                awaitWritten(peerWord, end, writer, waits);
            } catch (IllegalStateException e) {
                throw new XDevException(e.getMessage()); // as the device's calls fail: MPJ's call wraps it
            }
            knownWritten = Math.min(end, getCapacity());
            if (written(peerWord) == ALL_WRITTEN) {
                peerWord = null;
            }
        }
    }

    private static long written(MemorySegment word) {
        return (long) WORD.getAcquire(word, 0L);
    }

    /**
     * Waits until a sender's written word covers {@code end} bytes of its message.
     *
     * @throws IllegalStateException if the job failed meanwhile, or the wait outlasted the job's wait timeout
     */
    static void awaitWritten(MemorySegment word, long end, int writer, Waits waits) {
        if (written(word) >= end) {
            return;
        }
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.PEER_WAIT);
        long start = System.nanoTime();
        while (written(word) < end) {
            String failed = waits.failure();
            if (failed != null) {
                throw new IllegalStateException("rank " + writer + "'s message was still being written when the job"
                        + " failed: " + failed);
            }
            if (System.nanoTime() - start > waits.timeoutNanos()) {
                throw new IllegalStateException("rank " + writer + " did not write its message within "
                        + waits.timeoutNanos() / 1_000_000 + " ms (" + Math.max(0, written(word)) + " of " + end
                        + " bytes written)");
            }
            idler.idle();
        }
    }

    // ---- MPJ's writes ----

    @Override
    public void write(byte[] src, int from, int n, int at) {
        if (!remember(src, src.length, from, n, at, 1)) {
            super.write(src, from, n, at);
        }
    }

    @Override
    public void write(short[] src, int from, int n, int at) {
        if (!remember(src, src.length, from, n, at, 2)) {
            super.write(src, from, n, at);
        }
    }

    @Override
    public void write(int[] src, int from, int n, int at) {
        if (!remember(src, src.length, from, n, at, 4)) {
            super.write(src, from, n, at);
        }
    }

    @Override
    public void write(long[] src, int from, int n, int at) {
        if (!remember(src, src.length, from, n, at, 8)) {
            super.write(src, from, n, at);
        }
    }

    @Override
    public void write(char[] src, int from, int n, int at) {
        if (!remember(src, src.length, from, n, at, 2)) {
            super.write(src, from, n, at);
        }
    }

    @Override
    public void write(float[] src, int from, int n, int at) {
        if (!remember(src, src.length, from, n, at, 4)) {
            super.write(src, from, n, at);
        }
    }

    @Override
    public void write(double[] src, int from, int n, int at) {
        if (!remember(src, src.length, from, n, at, 8)) {
            super.write(src, from, n, at);
        }
    }

    @Override
    public void write(boolean[] src, int from, int n, int at) {
        if (!remember(src, src.length, from, n, at, 1)) {
            super.write(src, from, n, at);
        }
    }

    @Override
    public void putByte(int value, int at) { // MPJ's order: the value, then where
        beforeWriting(at, 1);
        super.putByte(value, at);
    }

    @Override
    public void putInt(int value, int at) { // MPJ's order: the value, then where
        beforeWriting(at, 4);
        super.putInt(value, at);
    }

    @Override
    public void copy(ByteBuffer src, int from, int n, int at) {
        writeOut();
        super.copy(src, from, n, at);
    }

    @Override
    public void setBuffer(ByteBuffer src) {
        writeOut();
        super.setBuffer(src);
    }

    // Gathers of derived datatypes: their extent is not known here, so the remembered writes go first.

    @Override
    public int gather(byte[] src, int n, int from, int[] indexes, int at) {
        writeOut();
        return super.gather(src, n, from, indexes, at);
    }

    @Override
    public int gather(short[] src, int n, int from, int[] indexes, int at) {
        writeOut();
        return super.gather(src, n, from, indexes, at);
    }

    @Override
    public int gather(int[] src, int n, int from, int[] indexes, int at) {
        writeOut();
        return super.gather(src, n, from, indexes, at);
    }

    @Override
    public int gather(long[] src, int n, int from, int[] indexes, int at) {
        writeOut();
        return super.gather(src, n, from, indexes, at);
    }

    @Override
    public int gather(char[] src, int n, int from, int[] indexes, int at) {
        writeOut();
        return super.gather(src, n, from, indexes, at);
    }

    @Override
    public int gather(float[] src, int n, int from, int[] indexes, int at) {
        writeOut();
        return super.gather(src, n, from, indexes, at);
    }

    @Override
    public int gather(double[] src, int n, int from, int[] indexes, int at) {
        writeOut();
        return super.gather(src, n, from, indexes, at);
    }

    @Override
    public int gather(boolean[] src, int n, int from, int[] indexes, int at) {
        writeOut();
        return super.gather(src, n, from, indexes, at);
    }

    @Override
    public void strGather(byte[] src, int from, int rank, int exts, int strs, int[] shape, int at) {
        writeOut();
        super.strGather(src, from, rank, exts, strs, shape, at);
    }

    @Override
    public void strGather(short[] src, int from, int rank, int exts, int strs, int[] shape, int at) {
        writeOut();
        super.strGather(src, from, rank, exts, strs, shape, at);
    }

    @Override
    public void strGather(int[] src, int from, int rank, int exts, int strs, int[] shape, int at) {
        writeOut();
        super.strGather(src, from, rank, exts, strs, shape, at);
    }

    @Override
    public void strGather(long[] src, int from, int rank, int exts, int strs, int[] shape, int at) {
        writeOut();
        super.strGather(src, from, rank, exts, strs, shape, at);
    }

    @Override
    public void strGather(char[] src, int from, int rank, int exts, int strs, int[] shape, int at) {
        writeOut();
        super.strGather(src, from, rank, exts, strs, shape, at);
    }

    @Override
    public void strGather(float[] src, int from, int rank, int exts, int strs, int[] shape, int at) {
        writeOut();
        super.strGather(src, from, rank, exts, strs, shape, at);
    }

    @Override
    public void strGather(double[] src, int from, int rank, int exts, int strs, int[] shape, int at) {
        writeOut();
        super.strGather(src, from, rank, exts, strs, shape, at);
    }

    @Override
    public void strGather(boolean[] src, int from, int rank, int exts, int strs, int[] shape, int at) {
        writeOut();
        super.strGather(src, from, rank, exts, strs, shape, at);
    }

    // ---- MPJ's reads: contiguous ones in pieces as they land, the others once the whole message did ----

    @Override
    public int getByte(int at) {
        beforeReading(at, at + 1L);
        return super.getByte(at);
    }

    @Override
    public int getInt(int at, boolean swap) {
        beforeReading(at, at + 4L);
        return super.getInt(at, swap);
    }

    /** @return how many of {@code n} elements from byte {@code at} to read now: all, or those written so far */
    private int readable(int at, int n, int elementBytes) {
        if (peerWord == null) {
            beforeReading(at, at + (long) n * elementBytes);
            return n;
        }
        int step = Math.max(1, PIECE / elementBytes);
        int k = Math.min(n, step);
        beforeReading(at, at + (long) k * elementBytes);
        return k;
    }

    @Override
    public void read(byte[] dst, int from, int n, int at, boolean swap) {
        for (int k; n > 0; from += k, n -= k, at += k) {
            k = readable(at, n, 1);
            super.read(dst, from, k, at, swap);
        }
    }

    @Override
    public void read(short[] dst, int from, int n, int at, boolean swap) {
        for (int k; n > 0; from += k, n -= k, at += k * 2) {
            k = readable(at, n, 2);
            super.read(dst, from, k, at, swap);
        }
    }

    @Override
    public void read(int[] dst, int from, int n, int at, boolean swap) {
        for (int k; n > 0; from += k, n -= k, at += k * 4) {
            k = readable(at, n, 4);
            super.read(dst, from, k, at, swap);
        }
    }

    @Override
    public void read(long[] dst, int from, int n, int at, boolean swap) {
        for (int k; n > 0; from += k, n -= k, at += k * 8) {
            k = readable(at, n, 8);
            super.read(dst, from, k, at, swap);
        }
    }

    @Override
    public void read(char[] dst, int from, int n, int at, boolean swap) {
        for (int k; n > 0; from += k, n -= k, at += k * 2) {
            k = readable(at, n, 2);
            super.read(dst, from, k, at, swap);
        }
    }

    @Override
    public void read(float[] dst, int from, int n, int at, boolean swap) {
        for (int k; n > 0; from += k, n -= k, at += k * 4) {
            k = readable(at, n, 4);
            super.read(dst, from, k, at, swap);
        }
    }

    @Override
    public void read(double[] dst, int from, int n, int at, boolean swap) {
        for (int k; n > 0; from += k, n -= k, at += k * 8) {
            k = readable(at, n, 8);
            super.read(dst, from, k, at, swap);
        }
    }

    @Override
    public void read(boolean[] dst, int from, int n, int at, boolean swap) {
        for (int k; n > 0; from += k, n -= k, at += k) {
            k = readable(at, n, 1);
            super.read(dst, from, k, at, swap);
        }
    }

    @Override
    public int scatter(byte[] dst, int n, int from, int[] indexes, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        return super.scatter(dst, n, from, indexes, at, swap);
    }

    @Override
    public int scatter(short[] dst, int n, int from, int[] indexes, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        return super.scatter(dst, n, from, indexes, at, swap);
    }

    @Override
    public int scatter(int[] dst, int n, int from, int[] indexes, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        return super.scatter(dst, n, from, indexes, at, swap);
    }

    @Override
    public int scatter(long[] dst, int n, int from, int[] indexes, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        return super.scatter(dst, n, from, indexes, at, swap);
    }

    @Override
    public int scatter(char[] dst, int n, int from, int[] indexes, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        return super.scatter(dst, n, from, indexes, at, swap);
    }

    @Override
    public int scatter(float[] dst, int n, int from, int[] indexes, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        return super.scatter(dst, n, from, indexes, at, swap);
    }

    @Override
    public int scatter(double[] dst, int n, int from, int[] indexes, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        return super.scatter(dst, n, from, indexes, at, swap);
    }

    @Override
    public int scatter(boolean[] dst, int n, int from, int[] indexes, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        return super.scatter(dst, n, from, indexes, at, swap);
    }

    @Override
    public void strScatter(byte[] dst, int from, int rank, int exts, int strs, int[] shape, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        super.strScatter(dst, from, rank, exts, strs, shape, at, swap);
    }

    @Override
    public void strScatter(short[] dst, int from, int rank, int exts, int strs, int[] shape, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        super.strScatter(dst, from, rank, exts, strs, shape, at, swap);
    }

    @Override
    public void strScatter(int[] dst, int from, int rank, int exts, int strs, int[] shape, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        super.strScatter(dst, from, rank, exts, strs, shape, at, swap);
    }

    @Override
    public void strScatter(long[] dst, int from, int rank, int exts, int strs, int[] shape, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        super.strScatter(dst, from, rank, exts, strs, shape, at, swap);
    }

    @Override
    public void strScatter(char[] dst, int from, int rank, int exts, int strs, int[] shape, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        super.strScatter(dst, from, rank, exts, strs, shape, at, swap);
    }

    @Override
    public void strScatter(float[] dst, int from, int rank, int exts, int strs, int[] shape, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        super.strScatter(dst, from, rank, exts, strs, shape, at, swap);
    }

    @Override
    public void strScatter(double[] dst, int from, int rank, int exts, int strs, int[] shape, int at, boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        super.strScatter(dst, from, rank, exts, strs, shape, at, swap);
    }

    @Override
    public void strScatter(boolean[] dst, int from, int rank, int exts, int strs, int[] shape, int at,
                           boolean swap) {
        beforeReading(0, ALL_WRITTEN);
        super.strScatter(dst, from, rank, exts, strs, shape, at, swap);
    }
}
