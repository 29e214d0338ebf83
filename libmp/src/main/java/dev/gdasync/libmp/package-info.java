/**
 * LibMP in Java (DESIGN.md §4): {@link dev.gdasync.libmp.Mp}, the flat facade that mirrors the {@code mp_*} calls
 * (two-sided, one-sided, on-stream, descriptor queues, KI export), and the requests, registrations and windows it
 * hands out. Matching is per peer and FIFO. The bodies of the facade's calls that are not its point-to-point core
 * live in package-private rooms beside it ({@code MpMemory}, {@code RequestPosting}, {@code StreamForms},
 * {@code OneSidedOps}, {@code RequestWaits}), which hold the Mp's {@code MpContext}, never the Mp.
 *
 * <p>Layer: above gdsync's NIC model. It may call {@code nic} (only: it gets its NIC from the provider its
 * configuration names), {@code memory}, {@code memop}, {@code descriptor}, {@code stream}, {@code ki} and
 * {@code concurrent}; never a provider ({@code swnic}) nor the CUDA layer. Nothing below calls it.
 */
package dev.gdasync.libmp;
