/**
 * The host engine's shared-memory path: collectives of a communicator whose members all run on this host (their
 * software NIC maps one another's memory) move through a small area each member exposes to the others, with no
 * message, no NIC and no other thread involved, as Open MPI's {@code coll/sm} and UCC's shared-memory team do.
 * {@link dev.gdasync.libmp.coll.shm.ShmChannel} is one communicator's set of areas and its sequence of
 * collectives; each collective is a {@link dev.gdasync.libmp.coll.shm.ShmTask} (publish, wait for every member's
 * arrival and agreement, copy or reduce, and for large messages wait until the others finished reading this rank's
 * buffers). Small payloads travel inside the area (in the header line, or in one of four rotating slots); large ones
 * are read once, straight from the owner's registered buffer mapped here ({@link
 * dev.gdasync.libmp.Mp#peerMemory}).
 *
 * <p>Depends on {@code dev.gdasync.libmp} (Mp, registrations) and gdsync's idlers only; {@code coll} uses it, never
 * the other way round. Not exported. See {@code docs/collectives.md} ("The shared-memory path").
 */
package dev.gdasync.libmp.coll.shm;
