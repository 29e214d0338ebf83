package dev.gdasync.gdsync.memop;

/**
 * What a host executor calls after storing a doorbell value.
 *
 * <p>A GPU or a kernel thread rings a doorbell with a plain store, which the provider's agent finds by
 * polling. A host executor (a host stream, the CPU) is a thread of this process, so it also calls
 * the provider: the work then runs at once, on the ringing thread, with no polling delay.
 */
@FunctionalInterface
public interface Doorbell {
    /** Called after the doorbell word was written; runs the work the doorbell announced. */
    void ring();
}
