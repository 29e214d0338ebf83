/**
 * {@code scripts/mprun -np 2 gabench}: put and get latency and bandwidth of global-array patches (contiguous and
 * strided, staged and from a registered buffer) from rank 0 to rank 1's block, side by side with libmp's raw
 * {@code iput}/{@code iget} of the same bytes and with MPJ Express's two-sided {@code Send}/{@code Recv}.
 */
package dev.gdasync.apps.gabench;
