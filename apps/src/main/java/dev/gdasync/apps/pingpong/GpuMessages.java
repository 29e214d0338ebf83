package dev.gdasync.apps.pingpong;

import dev.gdasync.gdsync.cuda.CudaStream;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.MpDescQueue;
import dev.gdasync.libmp.MpRegistration;

import java.lang.foreign.MemorySegment;

/**
 * Messages in GPU memory ({@code --buffers gpu}), as LibMP's GPU ping-pongs use them: a compute kernel of
 * {@code --compute-us} (empty without it) produces each message before its send.
 * <ul>
 * <li>On the CPU ({@code host}): the kernel is launched, the CUDA stream synchronized, and only then may the CPU
 *     send: the MPI model's {@code cudaStreamSynchronize} before every send.</li>
 * <li>On a CUDA stream ({@code sa}): the kernel is queued before the send's doorbell write, in stream order; the
 *     CPU never waits for it.</li>
 * </ul>
 * With {@code --validate} the pattern is written into a page-locked staging buffer and copied to the GPU before
 * the kernel, and a received message is copied back to host memory and checked: synchronous copies on the CPU,
 * copies and host tasks in stream order on a stream.
 */
final class GpuMessages implements Messages {
    private final Pair pair;
    private final GpuBuffers gpu;
    private final boolean validate;
    private final long computeNanos;
    private final String where;

    GpuMessages(Pair pair, GpuBuffers gpu, PingPongOptions options, String mode) {
        this.pair = pair;
        this.gpu = gpu;
        this.validate = options.validate();
        this.computeNanos = Math.round(options.computeMicros() * 1000);
        this.where = mode + " mode (gpu buffers), rank " + pair.rank;
    }

    @Override
    public MemorySegment send(int bytes) {
        return gpu.send(bytes);
    }

    @Override
    public MemorySegment recv(int bytes) {
        return gpu.recv(bytes);
    }

    @Override
    public MpRegistration reg() {
        return gpu.reg;
    }

    @Override
    public Stream newStream(String name) {
        return CudaStream.create(name, gpu.context, gpu.map, WaitPolicy.defaults());
    }

    @Override
    public void produce(int bytes, int i) {
        if (validate) {
            MemorySegment staging = gpu.stagingOut.asSlice(0, bytes);
            Pattern.fill(staging, i, pair.rank);
            gpu.region.copyFromHost(0, staging);
        }
        gpu.kernel.launch(gpu.hostModeStream, computeNanos);
        gpu.hostModeStream.synchronize();
    }

    @Override
    public void consume(int bytes, int i, long received) {
        if (validate) {
            MemorySegment staging = gpu.stagingIn.asSlice(0, bytes);
            gpu.region.copyToHost(gpu.recvOffset(), staging);
            Pattern.check(staging, i, pair.peer, received, where);
        }
    }

    @Override
    public void produceOn(MpDescQueue queue, Stream stream, int bytes, int i) {
        CudaStream cuda = (CudaStream) stream;
        Messages.flush(queue, stream);
        if (validate) {
            MemorySegment staging = gpu.stagingOut.asSlice(0, bytes);
            cuda.launch(() -> Pattern.fill(staging, i, pair.rank));
            cuda.copyHostToDevice(gpu.sendAddress(), staging);
        }
        gpu.kernel.launch(cuda, computeNanos);
    }

    @Override
    public void consumeOn(MpDescQueue queue, Stream stream, int bytes, int i) {
        if (validate) {
            CudaStream cuda = (CudaStream) stream;
            Messages.flush(queue, stream);
            MemorySegment staging = gpu.stagingIn.asSlice(0, bytes);
            cuda.copyDeviceToHost(staging, gpu.recvAddress());
            cuda.launch(() -> Pattern.check(staging, i, pair.peer, -1, where));
        }
    }

    @Override
    public String describe() {
        return "gpu buffers on " + gpu.context.device() + ", a " + computeNanos / 1000.0 + " us compute kernel before each send";
    }
}
