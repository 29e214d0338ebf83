/*
 * Open MPI's collectives timed as gdasync's `collectives --bench` times its own: the reference its rows are divided
 * by. Run by the benchmark (mode ompi) under Open MPI's mpirun with its shared-memory transport and its tuned
 * collectives, as many ranks as the gdasync job; built with mpicc at first use.
 *
 *   mpirun -np N ... ompi-coll REPS COLL:BYTES:ITERS:WARMUP...
 *
 * Every collective is on int32 data; BYTES is what a rank puts in:
 *   allreduce  MPI_Allreduce SUM, in place (MPI_IN_PLACE), BYTES the vector
 *   alltoall   MPI_Alltoall, out of place, BYTES the whole send buffer (BYTES / N to each rank)
 *   allgather  MPI_Allgather, in place (the rank's block of the receive buffer), BYTES the rank's block
 *   bcast      MPI_Bcast from rank 0, BYTES the buffer
 *   barrier    MPI_Barrier, BYTES 0
 * The job first runs barriers for 0.3 s (it has just started). Each case runs one untimed warm-up rep of WARMUP
 * collectives, then REPS reps. A rep: every rank fills its input, MPI_Barrier, ITERS
 * collectives timed, the slowest rank's microseconds per collective (MPI_Allreduce MAX); then one collective on fresh
 * data, checked element by element on every rank (the barrier: the last rank enters it a millisecond late, and no
 * rank may leave it before that). Rank 0 prints one line per case:
 *
 *   COLLECTIVES-OMPI-RESULT COLL BYTES ITERS US_REP1 US_REP2 ...
 *
 * A wrong result prints "COLLECTIVES-OMPI-ERROR rank R: ..." on standard error and aborts the job with status 3; any
 * MPI error aborts it (MPI's default handler).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RESULT "COLLECTIVES-OMPI-RESULT"
#define ERROR "COLLECTIVES-OMPI-ERROR"
#define BARRIER_SKEW_NS 1000000L
#define SETTLE_NS 300000000L

enum coll { ALLREDUCE, ALLTOALL, ALLGATHER, BCAST, BARRIER };
static const char *const NAMES[] = {"allreduce", "alltoall", "allgather", "bcast", "barrier"};

struct bench_case {
    enum coll coll;
    long bytes;
    long iters;
    long warmup;
};

static int rank, size;

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t) t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The value of element i of rank r's input, as the Java side computes it (int arithmetic that wraps). */
static int32_t in(int r, long i) {
    return (int32_t) ((uint32_t) r * 100000u + (uint32_t) i * 3u + 1u);
}

static void fail(const char *what) {
    fprintf(stderr, ERROR " rank %d: %s\n", rank, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static void usage(const char *why) {
    if (rank == 0) {
        fprintf(stderr, "ompi-coll: %s\nusage: mpirun -np N ... ompi-coll REPS COLL:BYTES:ITERS:WARMUP...\n", why);
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static struct bench_case parse(const char *arg) {
    struct bench_case c;
    char name[32];
    if (sscanf(arg, "%31[a-z]:%ld:%ld:%ld", name, &c.bytes, &c.iters, &c.warmup) != 4 || c.bytes < 0 || c.iters < 1
            || c.warmup < 1) {
        usage("not COLL:BYTES:ITERS:WARMUP");
    }
    for (int k = 0; k <= BARRIER; k++) {
        if (strcmp(name, NAMES[k]) == 0) {
            c.coll = (enum coll) k;
            return c;
        }
    }
    usage("unknown collective");
    return c;
}

/* The call's count: elements per rank pair (alltoall), per rank (allgather), of the vector (allreduce, bcast). */
static long count_of(const struct bench_case *c) {
    switch (c->coll) {
    case ALLTOALL: return c->bytes / 4 / size;
    case BARRIER: return 0;
    default: return c->bytes / 4;
    }
}

static void fill(enum coll coll, int32_t *a, int32_t *b, long count) {
    switch (coll) {
    case ALLREDUCE:
        for (long i = 0; i < count; i++) a[i] = in(rank, i);
        break;
    case ALLTOALL:
        for (long i = 0; i < count * size; i++) a[i] = in(rank, i);
        break;
    case ALLGATHER:
        for (long i = 0; i < count; i++) b[rank * count + i] = in(rank, i);
        break;
    case BCAST:
        if (rank == 0) {
            for (long i = 0; i < count; i++) a[i] = in(0, i);
        } else {
            memset(a, 0xff, (size_t) count * 4);
        }
        break;
    case BARRIER:
        break;
    }
}

static void once(enum coll coll, int32_t *a, int32_t *b, long count) {
    switch (coll) {
    case ALLREDUCE: MPI_Allreduce(MPI_IN_PLACE, a, (int) count, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(a, (int) count, MPI_INT32_T, b, (int) count, MPI_INT32_T, MPI_COMM_WORLD); break;
    case ALLGATHER:
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, (int) count, MPI_INT32_T, MPI_COMM_WORLD);
        break;
    case BCAST: MPI_Bcast(a, (int) count, MPI_INT32_T, 0, MPI_COMM_WORLD); break;
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    }
}

/*
 * A fresh job: barriers for SETTLE_NS on rank 0's clock before the first case, so that the launcher and the ranks
 * have finished starting (the Java ranks the job is compared with have long been running).
 */
static void settle(void) {
    int64_t until = now_ns() + SETTLE_NS;
    int go = 1;
    while (go) {
        for (int i = 0; i < 100; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
        }
        go = rank == 0 && now_ns() < until;
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
}

static void check_barrier(void) {
    if (rank == size - 1) {
        int64_t until = now_ns() + BARRIER_SKEW_NS;
        struct timespec d = {0, BARRIER_SKEW_NS};
        while (now_ns() < until) {
            nanosleep(&d, NULL);
        }
    }
    int64_t t[2];
    t[0] = now_ns();
    MPI_Barrier(MPI_COMM_WORLD);
    t[1] = -now_ns();
    MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (-t[1] < t[0]) {
        char what[128];
        snprintf(what, sizeof what, "barrier: a rank left it %lld ns before the last one entered",
                 (long long) (t[0] + t[1]));
        fail(what);
    }
}

static void check(enum coll coll, int32_t *a, int32_t *b, long count) {
    if (coll == BARRIER) {
        check_barrier();
        return;
    }
    fill(coll, a, b, count);
    once(coll, a, b, count);
    long n = coll == ALLTOALL || coll == ALLGATHER ? count * size : count;
    for (long i = 0; i < n; i++) {
        int32_t want, got = coll == ALLREDUCE || coll == BCAST ? a[i] : b[i];
        switch (coll) {
        case ALLREDUCE: {
            uint32_t s = 0;
            for (int r = 0; r < size; r++) s += (uint32_t) in(r, i);
            want = (int32_t) s;
            break;
        }
        case ALLTOALL: want = in((int) (i / count), rank * count + i % count); break;
        case ALLGATHER: want = in((int) (i / count), i % count); break;
        default: want = in(0, i); break;
        }
        if (got != want) {
            char what[160];
            snprintf(what, sizeof what, "%s of %ld int32: element %ld is %d, want %d", NAMES[coll], count, i,
                     (int) got, (int) want);
            fail(what);
        }
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        usage("no cases");
    }
    long reps = atol(argv[1]);
    if (reps < 1) {
        usage("REPS must be positive");
    }
    int ncases = argc - 2;
    struct bench_case *cases = calloc((size_t) ncases, sizeof *cases);
    long max = 16;
    for (int k = 0; k < ncases; k++) {
        cases[k] = parse(argv[k + 2]);
        max = cases[k].bytes > max ? cases[k].bytes : max;
    }
    int32_t *a = malloc((size_t) max), *b = malloc((size_t) max * (size_t) size);
    double *us = calloc((size_t) reps, sizeof *us);
    if (!cases || !a || !b || !us) {
        fail("out of memory");
    }
    memset(a, 0, (size_t) max);
    memset(b, 0, (size_t) max * (size_t) size);
    settle();
    for (int k = 0; k < ncases; k++) {
        struct bench_case *c = &cases[k];
        long count = count_of(c);
        if (c->coll != BARRIER && count < 1) {
            usage("a case gives a rank no int32");
        }
        for (long rep = -1; rep < reps; rep++) {
            fill(c->coll, a, b, count);
            MPI_Barrier(MPI_COMM_WORLD);
            long calls = rep < 0 ? c->warmup : c->iters;
            int64_t t0 = now_ns();
            for (long i = 0; i < calls; i++) {
                once(c->coll, a, b, count);
            }
            double mine = (double) (now_ns() - t0) / 1e3 / (double) calls, slowest;
            MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (rep >= 0) {
                us[rep] = slowest;
            }
            check(c->coll, a, b, count);
        }
        if (rank == 0) {
            printf(RESULT " %s %ld %ld", NAMES[c->coll], c->bytes, c->iters);
            for (long r = 0; r < reps; r++) {
                printf(" %.4f", us[r]);
            }
            printf("\n");
            fflush(stdout);
        }
    }
    free(us);
    free(b);
    free(a);
    free(cases);
    MPI_Finalize();
    return 0;
}
