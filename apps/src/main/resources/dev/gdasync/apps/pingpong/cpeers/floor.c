/*
 * The floor of a shared-memory ping-pong: two processes on one host hand a message back and forth through one
 * shared mapping, each spinning on a sequence number the other writes after the payload. Nothing of a messaging
 * library is on the path: no queue, no matching, no completion, just the copy, one release store and the
 * acquire loads that see it. Part of gdasync's pingpong (mode floor); built with gcc at first use.
 *
 *   floor BYTES ITERS WARMUP CPU0 CPU1
 *
 * CPU0 and CPU1 are the CPUs the two processes are pinned to (-1: not pinned). Prints "total_ns N" (from the first
 * send of the timed iterations to the last reply), then "trips ITERS", then every timed round trip in nanoseconds,
 * one a line. Exits 1 with a message on standard error when something fails; the child dies with the parent.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One direction: the sequence number and the payload start in one cache line (like a "fast box"). */
struct box {
    volatile uint64_t seq;
    unsigned char data[];
};

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

static void pin(int cpu) {
    if (cpu < 0) {
        return;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("floor: sched_setaffinity");
        exit(1);
    }
}

static void put(struct box *b, const unsigned char *src, size_t bytes, uint64_t seq) {
    memcpy(b->data, src, bytes);
    __atomic_store_n(&b->seq, seq, __ATOMIC_RELEASE);
}

static void take(struct box *b, unsigned char *dst, size_t bytes, uint64_t seq) {
    while (__atomic_load_n(&b->seq, __ATOMIC_ACQUIRE) != seq) {
        /* a bare spin: PAUSE costs up to ~140 cycles on recent Xeons, more than the hand-off itself */
    }
    memcpy(dst, b->data, bytes);
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: floor BYTES ITERS WARMUP CPU0 CPU1\n");
        return 2;
    }
    long bytes = atol(argv[1]), iters = atol(argv[2]), warmup = atol(argv[3]);
    int cpu0 = atoi(argv[4]), cpu1 = atoi(argv[5]);
    if (bytes < 1 || iters < 1 || warmup < 0) {
        fprintf(stderr, "floor: BYTES and ITERS must be positive, WARMUP not negative\n");
        return 2;
    }
    size_t slot = ((sizeof(struct box) + (size_t) bytes + 4095) / 4096) * 4096;
    unsigned char *shared = mmap(NULL, 2 * slot, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        perror("floor: mmap");
        return 1;
    }
    struct box *ping = (struct box *) shared, *pong = (struct box *) (shared + slot);
    unsigned char *mine = calloc(1, (size_t) bytes), *got = calloc(1, (size_t) bytes);
    uint64_t *trips = calloc((size_t) iters, sizeof(uint64_t));
    if (!mine || !got || !trips) {
        fprintf(stderr, "floor: out of memory\n");
        return 1;
    }
    long total = warmup + iters;
    pid_t child = fork();
    if (child < 0) {
        perror("floor: fork");
        return 1;
    }
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        pin(cpu1);
        for (long i = 1; i <= total; i++) {
            take(ping, got, (size_t) bytes, (uint64_t) i);
            put(pong, got, (size_t) bytes, (uint64_t) i);
        }
        _exit(0);
    }
    pin(cpu0);
    for (long i = 0; i < bytes; i++) {
        mine[i] = (unsigned char) i;
    }
    uint64_t start = 0, last = 0;
    for (long i = 1; i <= total; i++) {
        if (i == warmup + 1) {
            start = last = now_ns();
        }
        put(ping, mine, (size_t) bytes, (uint64_t) i);
        take(pong, got, (size_t) bytes, (uint64_t) i);
        if (i > warmup) {
            uint64_t t = now_ns();
            trips[i - warmup - 1] = t - last;
            last = t;
        }
    }
    uint64_t end = last;
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "floor: the responder process failed\n");
        return 1;
    }
    if (memcmp(got, mine, (size_t) bytes) != 0) {
        fprintf(stderr, "floor: the last reply does not carry the message sent\n");
        return 1;
    }
    printf("total_ns %llu\ntrips %ld\n", (unsigned long long) (end - start), iters);
    for (long i = 0; i < iters; i++) {
        printf("%llu\n", (unsigned long long) trips[i]);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
