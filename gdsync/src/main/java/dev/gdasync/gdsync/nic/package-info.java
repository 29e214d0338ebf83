/**
 * The NIC model every provider exposes (DESIGN.md §3.3), and the seam between libmp and the providers: a
 * {@link dev.gdasync.gdsync.nic.Nic} with queue pairs, completion queues and memory regions, work requests,
 * prepared sends ({@link dev.gdasync.gdsync.nic.SendRequest}) and waits ({@link dev.gdasync.gdsync.nic.WaitRequest})
 * that carry the memops a stream or kernel executes, and the provider lookup:
 * {@link dev.gdasync.gdsync.nic.NicProvider}s found by {@link java.util.ServiceLoader} and named by a
 * {@link dev.gdasync.gdsync.nic.NicConfig} ({@link dev.gdasync.gdsync.nic.NicProviders}).
 *
 * <p>Layer: above {@code memory} and {@code memop}, which it may call; it knows no provider. Providers
 * ({@code swnic}) implement it; {@code descriptor}, {@code stream}, {@code ki} and libmp call it.
 */
package dev.gdasync.gdsync.nic;
