/**
 * {@code scripts/mprun -np N collectives}: runs MSCCL-IR programs and the built-in collectives and checks their
 * results exactly ({@link dev.gdasync.apps.collectives.CollectivesApp}), and with {@code --bench} measures
 * allreduce and alltoall with programs, built-ins and MPJ Express side by side.
 */
package dev.gdasync.apps.collectives;
