/**
 * Streams: ordered queues of work executed by something other than the caller
 * ({@link dev.gdasync.gdsync.stream.Stream}). {@link dev.gdasync.gdsync.stream.HostStream} runs memops, host tasks
 * and events on an agent thread of its own; the GPU's stream is {@code dev.gdasync.gdsync.cuda.CudaStream}.
 *
 * <p>Layer: above {@code descriptor}, {@code nic}, {@code memop} and {@code concurrent}, which it may call; libmp
 * and applications call it. A stream rings a software NIC's doorbell only through the memop's
 * {@link dev.gdasync.gdsync.memop.Doorbell}, never by naming a provider.
 */
package dev.gdasync.gdsync.stream;
