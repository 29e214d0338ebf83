package dev.gdasync.libmp;

/**
 * Requests awaiting one completion queue, in completion order, each numbered by its position. A growable
 * ring: adding, taking the head and finding a request by number are O(1), so walking from a remembered
 * position to a request costs only what was not walked before.
 */
final class RequestFifo {
    private MpRequest[] ring = new MpRequest[64];
    private long head;
    private long tail;
    /** Requests before this position were already visited by {@link #releaseOnCpuThrough}. */
    private long released;

    void addLast(MpRequest r) {
        if (tail - head == ring.length) {
            MpRequest[] bigger = new MpRequest[ring.length * 2];
            for (long s = head; s < tail; s++) {
                bigger[(int) (s & (bigger.length - 1))] = ring[(int) (s & (ring.length - 1))];
            }
            ring = bigger;
        }
        r.queuedAt(tail);
        ring[(int) (tail & (ring.length - 1))] = r;
        tail++;
    }

    /**
     * Removes the last request, which its caller took back before posting it.
     *
     * @param r the request last added
     * @throws IllegalStateException if it is not the last request
     */
    void removeLast(MpRequest r) {
        if (head == tail || ring[(int) ((tail - 1) & (ring.length - 1))] != r) {
            throw new IllegalStateException(r.describe() + " is not the last request awaiting its completion queue");
        }
        tail--;
        ring[(int) (tail & (ring.length - 1))] = null;
        if (released > tail) {
            released = tail;
        }
    }

    MpRequest peekFirst() {
        return head == tail ? null : ring[(int) (head & (ring.length - 1))];
    }

    MpRequest pollFirst() {
        if (head == tail) {
            return null;
        }
        int i = (int) (head & (ring.length - 1));
        MpRequest r = ring[i];
        ring[i] = null;
        head++;
        return r;
    }

    /** @return the request at a position in [{@link #head()}, {@link #tail()}) */
    MpRequest get(long position) {
        return ring[(int) (position & (ring.length - 1))];
    }

    long head() {
        return head;
    }

    long tail() {
        return tail;
    }

    boolean isEmpty() {
        return head == tail;
    }

    /**
     * Releases to the CPU the CQEs of a request in this fifo and of every request ahead of it that nobody
     * waits on on a stream: completions arrive in order, so an earlier CQE held for nobody would block
     * this one. Walks from where the last walk stopped: every request is visited once, however waits
     * interleave.
     *
     * @param r a posted request of this fifo, not complete
     * @throws IllegalStateException if a request ahead of it is prepared and not posted (its completion
     *                               comes first, so {@code r} can never complete)
     */
    void releaseOnCpuThrough(MpRequest r) {
        long from = Math.max(head, released);
        long to = r.fifoPosition();
        for (long p = from; p <= to; p++) {
            MpRequest q = get(p);
            if (q.state() == RequestState.PREPARED) {
                released = p;
                throw new IllegalStateException(q.describe() + " was prepared before " + r.describe()
                        + " and is not posted: its completion comes first, so " + r.describe() + " cannot complete");
            }
            q.releaseOnCpu();
        }
        released = Math.max(released, to + 1);
    }
}
