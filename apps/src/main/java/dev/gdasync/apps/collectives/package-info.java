/**
 * {@code scripts/mprun -np N collectives}: runs MSCCL-IR programs and the built-in collectives and checks their
 * results exactly ({@link dev.gdasync.apps.collectives.CollectivesApp}), and with {@code --bench} measures
 * allreduce, alltoall, allgather, bcast and barrier with programs, built-ins, MPJ Express and Open MPI (a C program
 * beside the ping-pong's C peers) side by side, every row with its ratio to Open MPI's.
 */
package dev.gdasync.apps.collectives;
