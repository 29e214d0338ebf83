/*
 * An MPI ping-pong in C: rank 0 sends BYTES with MPI_Send and waits for the reply with MPI_Recv, rank 1 echoes.
 * The reference for gdasync's host mode on one host: run by gdasync's pingpong (mode ompi) under Open MPI's
 * mpirun with its shared-memory transport; built with mpicc at first use.
 *
 *   mpirun -np 2 ... ompi BYTES ITERS WARMUP CPU0 CPU1
 *
 * Rank r pins itself to CPU r (-1: not pinned), runs WARMUP untimed round trips, then ITERS timed ones. Rank 0
 * prints "total_ns N" (first send to last reply), "trips ITERS", then every timed round trip in nanoseconds, one
 * a line. Any MPI error aborts the job (MPI's default handler).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 6 || size != 2) {
        if (rank == 0) {
            fprintf(stderr, "usage: mpirun -np 2 ompi BYTES ITERS WARMUP CPU0 CPU1\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long bytes = atol(argv[1]), iters = atol(argv[2]), warmup = atol(argv[3]);
    int cpu = atoi(argv[4 + rank]);
    if (bytes < 1 || iters < 1 || warmup < 0) {
        if (rank == 0) {
            fprintf(stderr, "ompi: BYTES and ITERS must be positive, WARMUP not negative\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            perror("ompi: sched_setaffinity");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    unsigned char *out = malloc((size_t) bytes), *in = malloc((size_t) bytes);
    uint64_t *trips = rank == 0 ? calloc((size_t) iters, sizeof(uint64_t)) : NULL;
    if (!out || !in || (rank == 0 && !trips)) {
        fprintf(stderr, "ompi: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long i = 0; i < bytes; i++) {
        out[i] = (unsigned char) i;
    }
    int peer = 1 - rank;
    long total = warmup + iters;
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t start = 0, last = 0;
    for (long i = 0; i < total; i++) {
        if (rank == 0) {
            if (i == warmup) {
                start = last = now_ns();
            }
            MPI_Send(out, (int) bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(in, (int) bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i >= warmup) {
                uint64_t t = now_ns();
                trips[i - warmup] = t - last;
                last = t;
            }
        } else {
            MPI_Recv(in, (int) bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(in, (int) bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        }
    }
    int status = 0;
    if (rank == 0) {
        if (memcmp(in, out, (size_t) bytes) != 0) {
            fprintf(stderr, "ompi: the last reply does not carry the message sent\n");
            status = 1;
        } else {
            printf("total_ns %llu\ntrips %ld\n", (unsigned long long) (last - start), iters);
            for (long i = 0; i < iters; i++) {
                printf("%llu\n", (unsigned long long) trips[i]);
            }
            status = fflush(stdout) == 0 ? 0 : 1;
        }
    }
    MPI_Finalize();
    return status;
}
