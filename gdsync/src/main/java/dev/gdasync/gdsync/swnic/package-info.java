/**
 * The software NIC, a {@link dev.gdasync.gdsync.nic.NicProvider} named {@code swnic}: the NIC model with no NIC,
 * between processes of one host (shared memory) or of many (UCX). This package is its API: the NIC
 * ({@link dev.gdasync.gdsync.swnic.SoftwareNic}), its settings ({@link dev.gdasync.gdsync.swnic.SwNicConfig},
 * {@link dev.gdasync.gdsync.swnic.Transport}) and the provider ({@link dev.gdasync.gdsync.swnic.SwNicProvider}).
 *
 * <p>Inside, it is split like UCT: a core ({@code swnic.core}: queue pairs, completion queues, the memory-region
 * table, layouts, the agent, the one access check) and one package per transport behind the core's
 * {@code Connection} and {@code SwTransport} seams ({@code swnic.shm}, {@code swnic.ucx}), with device memory
 * in {@code swnic.cudaipc}. {@code docs/architecture.md} walks one send through them.
 *
 * <p>Layer: a provider, above {@code nic}. {@code SoftwareNic} puts the core, the transports and the device memory
 * together, so this package may call all four subpackages, {@code nic}, {@code memory}, {@code memop},
 * {@code cuda} (device regions) and {@code concurrent}; nothing of gdsync calls it but applications and tests that
 * use the software NIC directly.
 */
package dev.gdasync.gdsync.swnic;
