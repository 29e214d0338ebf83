package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.MpDescQueue;
import dev.gdasync.libmp.MpRegistration;

import java.lang.foreign.MemorySegment;

/**
 * Where a rank's messages live and what happens to each one besides travelling: the pattern written before a
 * send and checked after a receive ({@code --validate}), the compute between them ({@code --compute-us}), and,
 * with GPU buffers, the kernel that produces each message. The loops ({@link HostLoop}, {@link StreamLoop})
 * call it at two points per message, synchronously on the CPU or queued on a stream:
 * <ul>
 * <li><b>produce</b> message {@code i}, before its send;</li>
 * <li><b>consume</b> message {@code i}, after its receive completed.</li>
 * </ul>
 * {@link HostMessages} keeps them in host memory; {@link GpuMessages} in GPU memory.
 */
interface Messages extends AutoCloseable {
    /**
     * @param bytes the message size
     * @return the send buffer's first {@code bytes} (with GPU buffers, an address-only segment)
     */
    MemorySegment send(int bytes);

    /**
     * @param bytes the message size
     * @return the receive buffer's first {@code bytes}
     */
    MemorySegment recv(int bytes);

    /** @return the registration holding both buffers */
    MpRegistration reg();

    /**
     * Makes the stream that carries {@code sa}.
     *
     * @param name its name
     * @return a stream the Mp's stream calls accept
     */
    Stream newStream(String name);

    /**
     * Produces message {@code i} on the CPU, before a CPU send; returns when it is in the send buffer.
     *
     * @param bytes the message size
     * @param i     the iteration
     */
    void produce(int bytes, int i);

    /**
     * Consumes message {@code i} on the CPU, after its receive completed.
     *
     * @param bytes    the message size
     * @param i        the iteration
     * @param received the byte count the receive reported, or -1 when unknown
     */
    void consume(int bytes, int i, long received);

    /**
     * Queues the production of message {@code i} on a stream, after what the queue collected so far.
     *
     * @param queue  the descriptors collected and not yet posted (posted first when work must follow them)
     * @param stream the stream from {@link #newStream}
     * @param bytes  the message size
     * @param i      the iteration
     */
    void produceOn(MpDescQueue queue, Stream stream, int bytes, int i);

    /**
     * Queues the consumption of message {@code i} on a stream, after its receive's wait in the queue.
     *
     * @param queue  the descriptors collected and not yet posted
     * @param stream the stream from {@link #newStream}
     * @param bytes  the message size
     * @param i      the iteration
     */
    void consumeOn(MpDescQueue queue, Stream stream, int bytes, int i);

    /** @return what the mode's banner says about the buffers, e.g. "host buffers" */
    String describe();

    @Override
    default void close() {
    }

    /**
     * Posts what the queue collected, so that work queued on the stream next runs after it.
     *
     * @param queue  the queue
     * @param stream the stream
     */
    static void flush(MpDescQueue queue, Stream stream) {
        if (queue.size() > 0) {
            queue.postOnStream(stream);
        }
    }
}
