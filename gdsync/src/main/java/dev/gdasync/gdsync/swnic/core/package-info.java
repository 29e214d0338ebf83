/**
 * The software NIC's core, common to every transport: queue pairs ({@link dev.gdasync.gdsync.swnic.core.SwQueuePair}:
 * send queue, doorbell, the drain loop), completion queues, the receive queue, the memory-region table and its
 * keys, the shared-memory file layouts, the agent, the endpoint descriptor, and the seams the transports implement:
 * {@link dev.gdasync.gdsync.swnic.core.Connection} (executes a queue pair's requests; its answer says done, stalled
 * or in flight) and {@link dev.gdasync.gdsync.swnic.core.SwTransport}. The one
 * {@link dev.gdasync.gdsync.swnic.core.AccessChecker} decides every key, bound and access flag.
 *
 * <p>Layer: below the transports, which call it; it never names them (they reach it through the seams, and
 * {@link dev.gdasync.gdsync.swnic.core.NicCore} is given them). It may call {@code nic}, {@code memory},
 * {@code memop} and {@code concurrent}. Not exported: an implementation of the {@code swnic} provider.
 */
package dev.gdasync.gdsync.swnic.core;
