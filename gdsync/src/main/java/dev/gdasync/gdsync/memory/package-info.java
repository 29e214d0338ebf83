/**
 * Memory the NIC model works on: {@link dev.gdasync.gdsync.memory.Region} (a segment and its device-visible
 * address), its kinds, and {@link dev.gdasync.gdsync.memory.HostRegion}s mapped from files of a per-job
 * shared-memory directory ({@link dev.gdasync.gdsync.memory.ShmDirectory}) so that peers on the node can map them.
 *
 * <p>Layer: gdsync's base, beside {@code memop}. It calls only the JDK (and FFM for mapping files); everything
 * above may call it.
 */
package dev.gdasync.gdsync.memory;
