/**
 * How the ranks of a job meet: the launcher's environment, Slurm or Open MPI's {@code mpirun} at a TCP
 * rendezvous guarded by a per-job secret, MPJ Express, or ranks as threads of one JVM
 * ({@link dev.gdasync.libmp.bootstrap.Bootstrap}).
 *
 * <p>Layer: libmp's base; it calls only the JDK (and MPJ Express for its bootstrap). {@code Mp} calls it.
 */
package dev.gdasync.libmp.bootstrap;
