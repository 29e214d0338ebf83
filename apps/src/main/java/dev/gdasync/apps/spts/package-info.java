/**
 * {@code scripts/mprun -np N spts}: a synchronization-free sparse triangular solve over the shmem API (rows split over
 * the PEs, each solved value put with a signal to the PEs whose rows need it), checked by its residual.
 */
package dev.gdasync.apps.spts;
