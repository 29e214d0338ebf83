/**
 * {@code scripts/mprun -np N jacobi2d}: Jacobi relaxation of a 2D grid with its rows split over the PEs of the shmem
 * API ({@code dev.gdasync.libmp.shmem}), halo rows exchanged by put-with-signal from the CPU (host) or from a stream
 * (sa), the result compared element by element with the 1-PE grid.
 */
package dev.gdasync.apps.jacobi2d;
