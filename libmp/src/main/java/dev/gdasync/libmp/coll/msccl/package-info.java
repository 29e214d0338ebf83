/**
 * MSCCL-IR collective programs: loading and validation ({@link dev.gdasync.libmp.coll.msccl.MscclPrograms}), and
 * {@link dev.gdasync.libmp.coll.msccl.MscclRuntime}, which runs a selected program's part of this rank blocking (the
 * host interpreter: the caller's thread runs the thread blocks in turn; on one host messages go straight through
 * mapped memory, elsewhere through the Mp's one-sided puts), on a host stream (SA) or from a KI executor, with the
 * built-in collectives as the fallback; the tables the CUDA kernel interpreter reads.
 *
 * <p>Depends on {@code dev.gdasync.libmp} (Mp, registrations, windows, {@code Mp.peerMemory}), {@code coll}
 * (communicators and their typed built-ins), {@code coll.reduce}, {@code shmem} (the KI form's heap) and gdsync's
 * memops, streams and idlers. See {@code docs/msccl.md}.
 */
package dev.gdasync.libmp.coll.msccl;
