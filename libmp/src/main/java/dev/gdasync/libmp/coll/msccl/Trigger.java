package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.stream.Stream;

import java.util.Objects;

/**
 * How a call is triggered: blocking (the caller's thread), on a host stream (SA) or by the blocks of a KI executor.
 *
 * @param stream the caller's stream, or null
 * @param ki     the KI launcher, or null
 */
record Trigger(Stream stream, MscclKiLauncher ki) {
    static final Trigger BLOCKING = new Trigger(null, null);

    /** @throws IllegalArgumentException if the stream is not an open, healthy host stream */
    static Trigger onStream(Stream stream) {
        Objects.requireNonNull(stream, "stream must not be null");
        if (!(stream instanceof HostStream)) {
            throw new IllegalArgumentException("the MSCCL stream interpreter runs its copies and reductions as host "
                    + "tasks, so it needs a host stream, got " + stream.name());
        }
        if (stream.isClosed() || stream.failure() != null) {
            throw new IllegalArgumentException("stream " + stream.name() + " is closed or failed");
        }
        return new Trigger(stream, null);
    }

    static Trigger onKi(MscclKiLauncher ki) {
        Objects.requireNonNull(ki, "launcher must not be null");
        Objects.requireNonNull(ki.executor(), "the launcher's executor must not be null");
        return new Trigger(null, ki);
    }

    /** @return {@link CallRecord#BLOCKING}, {@link CallRecord#STREAM} or {@link CallRecord#KI} */
    int code() {
        return stream != null ? CallRecord.STREAM : ki != null ? CallRecord.KI : CallRecord.BLOCKING;
    }
}
