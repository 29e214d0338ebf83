package dev.gdasync.libmp;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.DescriptorFlags;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.SendFlags;
import dev.gdasync.gdsync.stream.Stream;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The stream and prepared forms of an Mp's two-sided traffic (LibMP's stream-asynchronous calls): sends prepared
 * now and rung by a stream later ({@code mp_send_prepare}, {@code mp_isend_post_all_on_stream}), the stream's waits
 * for completions ({@code mp_wait_all_on_stream}) and the stream's word waits and writes. The bodies of the
 * facade's calls of the same names, whose contracts (and Javadoc) are {@code Mp}'s; the one-sided operations ring
 * their prepared puts and gets through {@link #ringOnStream} too.
 */
final class StreamForms {
    private final MpContext context;
    private final RequestPosting posting;

    StreamForms(MpContext context, RequestPosting posting) {
        this.context = context;
        this.posting = posting;
    }

    MpRequest isendOnStream(MemorySegment buf, int peer, MpRegistration reg, Stream stream) {
        Objects.requireNonNull(buf, "buf must not be null");
        Objects.requireNonNull(reg, "reg must not be null");
        Args.usable(stream);
        MpRequest r = sendPrepare(buf, peer, reg);
        ringOnStream(r, stream);
        return r;
    }

    MpRequest isendvOnStream(List<MemorySegment> bufs, int peer, MpRegistration reg, Stream stream) {
        Args.noNulls(bufs, "bufs");
        Objects.requireNonNull(reg, "reg must not be null");
        Args.usable(stream);
        MpRequest r = sendvPrepare(bufs, peer, reg);
        ringOnStream(r, stream);
        return r;
    }

    MpRequest sendOnStream(MemorySegment buf, int peer, MpRegistration reg, Stream stream) {
        Objects.requireNonNull(buf, "buf must not be null");
        Objects.requireNonNull(reg, "reg must not be null");
        Args.usable(stream);
        MpRequest r = sendPrepare(buf, peer, reg);
        try {
            sendPostAllOnStream(List.of(r), stream);
        } catch (RuntimeException e) {
            if (r.state() == RequestState.PREPARED) {
                posting.takeBack(r);
            }
            throw e;
        }
        return r;
    }

    MpRequest sendPrepare(MemorySegment buf, int peer, MpRegistration reg) {
        Objects.requireNonNull(buf, "buf must not be null");
        Objects.requireNonNull(reg, "reg must not be null");
        return sendvPrepare(List.of(buf), peer, reg);
    }

    MpRequest sendvPrepare(List<MemorySegment> bufs, int peer, MpRegistration reg) {
        Args.noNulls(bufs, "bufs");
        Objects.requireNonNull(reg, "reg must not be null");
        PeerLink l = posting.link(peer);
        long bytes = posting.checkBuffers(bufs, reg);
        MpRequest r = posting.newRequest(MpRequest.Kind.SEND, peer, bytes, false);
        RequestPosting.sendWr(l, r, Opcode.SEND, SendFlags.SIGNALED, bufs, reg);
        posting.prepare(l, r);
        return r;
    }

    void sendPostAllOnStream(List<MpRequest> requests, Stream stream) {
        Args.noNulls(requests, "requests");
        Args.usable(stream);
        List<Descriptor> d = new ArrayList<>(2 * requests.size());
        for (MpRequest r : requests) {
            requirePrepared(r);
            d.add(new Descriptor.Send(r.sendRequest()));
        }
        for (MpRequest r : requests) {
            if (r.waitRequest() != null) {
                d.add(new Descriptor.Wait(r.waitRequest()));
            }
        }
        stream.post(d);
        for (MpRequest r : requests) {
            r.posted();
            if (r.waitRequest() != null) {
                r.waitedOnStream();
            }
        }
    }

    void isendPostAllOnStream(List<MpRequest> requests, Stream stream) {
        Args.noNulls(requests, "requests");
        Args.usable(stream);
        List<Descriptor> d = new ArrayList<>(requests.size());
        for (MpRequest r : requests) {
            requirePrepared(r);
            d.add(new Descriptor.Send(r.sendRequest()));
        }
        stream.post(d);
        for (MpRequest r : requests) {
            r.posted();
        }
    }

    void waitAllOnStream(List<MpRequest> requests, Stream stream) {
        Args.noNulls(requests, "requests");
        Args.usable(stream);
        List<Descriptor> d = new ArrayList<>(requests.size());
        for (MpRequest r : requests) {
            Objects.requireNonNull(r, "request").checkStreamWaitable(context);
            d.add(new Descriptor.Wait(r.waitRequest()));
        }
        stream.post(d);
        for (MpRequest r : requests) {
            r.waitedOnStream();
        }
    }

    void wait32OnStream(MemoryWord word, int value, WaitCondition condition, Stream stream) {
        Objects.requireNonNull(word, "word must not be null");
        Objects.requireNonNull(condition, "condition must not be null");
        Objects.requireNonNull(stream, "stream must not be null");
        stream.post(List.of(new Descriptor.WaitValue32(word, value, condition, DescriptorFlags.WAIT_POST_FLUSH,
                context.wordWaitProgress())));
    }

    void write32OnStream(MemoryWord word, int value, Stream stream) {
        Objects.requireNonNull(word, "word must not be null");
        Objects.requireNonNull(stream, "stream must not be null");
        stream.post(List.of(new Descriptor.WriteValue32(word, value, DescriptorFlags.WRITE_PRE_BARRIER)));
    }

    /**
     * Rings a request this call prepared on a stream; a refused post (the stream is closed or failed, or sends
     * of the peer are posted to another executor and not rung yet) takes the request back first, so the refusal
     * leaves nothing behind.
     */
    void ringOnStream(MpRequest r, Stream stream) {
        try {
            isendPostAllOnStream(List.of(r), stream);
        } catch (RuntimeException e) {
            if (r.state() == RequestState.PREPARED) {
                posting.takeBack(r);
            }
            throw e;
        }
    }

    private void requirePrepared(MpRequest r) {
        Objects.requireNonNull(r, "request").checkPostable(context);
    }
}
