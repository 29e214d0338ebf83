package dev.gdasync.gdsync.cuda;

import dev.gdasync.gdsync.memop.MemoryWord;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * 32-bit words in pinned host memory that a CUDA stream owns: the words its waits for other streams'
 * events spin on, and the target of the barrier fallback. Whole pages, allocated and registered with CUDA
 * ({@code cuMemHostRegister}) by this class itself, not through an address map that others may share, so
 * that closing frees exactly what was made here. Thread-safe.
 */
final class ScratchWords implements AutoCloseable {
    private final CudaContext context;
    private final long page;
    private final String owner;
    private final Arena arena = Arena.ofShared();
    private final List<CudaHostMemory> pages = new ArrayList<>();
    private final ArrayDeque<MemoryWord> free = new ArrayDeque<>();
    private final MemoryWord fence;
    private boolean closed;

    /**
     * @param context the context to register in
     * @param owner   the stream's name, for word names
     */
    ScratchWords(CudaContext context, String owner) {
        this.context = context;
        this.page = HostPages.size();
        this.owner = owner;
        try {
            fence = take();
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** @return the word the barrier fallback writes */
    MemoryWord fence() {
        return fence;
    }

    /** @return a free word holding 0 */
    synchronized MemoryWord acquire() {
        MemoryWord w = take();
        w.set32(0, true);
        return w;
    }

    /** @param word a word from {@link #acquire()} that nothing waits on any more */
    synchronized void release(MemoryWord word) {
        if (!closed) {
            free.push(word);
        }
    }

    /**
     * @param word any word
     * @return its device address when it is one of these words, else -1
     */
    synchronized long deviceAddressOf(MemoryWord word) {
        long a = word.address();
        for (CudaHostMemory m : pages) {
            if (a >= m.hostAddress() && a - m.hostAddress() < m.byteSize()) {
                return m.deviceAddressOf(a);
            }
        }
        return -1;
    }

    private MemoryWord take() {
        if (closed) {
            throw new IllegalStateException("the scratch memory of CUDA stream '" + owner + "' is closed");
        }
        if (free.isEmpty()) {
            MemorySegment s = arena.allocate(page, page);
            CudaHostMemory m = CudaHostMemory.register(context, s.address(), page);
            pages.add(m);
            int base = pages.size() - 1;
            for (long off = page - 4; off >= 0; off -= 4) {
                free.push(MemoryWord.word32(s, off, "scratch word " + (base * page + off) / 4 + " of CUDA stream '"
                        + owner + "'"));
            }
        }
        return free.pop();
    }

    /** Unregisters and frees the pages; call only when no GPU work can touch them any more. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        free.clear();
        RuntimeException first = null;
        for (CudaHostMemory m : pages.reversed()) {
            try {
                m.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        arena.close();
        if (first != null) {
            throw first;
        }
    }
}
