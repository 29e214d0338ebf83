/**
 * The software NIC's device memory: the GPU a NIC uses and the CUDA copies its executors make, the device regions
 * it allocates and publishes to peers of the host through CUDA IPC (a handle file per region), and peers' regions
 * mapped here, retired safely under one copy lock.
 *
 * <p>Layer: below the shared-memory transport, which calls it, and above {@code swnic.core}, {@code cuda} and
 * {@code memory}, which it may call. Not exported.
 */
package dev.gdasync.gdsync.swnic.cudaipc;
