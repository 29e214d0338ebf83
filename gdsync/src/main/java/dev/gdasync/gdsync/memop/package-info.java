/**
 * Memops, the only work a stream or a KI agent executes for the network (DESIGN.md §3.2): WRITE32/64 (with an
 * optional {@link dev.gdasync.gdsync.memop.Doorbell} that host executors call after storing a doorbell), WAIT32/64
 * with GEQ/EQ/AND/NOR (with an optional {@link dev.gdasync.gdsync.memop.WaitProgress} that host executors run
 * between looks), WRITE_MEMORY and BARRIER; {@link dev.gdasync.gdsync.memop.HostMemops} executes them on a CPU
 * thread with timeouts that name the word.
 *
 * <p>Layer: gdsync's base. It may call {@code concurrent} (idle strategies); the NIC model, streams and KI tables
 * above produce and execute memops.
 */
package dev.gdasync.gdsync.memop;
