package dev.gdasync.libmp;

import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.bootstrap.Bootstrap;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;

/**
 * An Mp's one-sided operations (LibMP's {@code mp_window_*}, {@code mp_iput}, {@code mp_iget} and their stream and
 * prepared forms, and the NIC's atomics on window words): the collective making and unmaking of windows, and the
 * RDMA writes, reads and atomics aimed at a peer's window. The bodies of the facade's calls of the same names, whose
 * contracts (and Javadoc) are {@code Mp}'s. A put, get or atomic is checked and written into the peer link's send
 * work request, then rung by this thread at once ({@link #postNow}), or prepared for a stream to ring.
 */
final class OneSidedOps {
    private final MpContext context;
    private final Bootstrap bootstrap;
    private final MpMemory memory;
    private final RequestPosting posting;
    private final StreamForms streams;

    OneSidedOps(MpContext context, Bootstrap bootstrap, MpMemory memory, RequestPosting posting, StreamForms streams) {
        this.context = context;
        this.bootstrap = bootstrap;
        this.memory = memory;
        this.posting = posting;
        this.streams = streams;
    }

    MpWindow windowCreate(MemorySegment buffer) {
        Objects.requireNonNull(buffer, "buffer must not be null");
        context.requireOpen();
        // Bad input is refused here, before the exchange, like every call's (this rank takes no part); a registration
        // the NIC cannot make (its table full) is not the caller's input: this rank then takes part, saying so.
        MpRegistration reg = null;
        RuntimeException refused = null;
        try {
            reg = memory.register(buffer);
        } catch (IllegalStateException e) {
            context.requireOpen();
            refused = e;
        }
        // A rank whose registration failed still takes part, with size -1, so that no rank waits for it in vain.
        ByteBuffer mine = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN)
                .putLong(buffer.address()).putLong(reg == null ? 0 : reg.rkey()).putLong(reg == null ? -1 : buffer.byteSize());
        List<byte[]> all;
        try {
            all = bootstrap.allGather(mine.array());
        } catch (RuntimeException e) {
            if (reg != null) {
                memory.deregister(reg);
            }
            throw e;
        }
        if (refused != null) {
            throw refused;
        }
        int n = bootstrap.size();
        long[] addr = new long[n];
        long[] rkey = new long[n];
        long[] size = new long[n];
        for (int p = 0; p < n; p++) {
            ByteBuffer b = ByteBuffer.wrap(all.get(p)).order(ByteOrder.LITTLE_ENDIAN);
            addr[p] = b.getLong();
            rkey[p] = b.getLong();
            size[p] = b.getLong();
        }
        for (int p = 0; p < n; p++) {
            if (size[p] < 0) {
                memory.deregister(reg);
                throw new WindowRefusedException(p);
            }
        }
        return new MpWindow(context, reg, buffer, addr, rkey, size);
    }

    void windowDestroy(MpWindow window) {
        Objects.requireNonNull(window, "window must not be null");
        requireOwn(window);
        if (window.destroyed) {
            throw new IllegalStateException("the window was already destroyed");
        }
        bootstrap.barrier();
        window.destroyed = true;
        memory.deregister(window.local);
    }

    MpRequest iput(MemorySegment src, MpRegistration reg, int peer, long displacement, MpWindow window, int flags) {
        requireNonNull(src, "src", reg, window);
        MpRequest r = putRequest(src, reg, peer, displacement, window, flags);
        postNow(context.peerLink(peer), r);
        return r;
    }

    MpRequest iget(MemorySegment dst, MpRegistration reg, int peer, long displacement, MpWindow window) {
        requireNonNull(dst, "dst", reg, window);
        MpRequest r = getRequest(dst, reg, peer, displacement, window);
        postNow(context.peerLink(peer), r);
        return r;
    }

    MpRequest iputOnStream(MemorySegment src, MpRegistration reg, int peer, long displacement, MpWindow window,
                           int flags, Stream stream) {
        requireNonNull(src, "src", reg, window);
        Args.usable(stream);
        MpRequest r = putPrepare(src, reg, peer, displacement, window, flags);
        streams.ringOnStream(r, stream);
        return r;
    }

    MpRequest igetOnStream(MemorySegment dst, MpRegistration reg, int peer, long displacement, MpWindow window,
                           Stream stream) {
        requireNonNull(dst, "dst", reg, window);
        Args.usable(stream);
        MpRequest r = getRequest(dst, reg, peer, displacement, window);
        posting.prepare(context.peerLink(peer), r);
        streams.ringOnStream(r, stream);
        return r;
    }

    MpRequest putPrepare(MemorySegment src, MpRegistration reg, int peer, long displacement, MpWindow window, int flags) {
        requireNonNull(src, "src", reg, window);
        MpRequest r = putRequest(src, reg, peer, displacement, window, flags);
        posting.prepare(context.peerLink(peer), r);
        return r;
    }

    MpRequest ifetchAdd(MemorySegment result, MpRegistration reg, int peer, long displacement, long addend,
                        MpWindow window) {
        requireNonNull(result, "result", reg, window);
        MpRequest r = atomicRequest(Opcode.ATOMIC_FETCH_ADD, result, reg, peer, displacement, addend, 0, window);
        postNow(context.peerLink(peer), r);
        return r;
    }

    MpRequest fetchAddPrepare(MemorySegment result, MpRegistration reg, int peer, long displacement, long addend,
                              MpWindow window) {
        requireNonNull(result, "result", reg, window);
        MpRequest r = atomicRequest(Opcode.ATOMIC_FETCH_ADD, result, reg, peer, displacement, addend, 0, window);
        posting.prepare(context.peerLink(peer), r);
        return r;
    }

    MpRequest icompareSwap(MemorySegment result, MpRegistration reg, int peer, long displacement, long compare,
                           long swap, MpWindow window) {
        requireNonNull(result, "result", reg, window);
        MpRequest r = atomicRequest(Opcode.ATOMIC_CMP_SWAP, result, reg, peer, displacement, compare, swap, window);
        postNow(context.peerLink(peer), r);
        return r;
    }

    /** Checks a put, takes its request and writes its work request into the peer link's ({@code sendWr}). */
    private MpRequest putRequest(MemorySegment src, MpRegistration reg, int peer, long displacement, MpWindow window,
                                 int flags) {
        PutFlags.check(flags);
        PeerLink l = posting.link(peer);
        requireOwn(window);
        long bytes = posting.checkBuffers(List.of(src), reg);
        window.checkRange(peer, displacement, bytes);
        boolean nowait = (flags & PutFlags.NOWAIT) != 0;
        MpRequest r = posting.newRequest(MpRequest.Kind.PUT, peer, bytes, nowait);
        int sendFlags = (nowait ? 0 : SendFlags.SIGNALED) | ((flags & PutFlags.INLINE) != 0 ? SendFlags.INLINE : 0);
        RequestPosting.sendWr(l, r, Opcode.RDMA_WRITE, sendFlags, List.of(src), reg)
                .remote(window.addresses[peer] + displacement, window.rkeys[peer]);
        return r;
    }

    /** Checks a get, takes its request and writes its work request into the peer link's. */
    private MpRequest getRequest(MemorySegment dst, MpRegistration reg, int peer, long displacement, MpWindow window) {
        PeerLink l = posting.link(peer);
        requireOwn(window);
        long bytes = posting.checkBuffers(List.of(dst), reg);
        window.checkRange(peer, displacement, bytes);
        MpRequest r = posting.newRequest(MpRequest.Kind.GET, peer, bytes, false);
        RequestPosting.sendWr(l, r, Opcode.RDMA_READ, SendFlags.SIGNALED, List.of(dst), reg)
                .remote(window.addresses[peer] + displacement, window.rkeys[peer]);
        return r;
    }

    /** Checks an atomic, takes its request and writes its work request into the peer link's. */
    private MpRequest atomicRequest(Opcode op, MemorySegment result, MpRegistration reg, int peer, long displacement,
                                    long compareAdd, long swap, MpWindow window) {
        PeerLink l = posting.link(peer);
        requireOwn(window);
        if (result.byteSize() != 8) {
            throw new IllegalArgumentException("an atomic's result buffer is 8 bytes, got " + result.byteSize());
        }
        posting.checkBuffers(List.of(result), reg);
        window.checkRange(peer, displacement, 8);
        if (((window.addresses[peer] + displacement) & 7) != 0) {
            throw new IllegalArgumentException("displacement " + displacement + " in the window of rank " + peer
                    + " is not 8-byte aligned: atomics update aligned 64-bit words");
        }
        MpRequest r = posting.newRequest(MpRequest.Kind.ATOMIC, peer, 8, false);
        RequestPosting.sendWr(l, r, op, SendFlags.SIGNALED, List.of(result), reg)
                .remote(window.addresses[peer] + displacement, window.rkeys[peer]).compareAdd(compareAdd).swap(swap);
        return r;
    }

    /**
     * Posts a request's work request (in the link's {@code sendWr}) on this thread at once, as {@code Mp.isendv}
     * does: the NIC delivers it straight away where it can, with no prepared batch to execute and no doorbell for its
     * agent to pick up. A refusal (the queue stays full, or sends of the peer are prepared or posted to a stream and
     * not rung yet) cancels the request, so it leaves nothing behind.
     */
    private void postNow(PeerLink l, MpRequest r) {
        posting.postSend(l, l.sendWr, r);
        if (r.isNowait()) {
            r.posted();
            l.awaitExecution(r);
        } else {
            r.posted(l.qp.sendCq(), l.qp.sendCq().reserveWait());
            l.awaitSend(r);
        }
    }

    /** The null checks every put, get and atomic makes first, naming the parameter: the buffer, reg, window. */
    private static void requireNonNull(MemorySegment buffer, String name, MpRegistration reg, MpWindow window) {
        if (buffer == null) {
            throw new NullPointerException(name + " must not be null");
        }
        Objects.requireNonNull(reg, "reg must not be null");
        Objects.requireNonNull(window, "window must not be null");
    }

    private void requireOwn(MpWindow w) {
        Objects.requireNonNull(w, "window").checkOwner(context);
    }
}
