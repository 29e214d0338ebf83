package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.MpDescQueue;
import dev.gdasync.libmp.MpRegistration;

import java.lang.foreign.MemorySegment;

/**
 * Messages in host shared memory ({@code --buffers host}): producing is writing the pattern, consuming is
 * checking it and then the compute task, on the CPU or as host tasks of a {@link HostStream}.
 */
final class HostMessages implements Messages {
    private final Pair pair;
    private final boolean validate;
    private final Compute compute;
    private final String where;

    HostMessages(Pair pair, PingPongOptions options, String mode) {
        this.pair = pair;
        this.validate = options.validate();
        this.compute = new Compute(options.computeMicros());
        this.where = mode + " mode, rank " + pair.rank;
    }

    @Override
    public MemorySegment send(int bytes) {
        return pair.send(bytes);
    }

    @Override
    public MemorySegment recv(int bytes) {
        return pair.recv(bytes);
    }

    @Override
    public MpRegistration reg() {
        return pair.reg;
    }

    @Override
    public Stream newStream(String name) {
        return HostStream.create(name);
    }

    @Override
    public void produce(int bytes, int i) {
        if (validate) {
            Pattern.fill(pair.send(bytes), i, pair.rank);
        }
    }

    @Override
    public void consume(int bytes, int i, long received) {
        if (validate) {
            Pattern.check(pair.recv(bytes), i, pair.peer, received, where);
        }
        if (compute.isEnabled()) {
            compute.run();
        }
    }

    @Override
    public void produceOn(MpDescQueue queue, Stream stream, int bytes, int i) {
        if (validate) {
            Messages.flush(queue, stream);
            MemorySegment out = pair.send(bytes);
            stream.launch(() -> Pattern.fill(out, i, pair.rank));
        }
    }

    @Override
    public void consumeOn(MpDescQueue queue, Stream stream, int bytes, int i) {
        if (validate) {
            Messages.flush(queue, stream);
            MemorySegment in = pair.recv(bytes);
            stream.launch(() -> Pattern.check(in, i, pair.peer, -1, where));
        }
        if (compute.isEnabled()) {
            Messages.flush(queue, stream);
            stream.launch(compute);
        }
    }

    @Override
    public String describe() {
        return "host buffers";
    }
}
