/*
 * The streams and events of the stand-in driver library (see fake_libcuda.c).
 *
 * Each stream is a queue executed in order by a thread of its own: 32- and 64-bit writes are stores, waits spin
 * (with a backoff) until their condition holds, host functions are called, event records mark their event reached,
 * event waits spin until the event is reached. Device pointers are host pointers plus FAKE_CUDA_DEVPTR_OFFSET, as
 * cuMemHostGetDevicePointer hands them out. An error is sticky on its stream: later work is skipped, and queries,
 * synchronizations and the stream's events report it. Kernel launches are not queued (fake_libcuda.c runs them at
 * once).
 *
 * Memop calls are checked as the v2 entry points check them: memops disabled, 64-bit operations without 64-bit
 * support, NOR without NOR support and CU_STREAM_WAIT_VALUE_FLUSH without flush support answer errors, and so does
 * the v1-only write flag CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER.
 *
 * Configuration (environment; defaults in brackets):
 *   FAKE_CUDA_MEMOPS              0: stream memops are disabled in the driver; every memop call answers
 *                                 CUDA_ERROR_NOT_SUPPORTED, and CAN_USE_STREAM_MEM_OPS_V1 (92) reads 0 [1]
 *   FAKE_CUDA_MEMOPS_64           CAN_USE_64_BIT_STREAM_MEM_OPS (122) [1]
 *   FAKE_CUDA_WAIT_NOR            CAN_USE_STREAM_WAIT_VALUE_NOR (123) [1]
 *   FAKE_CUDA_FLUSH_REMOTE        CAN_FLUSH_REMOTE_WRITES (98) [0]
 *   FAKE_CUDA_BATCH_PROBE_RESULT  what an empty cuStreamBatchMemOp_v2 answers when memops are on [0]
 *   FAKE_CUDA_WAIT_TIMEOUT_MS     a wait spinning longer fails its stream with CUDA_ERROR_LAUNCH_TIMEOUT [60000]
 *   FAKE_CUDA_SYNC_RESULT         when not 0, what cuEventQuery, cuEventSynchronize and cuStreamSynchronize answer [0]
 * FAKE_CUDA_LOG gets one line per queued memop ("memop <call> <OPERATION> 0x<address> 0x<value> flags=0x<flags>"),
 * batch ("cuStreamBatchMemOp <count>") and host function ("cuLaunchHostFunc"), and a line per wait that times out.
 */
#include "fake_libcuda.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_INVALID_HANDLE 400
#define CUDA_ERROR_NOT_READY 600
#define CUDA_ERROR_LAUNCH_TIMEOUT 702
#define CUDA_ERROR_NOT_SUPPORTED 801

/* CUstreamBatchMemOpType, and the kinds of queued work that are not memops. */
enum op_kind {
    OP_WAIT32 = 1, OP_WRITE32 = 2, OP_FLUSH = 3, OP_WAIT64 = 4, OP_WRITE64 = 5, OP_BARRIER = 6,
    OP_HOST_FN = 100, OP_RECORD, OP_WAIT_EVENT
};

#define WAIT_FLUSH (1u << 30)
#define WRITE_NO_MEMORY_BARRIER 1u

struct fake_event {
    int refs;                 /* the owner's, plus one per queued record or wait */
    unsigned long long epoch; /* records so far */
    unsigned long long reached;
    int error;
};

struct fake_op {
    int kind;
    uint64_t address;
    uint64_t value;
    unsigned flags;
    void (*fn)(void *);
    void *user;
    struct fake_event *event;
    unsigned long long epoch;
    struct fake_op *next;
};

struct fake_stream {
    pthread_t thread;
    pthread_cond_t work;
    pthread_cond_t done;
    struct fake_op *head;
    struct fake_op *tail;
    unsigned long long queued;
    unsigned long long finished;
    int error;
    int destroyed;
};

/* One lock for every stream and event: the fake favours simplicity over concurrency. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_stream *default_stream;

int fake_stream_attribute(int attribute, int *value) {
    switch (attribute) {
        case 92: *value = (int) env_ll("FAKE_CUDA_MEMOPS", 1); return 1;
        case 98: *value = (int) env_ll("FAKE_CUDA_FLUSH_REMOTE", 0); return 1;
        case 122: *value = (int) env_ll("FAKE_CUDA_MEMOPS_64", 1); return 1;
        case 123: *value = (int) env_ll("FAKE_CUDA_WAIT_NOR", 1); return 1;
        default: return 0;
    }
}

static void *host_address(uint64_t device) {
    return (void *) (uintptr_t) (device - (uint64_t) env_ll("FAKE_CUDA_DEVPTR_OFFSET", 0));
}

static void event_unref(struct fake_event *e) {
    if (e && --e->refs == 0) {
        free(e);
    }
}

static void pause_for(unsigned long long spins) {
    if (spins < 1000) {
        return;
    }
    if (spins < 2000) {
        sched_yield();
        return;
    }
    struct timespec t = {0, spins < 10000 ? 20000 : 200000};
    nanosleep(&t, NULL);
}

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int holds(int kind, uint64_t x, uint64_t v, unsigned flags) {
    unsigned cond = flags & 3u;
    if (kind == OP_WAIT32) {
        uint32_t a = (uint32_t) x, b = (uint32_t) v;
        switch (cond) {
            case 0: return (int32_t) (a - b) >= 0;
            case 1: return a == b;
            case 2: return (a & b) != 0;
            default: return ~(a | b) != 0;
        }
    }
    switch (cond) {
        case 0: return (int64_t) (x - v) >= 0;
        case 1: return x == v;
        case 2: return (x & v) != 0;
        default: return ~(x | v) != 0;
    }
}

/* Spins until a wait's condition holds; an error when it times out or the stream is destroyed. */
static int spin_wait(struct fake_stream *s, struct fake_op *op) {
    long long limit = env_ll("FAKE_CUDA_WAIT_TIMEOUT_MS", 60000);
    long long start = now_ms();
    for (unsigned long long i = 0;; i++) {
        int ok;
        if (op->kind == OP_WAIT_EVENT) {
            pthread_mutex_lock(&lock);
            ok = op->event->reached >= op->epoch;
            int error = op->event->error;
            pthread_mutex_unlock(&lock);
            if (error) {
                return error;
            }
        } else if (op->kind == OP_WAIT32) {
            ok = holds(op->kind, __atomic_load_n((uint32_t *) host_address(op->address), __ATOMIC_ACQUIRE), op->value,
                       op->flags);
        } else {
            ok = holds(op->kind, __atomic_load_n((uint64_t *) host_address(op->address), __ATOMIC_ACQUIRE), op->value,
                       op->flags);
        }
        if (ok) {
            return CUDA_SUCCESS;
        }
        if ((i & 63) == 0) {
            if (__atomic_load_n(&s->destroyed, __ATOMIC_ACQUIRE)) {
                return CUDA_ERROR_LAUNCH_TIMEOUT;
            }
            if (now_ms() - start > limit) {
                log_line("wait timeout 0x%llx 0x%llx flags=0x%x", (unsigned long long) op->address,
                         (unsigned long long) op->value, op->flags);
                return CUDA_ERROR_LAUNCH_TIMEOUT;
            }
        }
        pause_for(i);
    }
}

static int execute(struct fake_stream *s, struct fake_op *op) {
    switch (op->kind) {
        case OP_WRITE32:
            __atomic_store_n((uint32_t *) host_address(op->address), (uint32_t) op->value, __ATOMIC_RELEASE);
            return CUDA_SUCCESS;
        case OP_WRITE64:
            __atomic_store_n((uint64_t *) host_address(op->address), op->value, __ATOMIC_RELEASE);
            return CUDA_SUCCESS;
        case OP_BARRIER:
        case OP_FLUSH:
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            return CUDA_SUCCESS;
        case OP_WAIT32:
        case OP_WAIT64:
        case OP_WAIT_EVENT:
            return spin_wait(s, op);
        case OP_HOST_FN:
            op->fn(op->user);
            return CUDA_SUCCESS;
        default:
            return CUDA_SUCCESS;
    }
}

static void *run_stream(void *arg) {
    struct fake_stream *s = arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!s->head && !s->destroyed) {
            pthread_cond_wait(&s->work, &lock);
        }
        if (!s->head) {
            break;
        }
        struct fake_op *op = s->head;
        int error = s->error;
        pthread_mutex_unlock(&lock);
        int rc = error ? error : execute(s, op);
        pthread_mutex_lock(&lock);
        if (rc && !s->error) {
            s->error = rc;
        }
        if (op->kind == OP_RECORD) {
            if (s->error) {
                op->event->error = s->error;
            }
            if (op->event->reached < op->epoch) {
                op->event->reached = op->epoch;
            }
        }
        s->head = op->next;
        if (!s->head) {
            s->tail = NULL;
        }
        s->finished++;
        event_unref(op->event);
        free(op);
        pthread_cond_broadcast(&s->done);
    }
    pthread_mutex_unlock(&lock);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->done);
    free(s);
    return NULL;
}

static struct fake_stream *new_stream(void) {
    struct fake_stream *s = calloc(1, sizeof *s);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->done, NULL);
    pthread_create(&s->thread, NULL, run_stream, s);
    pthread_detach(s->thread);
    return s;
}

static struct fake_stream *stream_of(void *handle) {
    if (handle) {
        return handle;
    }
    pthread_mutex_lock(&lock);
    if (!default_stream) {
        default_stream = new_stream();
    }
    pthread_mutex_unlock(&lock);
    return default_stream;
}

/* Queues work; the caller holds the lock. */
static void push(struct fake_stream *s, struct fake_op *op) {
    op->next = NULL;
    if (s->tail) {
        s->tail->next = op;
    } else {
        s->head = op;
    }
    s->tail = op;
    s->queued++;
    pthread_cond_signal(&s->work);
}

static const char *op_name(int kind) {
    switch (kind) {
        case OP_WAIT32: return "WAIT_VALUE_32";
        case OP_WRITE32: return "WRITE_VALUE_32";
        case OP_FLUSH: return "FLUSH_REMOTE_WRITES";
        case OP_WAIT64: return "WAIT_VALUE_64";
        case OP_WRITE64: return "WRITE_VALUE_64";
        case OP_BARRIER: return "BARRIER";
        default: return "?";
    }
}

/* What the driver answers for one memop before queuing anything. */
static CUresult check_memop(int kind, uint64_t address, unsigned flags) {
    if (!env_ll("FAKE_CUDA_MEMOPS", 1)) {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    switch (kind) {
        case OP_WRITE32:
        case OP_WRITE64:
            if (kind == OP_WRITE64 && !env_ll("FAKE_CUDA_MEMOPS_64", 1)) {
                return CUDA_ERROR_NOT_SUPPORTED;
            }
            if (flags != 0) {
                return CUDA_ERROR_INVALID_VALUE; /* NO_MEMORY_BARRIER is v1 only */
            }
            break;
        case OP_WAIT32:
        case OP_WAIT64:
            if (kind == OP_WAIT64 && !env_ll("FAKE_CUDA_MEMOPS_64", 1)) {
                return CUDA_ERROR_NOT_SUPPORTED;
            }
            if ((flags & ~(3u | WAIT_FLUSH)) != 0) {
                return CUDA_ERROR_INVALID_VALUE;
            }
            if ((flags & 3u) == 3u && !env_ll("FAKE_CUDA_WAIT_NOR", 1)) {
                return CUDA_ERROR_NOT_SUPPORTED;
            }
            if ((flags & WAIT_FLUSH) && !env_ll("FAKE_CUDA_FLUSH_REMOTE", 0)) {
                return CUDA_ERROR_INVALID_VALUE;
            }
            break;
        case OP_BARRIER:
            return flags > 1 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
        case OP_FLUSH:
            return env_ll("FAKE_CUDA_FLUSH_REMOTE", 0) ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
        default:
            return CUDA_ERROR_INVALID_VALUE;
    }
    unsigned width = kind == OP_WRITE32 || kind == OP_WAIT32 ? 4 : 8;
    if (address == 0 || (address & (width - 1)) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

static CUresult one_memop(const char *call, void *stream, int kind, uint64_t address, uint64_t value, unsigned flags) {
    CUresult rc = check_memop(kind, address, flags);
    log_line("memop %s %s 0x%llx 0x%llx flags=0x%x%s", call, op_name(kind), (unsigned long long) address,
             (unsigned long long) value, flags, rc ? " refused" : "");
    if (rc) {
        return rc;
    }
    struct fake_stream *s = stream_of(stream);
    struct fake_op *op = calloc(1, sizeof *op);
    op->kind = kind;
    op->address = address;
    op->value = value;
    op->flags = flags;
    pthread_mutex_lock(&lock);
    push(s, op);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuStreamWriteValue32_v2(void *stream, CUdeviceptr address, uint32_t value, unsigned flags) {
    return one_memop("cuStreamWriteValue32", stream, OP_WRITE32, address, value, flags);
}

CUresult cuStreamWriteValue64_v2(void *stream, CUdeviceptr address, uint64_t value, unsigned flags) {
    return one_memop("cuStreamWriteValue64", stream, OP_WRITE64, address, value, flags);
}

CUresult cuStreamWaitValue32_v2(void *stream, CUdeviceptr address, uint32_t value, unsigned flags) {
    return one_memop("cuStreamWaitValue32", stream, OP_WAIT32, address, value, flags);
}

CUresult cuStreamWaitValue64_v2(void *stream, CUdeviceptr address, uint64_t value, unsigned flags) {
    return one_memop("cuStreamWaitValue64", stream, OP_WAIT64, address, value, flags);
}

/* CUstreamBatchMemOpParams: 48 bytes, as cuda.h lays the union out. */
struct fake_params {
    uint32_t operation;
    uint32_t barrier_flags; /* memoryBarrier.flags and flushRemoteWrites.flags */
    uint64_t address;
    uint64_t value;         /* value (low 32 bits) or value64 */
    uint32_t flags;
    uint32_t pad0;
    uint64_t alias;
    uint64_t pad1;
};

CUresult cuStreamBatchMemOp_v2(void *stream, unsigned count, void *array, unsigned flags) {
    if (!env_ll("FAKE_CUDA_MEMOPS", 1)) {
        log_line("cuStreamBatchMemOp %u refused", count);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (count == 0) {
        return (CUresult) env_ll("FAKE_CUDA_BATCH_PROBE_RESULT", 0);
    }
    if (count > 255 || flags != 0 || !array || sizeof(struct fake_params) != 48) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    struct fake_params *p = array;
    log_line("cuStreamBatchMemOp %u", count);
    for (unsigned i = 0; i < count; i++) {
        int kind = (int) p[i].operation;
        unsigned f = kind == OP_BARRIER || kind == OP_FLUSH ? p[i].barrier_flags : p[i].flags;
        uint64_t value = kind == OP_WAIT32 || kind == OP_WRITE32 ? (uint32_t) p[i].value : p[i].value;
        CUresult rc = check_memop(kind, p[i].address, f);
        if (kind == OP_BARRIER || kind == OP_FLUSH) {
            log_line("memop batch %s flags=0x%x%s", op_name(kind), f, rc ? " refused" : "");
        } else {
            log_line("memop batch %s 0x%llx 0x%llx flags=0x%x%s", op_name(kind), (unsigned long long) p[i].address,
                     (unsigned long long) value, f, rc ? " refused" : "");
        }
        if (rc) {
            return rc;
        }
    }
    struct fake_stream *s = stream_of(stream);
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < count; i++) {
        struct fake_op *op = calloc(1, sizeof *op);
        op->kind = (int) p[i].operation;
        op->address = p[i].address;
        op->value = op->kind == OP_WAIT32 || op->kind == OP_WRITE32 ? (uint32_t) p[i].value : p[i].value;
        op->flags = op->kind == OP_BARRIER || op->kind == OP_FLUSH ? p[i].barrier_flags : p[i].flags;
        push(s, op);
    }
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

/* Queues a function on a stream without logging it (the memory fake's asynchronous copies). */
void fake_stream_push_fn(void *stream, void (*fn)(void *), void *user) {
    struct fake_stream *s = stream_of(stream);
    struct fake_op *op = calloc(1, sizeof *op);
    op->kind = OP_HOST_FN;
    op->fn = fn;
    op->user = user;
    pthread_mutex_lock(&lock);
    push(s, op);
    pthread_mutex_unlock(&lock);
}

CUresult cuLaunchHostFunc(void *stream, void (*fn)(void *), void *user) {
    if (!fn) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    log_line("cuLaunchHostFunc");
    struct fake_stream *s = stream_of(stream);
    struct fake_op *op = calloc(1, sizeof *op);
    op->kind = OP_HOST_FN;
    op->fn = fn;
    op->user = user;
    pthread_mutex_lock(&lock);
    push(s, op);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(void **stream, unsigned int flags) {
    *stream = new_stream();
    log_line("cuStreamCreate %u", flags);
    return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(void *stream) {
    if (!stream) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    struct fake_stream *s = stream;
    log_line("cuStreamDestroy");
    pthread_mutex_lock(&lock);
    s->destroyed = 1; /* the thread finishes the queue (waits give up) and frees the stream */
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuStreamQuery(void *stream) {
    struct fake_stream *s = stream_of(stream);
    pthread_mutex_lock(&lock);
    CUresult rc = s->error ? s->error : s->finished == s->queued ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
    pthread_mutex_unlock(&lock);
    return rc;
}

CUresult cuStreamSynchronize(void *stream) {
    CUresult forced = (CUresult) env_ll("FAKE_CUDA_SYNC_RESULT", 0);
    if (forced) {
        return forced;
    }
    struct fake_stream *s = stream_of(stream);
    pthread_mutex_lock(&lock);
    while (!s->error && s->finished != s->queued) {
        pthread_cond_wait(&s->done, &lock);
    }
    CUresult rc = s->error;
    pthread_mutex_unlock(&lock);
    return rc;
}

CUresult cuStreamWaitEvent(void *stream, void *event, unsigned int flags) {
    struct fake_event *e = event;
    if (!e) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    struct fake_stream *s = stream_of(stream);
    pthread_mutex_lock(&lock);
    if (e->epoch > e->reached || e->error) {
        struct fake_op *op = calloc(1, sizeof *op);
        op->kind = OP_WAIT_EVENT;
        op->event = e;
        op->epoch = e->epoch;
        e->refs++;
        push(s, op);
    }
    pthread_mutex_unlock(&lock);
    log_line("cuStreamWaitEvent");
    return CUDA_SUCCESS;
}

CUresult cuEventCreate(void **event, unsigned int flags) {
    struct fake_event *e = calloc(1, sizeof *e);
    e->refs = 1;
    *event = e;
    return CUDA_SUCCESS;
}

CUresult cuEventRecord(void *event, void *stream) {
    struct fake_event *e = event;
    if (!e) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    struct fake_stream *s = stream_of(stream);
    struct fake_op *op = calloc(1, sizeof *op);
    op->kind = OP_RECORD;
    op->event = e;
    pthread_mutex_lock(&lock);
    op->epoch = ++e->epoch;
    e->refs++;
    push(s, op);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

CUresult cuEventQuery(void *event) {
    CUresult forced = (CUresult) env_ll("FAKE_CUDA_SYNC_RESULT", 0);
    if (forced) {
        return forced;
    }
    struct fake_event *e = event;
    pthread_mutex_lock(&lock);
    CUresult rc = e->error ? e->error : e->reached >= e->epoch ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
    pthread_mutex_unlock(&lock);
    return rc;
}

CUresult cuEventSynchronize(void *event) {
    CUresult forced = (CUresult) env_ll("FAKE_CUDA_SYNC_RESULT", 0);
    if (forced) {
        return forced;
    }
    struct fake_event *e = event;
    for (unsigned long long i = 0;; i++) {
        pthread_mutex_lock(&lock);
        CUresult rc = e->error ? e->error : e->reached >= e->epoch ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
        pthread_mutex_unlock(&lock);
        if (rc != CUDA_ERROR_NOT_READY) {
            return rc;
        }
        pause_for(i);
    }
}

CUresult cuEventDestroy_v2(void *event) {
    struct fake_event *e = event;
    if (!e) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    pthread_mutex_lock(&lock);
    event_unref(e);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}
