package dev.gdasync.libmp;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.DescriptorFlags;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.stream.Stream;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A descriptor queue (LibMP's {@code mp_desc_queue_t}): sends, completion waits and word waits and
 * writes collected on the CPU, then posted to a stream as one batch. Requests change state when the
 * queue is posted, not when they are added, so a refused post leaves them as they were.
 */
public final class MpDescQueue implements Staging {
    private final MpContext mp;
    private final List<Descriptor> descriptors = new ArrayList<>();
    private final List<MpRequest> sends = new ArrayList<>();
    private final List<MpRequest> waits = new ArrayList<>();

    MpDescQueue(MpContext mp) {
        this.mp = mp;
    }

    /**
     * Adds the ring of a prepared send or put ({@code mp_desc_queue_add_send}).
     *
     * @param r a PREPARED request
     * @return this
     * @throws NullPointerException     if the request is null
     * @throws IllegalArgumentException if it is another Mp's
     * @throws IllegalStateException    if it is not PREPARED, or its send is already in a queue or export
     */
    public MpDescQueue addSend(MpRequest r) {
        Objects.requireNonNull(r, "request must not be null").stage(mp, this, true);
        descriptors.add(new Descriptor.Send(r.sendRequest()));
        sends.add(r);
        return this;
    }

    /**
     * Adds a wait for a send's, put's or get's completion ({@code mp_desc_queue_add_wait_send}).
     *
     * @param r a send, put or get, posted or in this queue
     * @return this
     * @throws NullPointerException     if the request is null
     * @throws IllegalArgumentException if it is a receive, or another Mp's
     * @throws IllegalStateException    if its completion cannot be waited on, or is already in a queue or export
     */
    public MpDescQueue addWaitSend(MpRequest r) {
        Objects.requireNonNull(r, "request must not be null");
        if (r.kind() == MpRequest.Kind.RECV) {
            throw new IllegalArgumentException(r.describe() + " is a receive: use addWaitRecv");
        }
        return addWait(r);
    }

    /**
     * Adds a wait for a receive's completion ({@code mp_desc_queue_add_wait_recv}).
     *
     * @param r a posted receive
     * @return this
     * @throws NullPointerException     if the request is null
     * @throws IllegalArgumentException if it is not a receive, or another Mp's
     * @throws IllegalStateException    if its completion cannot be waited on, or is already in a queue or export
     */
    public MpDescQueue addWaitRecv(MpRequest r) {
        Objects.requireNonNull(r, "request must not be null");
        if (r.kind() != MpRequest.Kind.RECV) {
            throw new IllegalArgumentException(r.describe() + " is not a receive: use addWaitSend");
        }
        return addWait(r);
    }

    private MpDescQueue addWait(MpRequest r) {
        r.stage(mp, this, false);
        descriptors.add(new Descriptor.Wait(r.waitRequest()));
        waits.add(r);
        return this;
    }

    /**
     * Adds a wait until a word satisfies a condition ({@code mp_desc_queue_add_wait_value32}).
     *
     * @param word      the word
     * @param value     the operand
     * @param condition the condition
     * @return this
     * @throws NullPointerException     if the word or the condition is null
     * @throws IllegalArgumentException if the word is not 32-bit
     */
    public MpDescQueue addWaitValue32(MemoryWord word, int value, WaitCondition condition) {
        Objects.requireNonNull(word, "word must not be null");
        Objects.requireNonNull(condition, "condition must not be null");
        descriptors.add(new Descriptor.WaitValue32(word, value, condition, DescriptorFlags.WAIT_POST_FLUSH,
                mp.wordWaitProgress()));
        return this;
    }

    /**
     * Adds a write of a word ({@code mp_desc_queue_add_write_value32}).
     *
     * @param word  the word
     * @param value the value
     * @return this
     * @throws NullPointerException     if the word is null
     * @throws IllegalArgumentException if the word is not 32-bit
     */
    public MpDescQueue addWriteValue32(MemoryWord word, int value) {
        Objects.requireNonNull(word, "word must not be null");
        descriptors.add(new Descriptor.WriteValue32(word, value, DescriptorFlags.WRITE_PRE_BARRIER));
        return this;
    }

    /** Drops everything queued without posting it; the requests can be queued again. */
    public void clear() {
        for (MpRequest r : sends) {
            r.unstage(this, true);
        }
        for (MpRequest r : waits) {
            r.unstage(this, false);
        }
        descriptors.clear();
        sends.clear();
        waits.clear();
    }

    /** @return the number of descriptors queued */
    public int size() {
        return descriptors.size();
    }

    /**
     * Posts everything as one batch on a stream, then empties the queue ({@code mp_desc_queue_post_on_stream}).
     *
     * @param stream the stream
     * @throws NullPointerException  if the stream is null; nothing is posted and the queue keeps its content
     * @throws IllegalStateException if the stream is closed or refuses the batch; the queue keeps its content
     * @throws dev.gdasync.gdsync.stream.StreamFailedException if the stream failed; the queue keeps its content
     */
    public void postOnStream(Stream stream) {
        Objects.requireNonNull(stream, "stream must not be null");
        for (MpRequest r : sends) {
            r.checkStagedPost(this, true);
        }
        for (MpRequest r : waits) {
            r.checkStagedPost(this, false);
        }
        stream.post(descriptors);
        // Sends first: a request whose send and wait are both here goes PREPARED → PENDING_NOWAIT → PENDING.
        for (MpRequest r : sends) {
            r.unstage(this, true);
            r.posted();
        }
        for (MpRequest r : waits) {
            r.unstage(this, false);
            r.waitedOnStream();
        }
        descriptors.clear();
        sends.clear();
        waits.clear();
    }
}
