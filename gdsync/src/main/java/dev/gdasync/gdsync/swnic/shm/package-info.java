/**
 * The software NIC's shared-memory transport: peers on this host. A connection maps the peer's queue-pair file and
 * node file, and the executor of a request copies its bytes straight into the peer's memory (the sender-driven
 * single copy), checked by the core's access checker; the transport watches peers' liveness.
 *
 * <p>Layer: a transport, above {@code swnic.core} (its seams) and {@code swnic.cudaipc} (device memory of peers on
 * this host), which it may call, with {@code nic} and {@code memory}. Not exported.
 */
package dev.gdasync.gdsync.swnic.shm;
