/**
 * {@code scripts/mprun -np 2 shmembench}: latencies of the shmem API (put, get, fetch-add, put-with-signal ping-pong)
 * from the CPU and from a stream, side by side, in the spirit of NVSHMEM's perftests.
 */
package dev.gdasync.apps.shmembench;
