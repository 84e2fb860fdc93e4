/* bench: shared_ring.h against a pipe and against the machine's limit.

   One producer thread and one consumer thread, pinned to different CPUs,
   move fixed-size messages for each size. Every variant's consumer does the
   same work: it gets each message into a buffer of its own (memcpy out of
   the ring; read(2) for the pipe) and checks its length and its first and
   last byte. docs/benchmarks.md, "Running them", says what each variant does.

   bench [--quick] [--json] [--svg FILE] [--sizes 64,256,...] [--ring BYTES]
         [--reps N] [--seconds S] [--help] */
#define _GNU_SOURCE
#include "../shared_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 16
#define MAX_REPS 64
#define CORK_BATCH 64
#define LIMIT_BATCH_BYTES (64u * 1024u)

typedef struct config {
    size_t sizes[MAX_SIZES];
    int nsizes;
    size_t ring;
    int reps;
    double seconds;
    int json;
    int quick;
    long latency_iters;
    const char *svg;
    const char *only; /* comma-separated variant names, or NULL */
} config;

typedef struct sample {
    double msgs_per_s;
    double bytes_per_s;
    uint64_t messages;
    uint64_t bad;
    uint64_t producer_sleeps;
    uint64_t consumer_sleeps;
    double producer_cpu; /* CPU time / wall time of each thread */
    double consumer_cpu;
    int noisy;      /* a spinning thread got less than NOISY_CPU of a CPU */
    double flag_ns; /* two-flag ping-pong, one-way p50, just before the run */
} sample;

/* A run whose spinning threads got less than this share of a CPU was
   slowed by the machine, not by the ring: it is left out of the medians.
   Only variants whose threads never block are judged so: a consumer that
   sleeps is not a descheduled one. */
#define NOISY_CPU 0.90

/* The host moves this machine's two vCPUs between a fast and a slow state
   every few seconds; a two-flag ping-pong tells them apart (one-way p50
   about 50 ns or about 250 ns). Every run is preceded by a short one, and
   ratios are reported per state: a ratio of two runs is kept only when
   both saw the same state. */
#include "machine_state.h"

/* ---- small helpers ---------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* How much of a CPU the calling thread got since `mark` was taken. */
typedef struct cpu_mark {
    double wall, cpu;
} cpu_mark;
static cpu_mark cpu_mark_now(void) {
    cpu_mark m = { now_s(), thread_cpu_s() };
    return m;
}
static double cpu_share_since(cpu_mark m) {
    double wall = now_s() - m.wall;
    return wall > 0 ? (thread_cpu_s() - m.cpu) / wall : 1.0;
}


static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n) {
    double tmp[MAX_REPS];
    memcpy(tmp, v, (size_t)n * sizeof *v);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* The q-quantile (0..1) of n values, nearest rank. */
static double quantile(const double *v, int n, double q) {
    double tmp[MAX_REPS];
    int k = (int)(q * (n - 1) + 0.5);
    memcpy(tmp, v, (size_t)n * sizeof *v);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    return tmp[k];
}

static double min_of(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] < m ? v[i] : m;
    return m;
}

static double max_of(const double *v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++) m = v[i] > m ? v[i] : m;
    return m;
}

/* The byte a message carries first and last, so a stale or torn message
   fails the consumer's check. */
static unsigned char mark(uint64_t seq) { return (unsigned char)('A' + seq % 26u); }

/* Producers send from 26 ready-made NUL-terminated sources, one per mark.
   Writing the mark into one buffer before each send would make the next
   read of it wait for the store buffer to drain (a failed store-to-load
   forward): a cost of the benchmark, not of the transport. */
#define NSOURCES 26
typedef struct sources {
    char *text[NSOURCES];
} sources;

/* A buffer whose copies never straddle a page they need not: page-aligned
   (a copy of up to 4 KiB stays in one page, and starts a cache line), for
   every variant alike. malloc's 16-byte alignment put a 64-byte copy across
   two cache lines three times in four, and across a page now and then. */
static void *copy_buffer(size_t size) {
    void *b = aligned_alloc(4096, (size + 4095u) & ~(size_t)4095u);
    if (b == NULL) abort();
    return b;
}

static void sources_make(sources *src, size_t size) {
    for (int i = 0; i < NSOURCES; i++) {
        src->text[i] = copy_buffer(size + 1);
        memset(src->text[i], 'x', size);
        src->text[i][0] = src->text[i][size - 1] = (char)mark((uint64_t)i);
        src->text[i][size] = '\0';
    }
}

/* The next source index, 0..NSOURCES-1, without a division per message. */
static int next_source(int i) { return i + 1 == NSOURCES ? 0 : i + 1; }

static void sources_free(sources *src) {
    for (int i = 0; i < NSOURCES; i++) free(src->text[i]);
}

/* ---- a two-thread run ------------------------------------------------------- */

typedef struct pair {
    const config *cfg;
    size_t size;
    double deadline;  /* producer stops writing at this time */
    atomic_int ready; /* start barrier */
    /* shared ring */
    void *region;
    size_t region_size;
    /* pipe */
    int fds[2];
    /* limit: each counter on its own pair of cache lines */
    unsigned char *buf;
    _Alignas(128) _Atomic uint64_t lim_write;
    atomic_int lim_done;
    _Alignas(128) _Atomic uint64_t lim_read;
    _Alignas(128) char lim_pad;
    /* results */
    sample out;
    double t_start, t_end;
} pair;

typedef void *(*thread_fn)(void *);

static void start_barrier(pair *w) {
    atomic_fetch_add(&w->ready, 1);
    while (atomic_load(&w->ready) < 2) cpu_relax();
}

static void run_pair(pair *w, thread_fn producer, thread_fn consumer) {
    pthread_t t;
    atomic_store(&w->ready, 0);
    pthread_create(&t, NULL, producer, w);
    consumer(w);
    pthread_join(t, NULL);
    w->out.msgs_per_s = (double)w->out.messages / (w->t_end - w->t_start);
    w->out.bytes_per_s = w->out.msgs_per_s * (double)w->size;
}

/* The consumer's own copy of a message, and its check. */
typedef struct checker {
    unsigned char *dst;
    size_t size;
    uint64_t seq, bad;
    int source; /* seq % NSOURCES, kept without dividing */
} checker;

static void check_copy(checker *k, const void *data, size_t len) {
    if (len != k->size) {
        k->bad++;
    } else {
        memcpy(k->dst, data, len);
        if (k->dst[0] != mark((uint64_t)k->source) || k->dst[len - 1] != mark((uint64_t)k->source))
            k->bad++;
    }
    k->seq++;
    k->source = next_source(k->source);
}

/* ---- shared ring variants --------------------------------------------------------- */

typedef enum { WRITE_BUFFER, WRITE_STRING, WRITE_CORKED, WRITE_CLAIMED, WRITE_CLAIMED_64 } write_kind;
typedef struct shared_pair {
    pair base;
    write_kind kind;
} shared_pair;

static void *shared_producer(void *arg) {
    shared_pair *sp = (shared_pair *)arg;
    pair *w = &sp->base;
    shared_ring_producer p;
    shared_ring_stats st = { 0 };
    sources src;
    uint64_t seq = 0;
    int source = 0;
    pin_to_cpu(0);
    sources_make(&src, w->size);
    shared_ring_attach_producer(&p, w->region, w->region_size, NULL);
    start_barrier(w);
    cpu_mark cpu0 = cpu_mark_now();
    for (;;) {
        int batch = sp->kind == WRITE_CORKED ? CORK_BATCH : 1;
        if (sp->kind == WRITE_CORKED) shared_ring_cork(&p);
        for (int i = 0; i < batch; i++, seq++) {
            const char *text = src.text[source];
            source = next_source(source);
            if (sp->kind == WRITE_STRING) {
                shared_ring_write_str(&p, text, SHARED_RING_FOREVER);
            } else if (sp->kind == WRITE_CLAIMED || sp->kind == WRITE_CLAIMED_64) {
                /* zero-copy: the same bytes, built in place (at 8 or 64) */
                void *dst;
                int r = sp->kind == WRITE_CLAIMED
                            ? shared_ring_claim(&p, w->size, &dst, SHARED_RING_FOREVER)
                            : shared_ring_claim_aligned(&p, w->size, 64, &dst, SHARED_RING_FOREVER);
                if (r == SHARED_RING_OK) {
                    memcpy(dst, text, w->size);
                    shared_ring_commit(&p, w->size);
                }
            } else {
                shared_ring_write_bytes(&p, text, w->size, SHARED_RING_FOREVER);
            }
        }
        if (sp->kind == WRITE_CORKED) shared_ring_uncork(&p);
        if ((seq & 255u) < (uint64_t)batch && now_s() >= w->deadline) break;
    }
    shared_ring_close(&p);
    w->out.producer_cpu = cpu_share_since(cpu0);
    shared_ring_producer_stats(&p, &st);
    w->out.producer_sleeps = st.sleeps;
    sources_free(&src);
    return NULL;
}

static int shared_check(void *user, const void *data, size_t len) {
    check_copy((checker *)user, data, len);
    return 0;
}

static void *shared_consumer(void *arg) {
    pair *w = (pair *)arg;
    shared_ring_consumer c;
    shared_ring_stats st = { 0 };
    checker k = { copy_buffer(w->size), w->size, 0, 0, 0 };
    pin_to_cpu(1);
    shared_ring_attach_consumer(&c, w->region, w->region_size, NULL);
    start_barrier(w);
    w->t_start = now_s();
    cpu_mark cpu0 = cpu_mark_now();
    while (shared_ring_read(&c, shared_check, &k, SHARED_RING_FOREVER) >= 0) {
    }
    w->t_end = now_s();
    w->out.consumer_cpu = cpu_share_since(cpu0);
    shared_ring_consumer_stats(&c, &st);
    w->out.messages = k.seq;
    w->out.bad = k.bad;
    w->out.consumer_sleeps = st.sleeps;
    free(k.dst);
    return NULL;
}

static void *shared_region;
static size_t shared_region_bytes;

static sample run_shared(const config *cfg, size_t size, write_kind kind) {
    shared_pair sp;
    memset(&sp, 0, sizeof sp);
    sp.kind = kind;
    sp.base.cfg = cfg;
    sp.base.size = size;
    sp.base.region = shared_region;
    sp.base.region_size = shared_region_bytes;
    shared_ring_format(shared_region, shared_region_bytes, cfg->ring, 0);
    sp.base.deadline = now_s() + cfg->seconds;
    run_pair(&sp.base, shared_producer, shared_consumer);
    return sp.base.out;
}

static sample run_shared_buffer(const config *c, size_t s) {
    return run_shared(c, s, WRITE_BUFFER);
}
static sample run_shared_string(const config *c, size_t s) {
    return run_shared(c, s, WRITE_STRING);
}
static sample run_shared_corked(const config *c, size_t s) {
    return run_shared(c, s, WRITE_CORKED);
}
static sample run_shared_claimed(const config *c, size_t s) {
    return run_shared(c, s, WRITE_CLAIMED);
}
static sample run_shared_claimed_64(const config *c, size_t s) {
    return run_shared(c, s, WRITE_CLAIMED_64);
}

/* ---- between two processes ------------------------------------------------------
   shared-buffer with the producer in a forked child, over a MAP_SHARED
   region. A publish to a peer in another process fences (no barrier the
   sleeper could issue reaches another process for certain), so
   shared-process ÷ shared-buffer is what that fence costs. */
static void *process_region;

static sample run_process(const config *cfg, size_t size, write_kind kind) {
    shared_pair *sp = mmap(NULL, sizeof *sp, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                           -1, 0);
    sample out;
    pid_t child;
    memset(&out, 0, sizeof out);
    if (sp == MAP_FAILED) return out;
    memset(sp, 0, sizeof *sp);
    sp->kind = kind;
    sp->base.cfg = cfg;
    sp->base.size = size;
    sp->base.region = process_region;
    sp->base.region_size = shared_region_bytes;
    shared_ring_format(process_region, shared_region_bytes, cfg->ring, 0);
    sp->base.deadline = now_s() + cfg->seconds;
    atomic_store(&sp->base.ready, 0);
    child = fork();
    if (child == 0) {
        shared_producer(sp);
        _exit(0);
    }
    if (child > 0) {
        shared_consumer(&sp->base);
        waitpid(child, NULL, 0);
        sp->base.out.msgs_per_s = (double)sp->base.out.messages / (sp->base.t_end - sp->base.t_start);
        sp->base.out.bytes_per_s = sp->base.out.msgs_per_s * (double)size;
        out = sp->base.out;
    }
    munmap(sp, sizeof *sp);
    return out;
}

static sample run_shared_process(const config *c, size_t s) {
    return run_process(c, s, WRITE_BUFFER);
}
static sample run_process_claimed(const config *c, size_t s) {
    return run_process(c, s, WRITE_CLAIMED);
}

/* ---- many producers, one consumer ---------------------------------------------------
   MANY_PRODUCERS threads each send fixed-size messages to one consumer:
   through one ring each, the consumer sleeping in shared_ring_wait_any
   ("many-rings"), or through one queue behind a mutex and two condition
   variables ("mutex-queue"), the usual way. Threads are not pinned: there
   are more of them than this machine may have cores. */
#define MANY_PRODUCERS 4

typedef struct many_run {
    const config *cfg;
    size_t size;
    double deadline;
    int use_rings;
    /* rings */
    void *region[MANY_PRODUCERS];
    size_t region_size;
    shared_ring_producer prod[MANY_PRODUCERS];
    /* mutex queue: [u32 length, pad to 8][payload, padded to 8] records */
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
    unsigned char *q;
    size_t q_cap, q_head, q_tail; /* byte counters, q_tail - q_head used */
    int q_closed;
} many_run;

typedef struct many_producer_arg {
    many_run *m;
    int id;
} many_producer_arg;

static size_t queue_record(size_t len) { return 8u + ((len + 7u) & ~(size_t)7u); }

static void queue_push(many_run *m, const unsigned char *data, size_t len) {
    size_t rec = queue_record(len);
    uint32_t n = (uint32_t)len;
    pthread_mutex_lock(&m->lock);
    while (m->q_cap - (m->q_tail - m->q_head) < rec) pthread_cond_wait(&m->not_full, &m->lock);
    /* The queue is a byte ring: a record may wrap, copied in two parts. */
    for (size_t i = 0; i < 4; i++) m->q[(m->q_tail + i) % m->q_cap] = ((unsigned char *)&n)[i];
    for (size_t i = 0, at = (m->q_tail + 8) % m->q_cap; i < len;) {
        size_t k = m->q_cap - at < len - i ? m->q_cap - at : len - i;
        memcpy(m->q + at, data + i, k);
        i += k;
        at = (at + k) % m->q_cap;
    }
    m->q_tail += rec;
    pthread_cond_signal(&m->not_empty);
    pthread_mutex_unlock(&m->lock);
}

static void *many_producer(void *arg) {
    many_producer_arg *a = (many_producer_arg *)arg;
    many_run *m = a->m;
    unsigned char *msg = malloc(m->size);
    memset(msg, (int)mark((uint64_t)a->id), m->size);
    for (uint64_t seq = 0;; seq++) {
        if (m->use_rings)
            shared_ring_write_bytes(&m->prod[a->id], msg, m->size, SHARED_RING_FOREVER);
        else
            queue_push(m, msg, m->size);
        if ((seq & 255u) == 0 && now_s() >= m->deadline) break;
    }
    if (m->use_rings) {
        shared_ring_close(&m->prod[a->id]);
    } else {
        pthread_mutex_lock(&m->lock);
        m->q_closed++;
        pthread_cond_signal(&m->not_empty);
        pthread_mutex_unlock(&m->lock);
    }
    free(msg);
    return NULL;
}

typedef struct many_checker {
    unsigned char *dst;
    size_t size;
    uint64_t messages, bad;
} many_checker;

static void many_check(many_checker *k, const unsigned char *data, size_t len) {
    if (len != k->size) {
        k->bad++;
    } else {
        memcpy(k->dst, data, len);
        if (k->dst[0] != k->dst[len - 1]) k->bad++;
    }
    k->messages++;
}

static int many_ring_check(void *user, const void *data, size_t len) {
    many_check((many_checker *)user, (const unsigned char *)data, len);
    return 0;
}

static void many_consume_rings(many_run *m, many_checker *k) {
    shared_ring_consumer cons[MANY_PRODUCERS], *set[MANY_PRODUCERS];
    int open = MANY_PRODUCERS;
    for (int i = 0; i < MANY_PRODUCERS; i++) {
        shared_ring_attach_consumer(&cons[i], m->region[i], m->region_size, NULL);
        set[i] = &cons[i];
    }
    while (open > 0) {
        int at = shared_ring_wait_any(set, MANY_PRODUCERS, SHARED_RING_FOREVER);
        if (at < 0) break;
        if (shared_ring_read_some(set[at], many_ring_check, k) == SHARED_RING_CLOSED) {
            set[at] = NULL;
            open--;
        }
    }
}

static void many_consume_queue(many_run *m, many_checker *k) {
    pthread_mutex_lock(&m->lock);
    for (;;) {
        while (m->q_tail == m->q_head && m->q_closed < MANY_PRODUCERS)
            pthread_cond_wait(&m->not_empty, &m->lock);
        if (m->q_tail == m->q_head) break;
        while (m->q_tail != m->q_head) { /* take all there is, under one lock */
            uint32_t n;
            for (size_t i = 0; i < 4; i++)
                ((unsigned char *)&n)[i] = m->q[(m->q_head + i) % m->q_cap];
            size_t at = (m->q_head + 8) % m->q_cap;
            if (at + n <= m->q_cap) {
                many_check(k, m->q + at, n);
            } else { /* wrapped: check a joined copy */
                size_t first = m->q_cap - at;
                memcpy(k->dst, m->q + at, first);
                memcpy(k->dst + first, m->q, n - first);
                many_check(k, k->dst, n);
            }
            m->q_head += queue_record(n);
        }
        pthread_cond_broadcast(&m->not_full);
    }
    pthread_mutex_unlock(&m->lock);
}

static sample run_many(const config *cfg, size_t size, int use_rings) {
    many_run m;
    many_producer_arg args[MANY_PRODUCERS];
    pthread_t t[MANY_PRODUCERS];
    many_checker k = { copy_buffer(size), size, 0, 0 };
    sample out;
    memset(&m, 0, sizeof m);
    memset(&out, 0, sizeof out);
    m.cfg = cfg;
    m.size = size;
    m.use_rings = use_rings;
    /* The same bytes in all: four rings of a quarter each, or one queue. */
    m.region_size = shared_ring_region_size(cfg->ring / MANY_PRODUCERS, 0);
    pthread_mutex_init(&m.lock, NULL);
    pthread_cond_init(&m.not_empty, NULL);
    pthread_cond_init(&m.not_full, NULL);
    m.q_cap = cfg->ring;
    m.q = use_rings ? NULL : malloc(m.q_cap);
    for (int i = 0; use_rings && i < MANY_PRODUCERS; i++) {
        m.region[i] = aligned_alloc(128, m.region_size);
        shared_ring_format(m.region[i], m.region_size, 0, 0);
        shared_ring_attach_producer(&m.prod[i], m.region[i], m.region_size, NULL);
    }
    m.deadline = now_s() + cfg->seconds;
    double t0 = now_s();
    for (int i = 0; i < MANY_PRODUCERS; i++) {
        args[i].m = &m;
        args[i].id = i;
        pthread_create(&t[i], NULL, many_producer, &args[i]);
    }
    if (use_rings)
        many_consume_rings(&m, &k);
    else
        many_consume_queue(&m, &k);
    double t1 = now_s();
    for (int i = 0; i < MANY_PRODUCERS; i++) pthread_join(t[i], NULL);
    for (int i = 0; use_rings && i < MANY_PRODUCERS; i++) free(m.region[i]);
    free(m.q);
    free(k.dst);
    pthread_mutex_destroy(&m.lock);
    pthread_cond_destroy(&m.not_empty);
    pthread_cond_destroy(&m.not_full);
    out.messages = k.messages;
    out.bad = k.bad;
    out.msgs_per_s = (double)k.messages / (t1 - t0);
    out.bytes_per_s = out.msgs_per_s * (double)size;
    return out;
}

static sample run_many_rings(const config *c, size_t s) { return run_many(c, s, 1); }
static sample run_mutex_queue(const config *c, size_t s) { return run_many(c, s, 0); }

/* ---- pipe variants ------------------------------------------------------------------ */

static int pipe_bytes;

static int write_all(int fd, struct iovec *iov, int n) {
    while (n > 0) {
        ssize_t r = writev(fd, iov, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        while (n > 0 && (size_t)r >= iov->iov_len) {
            r -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + r;
            iov->iov_len -= (size_t)r;
        }
    }
    return 0;
}

typedef struct pipe_pair {
    pair base;
    int strings;
} pipe_pair;

static void *pipe_producer(void *arg) {
    pipe_pair *pp = (pipe_pair *)arg;
    pair *w = &pp->base;
    sources src;
    uint64_t seq = 0;
    int source = 0;
    pin_to_cpu(0);
    sources_make(&src, w->size);
    start_barrier(w);
    cpu_mark cpu0 = cpu_mark_now();
    for (;; seq++) {
        uint32_t len;
        struct iovec iov[2];
        char *text = src.text[source];
        source = next_source(source);
        len = (uint32_t)(pp->strings ? strlen(text) : w->size);
        iov[0].iov_base = &len;
        iov[0].iov_len = sizeof len;
        iov[1].iov_base = text;
        iov[1].iov_len = len;
        if (write_all(w->fds[1], iov, 2) != 0) break;
        if ((seq & 255u) == 0 && now_s() >= w->deadline) break;
    }
    close(w->fds[1]);
    w->out.producer_cpu = cpu_share_since(cpu0);
    sources_free(&src);
    return NULL;
}

static void *pipe_consumer(void *arg) {
    pair *w = (pair *)arg;
    size_t cap = 2u * 1024u * 1024u, have = 0, at = 0;
    unsigned char *in = malloc(cap);
    checker k = { copy_buffer(w->size), w->size, 0, 0, 0 };
    pin_to_cpu(1);
    start_barrier(w);
    w->t_start = now_s();
    cpu_mark cpu0 = cpu_mark_now();
    for (;;) {
        ssize_t r;
        /* Parse every whole frame we hold; read(2) already copied it out. */
        while (have - at >= 4) {
            uint32_t len;
            memcpy(&len, in + at, 4);
            if (have - at < 4u + len) break;
            if (len != k.size || in[at + 4] != mark((uint64_t)k.source) ||
                in[at + 3 + len] != mark((uint64_t)k.source))
                k.bad++;
            k.seq++;
            k.source = next_source(k.source);
            at += 4u + len;
        }
        memmove(in, in + at, have - at);
        have -= at;
        at = 0;
        r = read(w->fds[0], in + have, cap - have);
        if (r <= 0) break;
        have += (size_t)r;
    }
    w->t_end = now_s();
    w->out.consumer_cpu = cpu_share_since(cpu0);
    close(w->fds[0]);
    w->out.messages = k.seq;
    w->out.bad = k.bad;
    free(in);
    free(k.dst);
    return NULL;
}

static sample run_pipe(const config *cfg, size_t size, int strings) {
    pipe_pair pp;
    memset(&pp, 0, sizeof pp);
    pp.strings = strings;
    pp.base.cfg = cfg;
    pp.base.size = size;
    if (pipe(pp.base.fds) != 0) abort();
    fcntl(pp.base.fds[1], F_SETPIPE_SZ, 1 << 20);
    pipe_bytes = fcntl(pp.base.fds[1], F_GETPIPE_SZ);
    pp.base.deadline = now_s() + cfg->seconds;
    run_pair(&pp.base, pipe_producer, pipe_consumer);
    return pp.base.out;
}

static sample run_pipe_buffer(const config *c, size_t s) { return run_pipe(c, s, 0); }
static sample run_pipe_string(const config *c, size_t s) { return run_pipe(c, s, 1); }

/* ---- the limit: copy in, copy out, one counter per 64 KiB batch ------------------ */

static unsigned char *limit_buf;

static void *limit_producer(void *arg) {
    pair *w = (pair *)arg;
    const size_t ring = w->cfg->ring, size = w->size;
    const uint64_t publish_every = LIMIT_BATCH_BYTES;
    unsigned char *const buf = w->buf;
    sources src;
    uint64_t pos = 0, published = 0, read_seen = 0, seq = 0;
    int source = 0;
    pin_to_cpu(0);
    sources_make(&src, w->size);
    start_barrier(w);
    cpu_mark cpu0 = cpu_mark_now();
    for (;; seq++) {
        size_t off = (size_t)(pos & (ring - 1));           /* ring is a power of two */
        if (off + size > ring) pos += ring - off, off = 0; /* never split */
        if (pos + size - read_seen > ring) {
            /* Full: publish, then wait until half the ring is free, so the
               two sides do not fall into lockstep one batch apart. */
            if (published != pos)
                atomic_store_explicit(&w->lim_write, published = pos, memory_order_release);
            do {
                cpu_relax();
                read_seen = atomic_load_explicit(&w->lim_read, memory_order_acquire);
            } while (pos + size - read_seen > ring / 2);
        }
        memcpy(buf + off, src.text[source], size);
        source = next_source(source);
        pos += size;
        if (pos - published >= publish_every)
            atomic_store_explicit(&w->lim_write, published = pos, memory_order_release);
        if ((seq & 255u) == 0 && now_s() >= w->deadline) break;
    }
    atomic_store_explicit(&w->lim_write, pos, memory_order_release);
    atomic_store_explicit(&w->lim_done, 1, memory_order_release);
    w->out.producer_cpu = cpu_share_since(cpu0);
    sources_free(&src);
    return NULL;
}

static void *limit_consumer(void *arg) {
    pair *w = (pair *)arg;
    const size_t ring = w->cfg->ring, size = w->size;
    const unsigned char *const buf = w->buf;
    uint64_t pos = 0, released = 0, avail = 0;
    checker k = { copy_buffer(w->size), w->size, 0, 0, 0 };
    pin_to_cpu(1);
    start_barrier(w);
    w->t_start = now_s();
    cpu_mark cpu0 = cpu_mark_now();
    for (;;) {
        size_t off = (size_t)(pos & (ring - 1)); /* ring is a power of two */
        if (off + size > ring) pos += ring - off, off = 0;
        while (pos + size > avail) {
            int done = atomic_load_explicit(&w->lim_done, memory_order_acquire);
            if (released != pos)
                atomic_store_explicit(&w->lim_read, released = pos, memory_order_release);
            avail = atomic_load_explicit(&w->lim_write, memory_order_acquire);
            if (pos + size > avail && done) goto out;
            cpu_relax();
        }
        check_copy(&k, buf + off, size);
        pos += size;
        if (pos - released >= LIMIT_BATCH_BYTES)
            atomic_store_explicit(&w->lim_read, released = pos, memory_order_release);
    }
out:
    w->t_end = now_s();
    w->out.consumer_cpu = cpu_share_since(cpu0);
    w->out.messages = k.seq;
    w->out.bad = k.bad;
    free(k.dst);
    return NULL;
}

/* limit: the bytes alone, published once per 64 KiB: a ceiling no record
   format reaches. */
static sample run_limit(const config *cfg, size_t size) {
    pair w;
    memset(&w, 0, sizeof w);
    w.cfg = cfg;
    w.size = size;
    w.buf = limit_buf;
    w.deadline = now_s() + cfg->seconds;
    run_pair(&w, limit_producer, limit_consumer);
    return w.out;
}


/* ceiling: the library's own record loop written out by hand, like for
   like, with every check left out. The same records (an 8-byte header
   word, the length and the position's tag, stored last with release; the
   payload padded to 8; padding at the lap's end; a zero word after the
   last record), the same publish (the header per message, then write_pos)
   and the same release (read_pos once per batch: when the reader runs out
   of records), and the same hysteresis (a full producer waits for half the
   ring). Left out: validation, the sleeping words, statistics, callbacks,
   a blocking wait (both sides spin). What the ring costs above it is the
   price of its checks and its protocol. */
#define HAND_PAD 0xFFFFFFFFu
static uint64_t hand_header(uint64_t pos, uint32_t len) {
    return (uint64_t)((uint32_t)pos | 1u) << 32 | len;
}
static _Atomic uint64_t *hand_word(unsigned char *buf, size_t ring, uint64_t pos) {
    return (_Atomic uint64_t *)(void *)(buf + (pos & (ring - 1)));
}

static void *hand_producer(void *arg) {
    pair *w = (pair *)arg;
    const size_t ring = w->cfg->ring;
    const uint64_t rec = 8u + ((w->size + 7u) & ~(uint64_t)7u);
    unsigned char *const buf = w->buf;
    sources src;
    uint64_t pos = 0, read_seen = 0, seq = 0;
    int source = 0;
    pin_to_cpu(0);
    sources_make(&src, w->size);
    start_barrier(w);
    cpu_mark cpu0 = cpu_mark_now();
    for (;; seq++) {
        uint64_t off = pos & (ring - 1), need = off + rec > ring ? ring - off + rec : rec;
        if (pos + need + 8u - read_seen > ring) { /* full: wait for half the ring */
            read_seen = atomic_load_explicit(&w->lim_read, memory_order_acquire);
            while (pos + need + 8u - read_seen > ring / 2) {
                cpu_relax();
                read_seen = atomic_load_explicit(&w->lim_read, memory_order_acquire);
            }
        }
        if (off + rec > ring) { /* pad out the lap */
            atomic_store_explicit(hand_word(buf, ring, 0), 0u, memory_order_relaxed);
            atomic_store_explicit(hand_word(buf, ring, pos), hand_header(pos, HAND_PAD),
                                  memory_order_release);
            pos += ring - off;
            off = 0;
        }
        memcpy(buf + off + 8, src.text[source], w->size);
        source = next_source(source);
        atomic_store_explicit(hand_word(buf, ring, pos + rec), 0u, memory_order_relaxed);
        atomic_store_explicit(hand_word(buf, ring, pos), hand_header(pos, (uint32_t)w->size),
                              memory_order_release);
        pos += rec;
        atomic_store_explicit(&w->lim_write, pos, memory_order_release);
        if ((seq & 255u) == 0 && now_s() >= w->deadline) break;
    }
    atomic_store_explicit(&w->lim_done, 1, memory_order_release);
    w->out.producer_cpu = cpu_share_since(cpu0);
    sources_free(&src);
    return NULL;
}

static void *hand_consumer(void *arg) {
    pair *w = (pair *)arg;
    const size_t ring = w->cfg->ring;
    unsigned char *const buf = w->buf;
    uint64_t pos = 0, released = 0;
    checker k = { copy_buffer(w->size), w->size, 0, 0, 0 };
    pin_to_cpu(1);
    start_barrier(w);
    w->t_start = now_s();
    cpu_mark cpu0 = cpu_mark_now();
    for (;;) {
        uint64_t h = atomic_load_explicit(hand_word(buf, ring, pos), memory_order_acquire);
        uint32_t len = (uint32_t)h;
        if ((uint32_t)(h >> 32) != ((uint32_t)pos | 1u)) { /* nothing more: release the batch */
            if (released != pos)
                atomic_store_explicit(&w->lim_read, released = pos, memory_order_release);
            if (atomic_load_explicit(&w->lim_done, memory_order_acquire) &&
                atomic_load_explicit(&w->lim_write, memory_order_acquire) == pos)
                break;
            cpu_relax();
            continue;
        }
        if (len == HAND_PAD) {
            pos += ring - (pos & (ring - 1));
            continue;
        }
        check_copy(&k, buf + (pos & (ring - 1)) + 8, len);
        pos += 8u + ((len + 7u) & ~(uint64_t)7u);
    }
    w->t_end = now_s();
    w->out.consumer_cpu = cpu_share_since(cpu0);
    w->out.messages = k.seq;
    w->out.bad = k.bad;
    free(k.dst);
    return NULL;
}

static sample run_ceiling(const config *cfg, size_t size) {
    pair w;
    memset(&w, 0, sizeof w);
    w.cfg = cfg;
    w.size = size;
    w.buf = limit_buf;
    w.deadline = now_s() + cfg->seconds;
    memset(limit_buf, 0, cfg->ring); /* no tag from an earlier run may match */
    run_pair(&w, hand_producer, hand_consumer);
    return w.out;
}

/* ---- latency: 64-byte ping-pong ---------------------------------------------------- */

#define PING_SIZE 64

typedef struct pingpong {
    long iters;
    uint64_t *rtt; /* per round trip, ns */
    /* shared */
    void *regions[2];
    size_t region_size;
    /* pipe */
    int to_b[2], to_a[2];
    /* limit */
    _Atomic uint64_t flag_a, flag_b;
    atomic_int ready;
} pingpong;

static int copy_ping(void *user, const void *data, size_t len) {
    memcpy(user, data, len < PING_SIZE ? len : PING_SIZE);
    return 0;
}

static void *shared_echo(void *arg) {
    pingpong *pp = (pingpong *)arg;
    shared_ring_consumer in;
    shared_ring_producer out;
    unsigned char msg[PING_SIZE];
    pin_to_cpu(1);
    shared_ring_attach_consumer(&in, pp->regions[0], pp->region_size, NULL);
    shared_ring_attach_producer(&out, pp->regions[1], pp->region_size, NULL);
    while (shared_ring_read(&in, copy_ping, msg, SHARED_RING_FOREVER) > 0)
        shared_ring_write_bytes(&out, msg, PING_SIZE, SHARED_RING_FOREVER);
    return NULL;
}

static void latency_shared(pingpong *pp) {
    shared_ring_producer out;
    shared_ring_consumer in;
    unsigned char msg[PING_SIZE] = { 0 };
    pthread_t t;
    for (int i = 0; i < 2; i++) shared_ring_format(pp->regions[i], pp->region_size, 1u << 16, 0);
    shared_ring_attach_producer(&out, pp->regions[0], pp->region_size, NULL);
    shared_ring_attach_consumer(&in, pp->regions[1], pp->region_size, NULL);
    pthread_create(&t, NULL, shared_echo, pp);
    pin_to_cpu(0);
    for (long i = 0; i < pp->iters; i++) {
        uint64_t t0 = now_ns();
        shared_ring_write_bytes(&out, msg, PING_SIZE, SHARED_RING_FOREVER);
        shared_ring_read(&in, copy_ping, msg, SHARED_RING_FOREVER);
        pp->rtt[i] = now_ns() - t0;
    }
    shared_ring_close(&out);
    pthread_join(t, NULL);
}

static int read_exact(int fd, void *buf, size_t n) {
    while (n > 0) {
        ssize_t r = read(fd, buf, n);
        if (r <= 0) return -1;
        buf = (char *)buf + r;
        n -= (size_t)r;
    }
    return 0;
}

static void *pipe_echo(void *arg) {
    pingpong *pp = (pingpong *)arg;
    unsigned char msg[PING_SIZE];
    pin_to_cpu(1);
    while (read_exact(pp->to_b[0], msg, PING_SIZE) == 0)
        if (write(pp->to_a[1], msg, PING_SIZE) != PING_SIZE) break;
    return NULL;
}

static void latency_pipe(pingpong *pp) {
    unsigned char msg[PING_SIZE] = { 0 };
    pthread_t t;
    if (pipe(pp->to_b) != 0 || pipe(pp->to_a) != 0) abort();
    pthread_create(&t, NULL, pipe_echo, pp);
    pin_to_cpu(0);
    for (long i = 0; i < pp->iters; i++) {
        uint64_t t0 = now_ns();
        if (write(pp->to_b[1], msg, PING_SIZE) != PING_SIZE) abort();
        if (read_exact(pp->to_a[0], msg, PING_SIZE) != 0) abort();
        pp->rtt[i] = now_ns() - t0;
    }
    close(pp->to_b[1]);
    pthread_join(t, NULL);
    close(pp->to_b[0]);
    close(pp->to_a[0]);
    close(pp->to_a[1]);
}

static void *flag_echo(void *arg) {
    pingpong *pp = (pingpong *)arg;
    pin_to_cpu(1);
    for (uint64_t seq = 1; seq <= (uint64_t)pp->iters; seq++) {
        while (atomic_load_explicit(&pp->flag_a, memory_order_acquire) != seq) cpu_relax();
        atomic_store_explicit(&pp->flag_b, seq, memory_order_release);
    }
    return NULL;
}

static void latency_limit(pingpong *pp) {
    pthread_t t;
    atomic_store(&pp->flag_a, 0);
    atomic_store(&pp->flag_b, 0);
    pthread_create(&t, NULL, flag_echo, pp);
    pin_to_cpu(0);
    for (uint64_t seq = 1; seq <= (uint64_t)pp->iters; seq++) {
        uint64_t t0 = now_ns();
        atomic_store_explicit(&pp->flag_a, seq, memory_order_release);
        while (atomic_load_explicit(&pp->flag_b, memory_order_acquire) != seq) cpu_relax();
        pp->rtt[seq - 1] = now_ns() - t0;
    }
    pthread_join(t, NULL);
}

/* The ring's record format (header word with the position's tag, stored
   last with release order; the 8 bytes after the record zeroed first),
   written out by hand with nothing else: no handles, checks, stats or
   waits. A 64-byte message makes a 72-byte record, two cache lines, where
   a flag takes one. It polls the header the plain way (the library also
   asks for the record's second line while it polls), so it shows what the
   format costs, not a floor no ring can pass. */
#define RECORD_RING (1u << 16)
#define RECORD_SIZE ((PING_SIZE + 15u) & ~7u)

typedef struct record_ring {
    unsigned char *data;
    uint64_t pos;
} record_ring;

static _Atomic uint64_t *record_word(record_ring *r, uint64_t pos) {
    return (_Atomic uint64_t *)(void *)(r->data + (pos & (RECORD_RING - 1)));
}

/* Records never wrap: skip to offset 0 when one (and its end mark) would not fit. */
static void record_align(record_ring *r) {
    uint64_t off = r->pos & (RECORD_RING - 1);
    if (off + RECORD_SIZE + 8 > RECORD_RING) r->pos += RECORD_RING - off;
}

static void record_put(record_ring *r, const unsigned char *msg) {
    record_align(r);
    memcpy(r->data + (r->pos & (RECORD_RING - 1)) + 8, msg, PING_SIZE);
    atomic_store_explicit(record_word(r, r->pos + RECORD_SIZE), 0, memory_order_relaxed);
    atomic_store_explicit(record_word(r, r->pos),
                          (uint64_t)(uint32_t)(r->pos + 1) << 32 | PING_SIZE, memory_order_release);
    r->pos += RECORD_SIZE;
}

static void record_get(record_ring *r, unsigned char *msg) {
    record_align(r);
    while ((uint32_t)(atomic_load_explicit(record_word(r, r->pos), memory_order_acquire) >> 32) !=
           (uint32_t)(r->pos + 1))
        cpu_relax();
    memcpy(msg, r->data + (r->pos & (RECORD_RING - 1)) + 8, PING_SIZE);
    r->pos += RECORD_SIZE;
}

static void *record_echo(void *arg) {
    pingpong *pp = (pingpong *)arg;
    record_ring in = { pp->regions[0], 0 }, out = { pp->regions[1], 0 };
    unsigned char msg[PING_SIZE];
    pin_to_cpu(1);
    for (long i = 0; i < pp->iters; i++) {
        record_get(&in, msg);
        record_put(&out, msg);
    }
    return NULL;
}

static void latency_record(pingpong *pp) {
    record_ring out = { pp->regions[0], 0 }, in = { pp->regions[1], 0 };
    unsigned char msg[PING_SIZE] = { 0 };
    pthread_t t;
    memset(pp->regions[0], 0, RECORD_RING);
    memset(pp->regions[1], 0, RECORD_RING);
    pthread_create(&t, NULL, record_echo, pp);
    pin_to_cpu(0);
    for (long i = 0; i < pp->iters; i++) {
        uint64_t t0 = now_ns();
        record_put(&out, msg);
        record_get(&in, msg);
        pp->rtt[i] = now_ns() - t0;
    }
    pthread_join(t, NULL);
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct latency {
    double p50, p99;
} latency;

/* Round trips through fn, their times stored at rtt[0..iters). */
static void run_pingpong(void (*fn)(pingpong *), long iters, uint64_t *rtt) {
    pingpong *pp = calloc(1, sizeof *pp);
    pp->iters = iters;
    pp->rtt = rtt;
    pp->region_size = shared_ring_region_size(1u << 16, 0);
    pp->regions[0] = aligned_alloc(4096, pp->region_size);
    pp->regions[1] = aligned_alloc(4096, pp->region_size);
    fn(pp);
    free(pp->regions[0]);
    free(pp->regions[1]);
    free(pp);
}

/* p50 and p99 of v[0..n), times `scale`. Sorts v. */
static latency percentiles(uint64_t *v, long n, double scale) {
    latency l;
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    l.p50 = (double)v[n / 2] * scale;
    l.p99 = (double)v[(n * 99) / 100] * scale;
    return l;
}

/* One-way latency is half a round trip. Sorts v. */
static latency latency_of(uint64_t *v, long n) { return percentiles(v, n, 0.5); }

/* This machine's cross-core latency changes with where its virtual CPUs
   run, 2x to 6x, from one second to the next. So the ping-pongs take
   turns, LAT_ROUNDS chunks each: every variant sees the same slow and fast
   phases. Percentiles are over all round trips of a variant; the ratio is
   the median of the per-round ratios of the p50s. */
#define LAT_ROUNDS 10
#define LAT_VARIANTS 4
static double median_ratio(double *ratios) {
    qsort(ratios, LAT_ROUNDS, sizeof ratios[0], cmp_double);
    return (ratios[LAT_ROUNDS / 2 - 1] + ratios[LAT_ROUNDS / 2]) / 2.0;
}

/* ratio[0]: shared ÷ two flags; ratio[1]: shared ÷ the hand-written record ring. */
static void measure_latencies(long iters, latency out[LAT_VARIANTS], double ratio[2]) {
    static void (*const fns[LAT_VARIANTS])(pingpong *) = { latency_shared, latency_pipe,
                                                           latency_limit, latency_record };
    const long chunk = iters / LAT_ROUNDS;
    uint64_t *all[LAT_VARIANTS], *tmp = calloc((size_t)chunk, sizeof *tmp);
    double to_flags[LAT_ROUNDS], to_records[LAT_ROUNDS];
    for (int v = 0; v < LAT_VARIANTS; v++)
        all[v] = calloc((size_t)(chunk * LAT_ROUNDS), sizeof **all);
    for (int round = 0; round < LAT_ROUNDS; round++) {
        double p50[LAT_VARIANTS];
        for (int v = 0; v < LAT_VARIANTS; v++) {
            uint64_t *at = all[v] + (size_t)(chunk * round);
            run_pingpong(fns[v], chunk, at);
            memcpy(tmp, at, (size_t)chunk * sizeof *tmp);
            p50[v] = latency_of(tmp, chunk).p50;
        }
        to_flags[round] = p50[0] / p50[2];
        to_records[round] = p50[0] / p50[3];
    }
    for (int v = 0; v < LAT_VARIANTS; v++) {
        out[v] = latency_of(all[v], chunk * LAT_ROUNDS);
        free(all[v]);
    }
    ratio[0] = median_ratio(to_flags);
    ratio[1] = median_ratio(to_records);
    free(tmp);
}


/* ---- fan-in: one consumer serving many rings ----------------------------------------
   One producer thread writes 64-byte messages round-robin over N rings of
   FAN_RING bytes each; the consumer takes one message per wait_any call
   (peek, copy out and check, release), as a server serving its clients in
   turn does. Throughput is reported as a ratio to one ring, per machine
   state. Wake-up: the consumer sleeps in wait_any with its spin off, and
   the producer stamps a message into one of the rings every millisecond;
   the time from stamp to the consumer holding it. */
#define FAN_SIZE 64
#define FAN_RING 16384u
#define FAN_MAX 1000
#define FAN_WAKEUPS 300
static const int fan_rings[] = { 1, 16, 256, 1000 };
static const int fan_wake_rings[] = { 1, 16, 128, 129, 256, 1000 };
#define NFAN ((int)(sizeof fan_rings / sizeof fan_rings[0]))
#define NFAN_WAKE ((int)(sizeof fan_wake_rings / sizeof fan_wake_rings[0]))

typedef struct fan {
    int n;
    unsigned char *regions;
    size_t each;
    shared_ring_producer prod[FAN_MAX];
    shared_ring_consumer cons[FAN_MAX], *set[FAN_MAX];
    double deadline;
    long stamps; /* wake-up runs: this many stamped messages; 0: throughput */
    uint64_t *lat;
} fan;
static fan fan_run;

static void *fan_producer(void *arg) {
    fan *f = (fan *)arg;
    unsigned char msg[FAN_SIZE];
    int at = 0;
    pin_to_cpu(0);
    memset(msg, 'F', sizeof msg);
    for (uint64_t seq = 0; f->stamps == 0; seq++) {
        shared_ring_write_bytes(&f->prod[at], msg, sizeof msg, SHARED_RING_FOREVER);
        if (++at == f->n) at = 0;
        if ((seq & 255u) == 0 && now_s() >= f->deadline) break;
    }
    for (long i = 0; i < f->stamps; i++) {
        struct timespec gap = { 0, 1000000 };
        uint64_t t;
        nanosleep(&gap, NULL); /* the consumer is asleep by now */
        t = now_ns();
        memcpy(msg, &t, sizeof t);
        shared_ring_write_bytes(&f->prod[(i * 7919) % f->n], msg, sizeof msg, SHARED_RING_FOREVER);
    }
    for (int i = 0; i < f->n; i++) shared_ring_close(&f->prod[i]);
    return NULL;
}

/* Serve the set until every ring is closed; the messages taken. */
static uint64_t fan_consume(fan *f, uint64_t *bad) {
    unsigned char dst[FAN_SIZE];
    int open = f->n;
    uint64_t got = 0;
    pin_to_cpu(1);
    while (open > 0) {
        shared_ring_message m;
        int at = shared_ring_wait_any(f->set, (size_t)f->n, SHARED_RING_FOREVER), r;
        r = at >= 0 ? shared_ring_peek(f->set[at], &m) : at;
        if (r == SHARED_RING_CLOSED) {
            f->set[at] = NULL;
            open--;
            continue;
        }
        if (r != SHARED_RING_OK) {
            (*bad)++;
            break;
        }
        if (m.len != FAN_SIZE) (*bad)++;
        memcpy(dst, m.data, m.len <= FAN_SIZE ? m.len : FAN_SIZE);
        shared_ring_release(f->set[at]);
        if (f->stamps != 0 && got < (uint64_t)f->stamps) {
            uint64_t t;
            memcpy(&t, dst, sizeof t);
            f->lat[got] = now_ns() - t;
        } else if (f->stamps == 0 && dst[FAN_SIZE - 1] != 'F') {
            (*bad)++;
        }
        got++;
    }
    return got;
}

/* One run over n fresh rings; messages a second. */
static double fan_once(int n, double seconds, long stamps, uint32_t spin_ns, uint64_t *bad) {
    fan *f = &fan_run;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    pthread_t t;
    uint64_t got;
    double t0;
    o.spin_ns = spin_ns;
    f->n = n;
    for (int i = 0; i < n; i++) {
        unsigned char *r = f->regions + (size_t)i * f->each;
        if (shared_ring_format(r, f->each, FAN_RING, 0) != SHARED_RING_OK ||
            shared_ring_attach_producer(&f->prod[i], r, f->each, NULL) != SHARED_RING_OK ||
            shared_ring_attach_consumer(&f->cons[i], r, f->each, &o) != SHARED_RING_OK)
            abort();
        f->set[i] = &f->cons[i];
    }
    f->stamps = stamps;
    f->deadline = now_s() + seconds;
    t0 = now_s();
    pthread_create(&t, NULL, fan_producer, f);
    got = fan_consume(f, bad);
    double rate = (double)got / (now_s() - t0);
    pthread_join(t, NULL);
    for (int i = 0; i < n; i++) {
        shared_ring_detach_producer(&f->prod[i]);
        shared_ring_detach_consumer(&f->cons[i]);
    }
    if (stamps != 0 && got < (uint64_t)stamps) (*bad)++;
    return rate;
}

static void measure_fan_in(const config *cfg, uint64_t *bad) {
    static double rate[NFAN][MAX_REPS], state[NFAN][MAX_REPS];
    latency wake[NFAN_WAKE];
    double wake_state[NFAN_WAKE];
    long stamps = cfg->quick ? 100 : FAN_WAKEUPS;
    fan *f = &fan_run;
    f->each = shared_ring_region_size(FAN_RING, 0);
    f->regions = aligned_alloc(4096, f->each * FAN_MAX);
    f->lat = calloc((size_t)stamps, sizeof *f->lat);
    memset(f->regions, 0, f->each * FAN_MAX); /* fault the pages in once */
    /* Each repetition runs every count, starting at a different one. */
    for (int r = 0; r < cfg->reps; r++)
        for (int k = 0; k < NFAN; k++) {
            int i = (k + r) % NFAN;
            state[i][r] = machine_state_ns();
            rate[i][r] = fan_once(fan_rings[i], cfg->seconds, 0, 0, bad);
        }
    for (int i = 0; i < NFAN_WAKE; i++) {
        wake_state[i] = machine_state_ns();
        fan_once(fan_wake_rings[i], 0, stamps, SHARED_RING_OFF, bad);
        wake[i] = percentiles(f->lat, stamps, 1e-3);
    }
    if (cfg->json) {
        for (int i = 0; i < NFAN; i++)
            printf("{\"variant\": \"fan-in\", \"rings\": %d, \"size\": %d, \"msgs_per_s\": %.0f}\n",
                   fan_rings[i], FAN_SIZE, median(rate[i], cfg->reps));
        for (int i = 0; i < NFAN_WAKE; i++)
            printf("{\"variant\": \"fan-in-wakeup\", \"rings\": %d, \"us_p50\": %.1f, "
                   "\"us_p99\": %.1f}\n",
                   fan_wake_rings[i], wake[i].p50, wake[i].p99);
    } else {
        printf("\nFan-in: one producer round-robin over N rings of %u bytes, one consumer taking "
               "one %d-byte message per shared_ring_wait_any; ratio to one ring per machine state, "
               "median over the repetitions where both runs saw that state (pairs)\n\n",
               FAN_RING, FAN_SIZE);
        printf("| rings | msgs/s (median) | ÷ 1 ring, fast | ÷ 1 ring, slow |\n|---:|---:|---:|---:|\n");
        for (int i = 0; i < NFAN; i++) {
            printf("| %d | %.3g |", fan_rings[i], median(rate[i], cfg->reps));
            for (int st = 0; st < NSTATES; st++) {
                double x[MAX_REPS];
                int n = 0;
                for (int r = 0; r < cfg->reps; r++)
                    if (state_of(state[i][r]) == st && state_of(state[0][r]) == st)
                        x[n++] = rate[i][r] / rate[0][r];
                if (n == 0)
                    printf(" never seen |");
                else
                    printf(" %.2f× (%d) |", median(x, n), n);
            }
            printf("\n");
        }
        printf("\nFan-in wake-up: the consumer asleep in wait_any (spin off), one stamped message "
               "a millisecond into one of the rings, %ld each; µs from stamp to message in hand\n\n",
               stamps);
        printf("| rings | p50 | p99 | machine state |\n|---:|---:|---:|---|\n");
        for (int i = 0; i < NFAN_WAKE; i++)
            printf("| %d | %.1f | %.1f | %s |\n", fan_wake_rings[i], wake[i].p50, wake[i].p99,
                   state_names[state_of(wake_state[i])]);
    }
    free(f->regions);
    free(f->lat);
}

/* ---- latency in a dense stream: what trailing costs ---------------------------------
   The producer stamps each 64-byte message with the clock and sends one
   every DENSE_GAP_NS; the consumer's callback takes the stamp out. That is
   dense enough (16 messages within trail_ns) for shared_ring_read to trail,
   so a message may wait up to trail_ns more; trail_ns 0 is the same stream
   read without trailing. The two take turns, LAT_ROUNDS chunks each. */
#define DENSE_GAP_NS 100u

typedef struct dense {
    void *region;
    size_t region_size;
    long n, got;
    uint64_t *lat; /* send to callback, per message, ns */
} dense;

static void *dense_producer(void *arg) {
    dense *d = (dense *)arg;
    shared_ring_producer p;
    unsigned char msg[PING_SIZE] = { 0 };
    uint64_t next;
    pin_to_cpu(0);
    shared_ring_attach_producer(&p, d->region, d->region_size, NULL);
    next = now_ns();
    for (long i = 0; i < d->n; i++, next += DENSE_GAP_NS) {
        uint64_t t;
        while ((t = now_ns()) < next) cpu_relax();
        memcpy(msg, &t, sizeof t);
        shared_ring_write_bytes(&p, msg, PING_SIZE, SHARED_RING_FOREVER);
    }
    shared_ring_close(&p);
    return NULL;
}

static int dense_stamp(void *user, const void *data, size_t len) {
    dense *d = (dense *)user;
    uint64_t t;
    (void)len;
    memcpy(&t, data, sizeof t);
    if (d->got < d->n) d->lat[d->got++] = now_ns() - t;
    return 0;
}

/* A trail of 0 here means none: SHARED_RING_OFF (0 would be the default). */
static uint32_t off_if_zero(uint32_t v) { return v != 0 ? v : SHARED_RING_OFF; }

/* n stamped messages read with this trail_ns; each one's wait at lat[]. */
static void run_dense(uint32_t trail_ns, long n, uint64_t *lat) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_consumer c;
    dense d = { NULL, shared_ring_region_size(1u << 20, 0), n, 0, lat };
    pthread_t t;
    o.trail_ns = off_if_zero(trail_ns);
    d.region = aligned_alloc(4096, d.region_size);
    shared_ring_format(d.region, d.region_size, 1u << 20, 0);
    shared_ring_attach_consumer(&c, d.region, d.region_size, &o);
    pthread_create(&t, NULL, dense_producer, &d);
    pin_to_cpu(1);
    while (shared_ring_read(&c, dense_stamp, &d, SHARED_RING_FOREVER) >= 0) {
    }
    pthread_join(t, NULL);
    if (d.got != n) abort(); /* every message is stamped and seen */
    free(d.region);
}

/* out[0]: trail_ns at its default; out[1]: trail_ns 0. One-way ns. */
static void measure_dense(long iters, latency out[2]) {
    const long chunk = iters / LAT_ROUNDS;
    uint64_t *all[2];
    for (int v = 0; v < 2; v++) all[v] = calloc((size_t)(chunk * LAT_ROUNDS), sizeof **all);
    for (int round = 0; round < LAT_ROUNDS; round++)
        for (int v = 0; v < 2; v++)
            run_dense(v == 0 ? SHARED_RING_DEFAULT_TRAIL_NS : 0u, chunk,
                      all[v] + (size_t)(chunk * round));
    for (int v = 0; v < 2; v++) {
        out[v] = percentiles(all[v], chunk * LAT_ROUNDS, 1.0);
        free(all[v]);
    }
}

/* ---- hardware counters ------------------------------------------------------------- */

static int have_hw_counters(void) {
    struct perf_event_attr a;
    int fd;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.disabled = 1;
    a.exclude_kernel = 1;
    fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

/* ---- reporting --------------------------------------------------------------------- */

typedef struct variant {
    const char *name;
    sample (*run)(const config *, size_t);
    int spins; /* its threads never block: < NOISY_CPU of a CPU means noise */
} variant;

/* The pipe's threads block in read(2) and write(2) by design, so their CPU
   share says nothing about the machine: pipe runs are never left out. */
static const variant variants[] = {
    { "shared-buffer", run_shared_buffer, 0 }, { "shared-string", run_shared_string, 0 },
    { "shared-corked", run_shared_corked, 0 }, { "pipe-buffer", run_pipe_buffer, 0 },
    { "pipe-string", run_pipe_string, 0 },     { "limit", run_limit, 1 },
    { "ceiling", run_ceiling, 1 },
    { "many-rings", run_many_rings, 0 },       { "mutex-queue", run_mutex_queue, 0 },
    { "shared-process", run_shared_process, 0 },
    { "shared-claim", run_shared_claimed, 0 },   { "process-claim", run_process_claimed, 0 },
    { "shared-claim64", run_shared_claimed_64, 0 },
};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))
enum { V_SBUF, V_SSTR, V_SCORK, V_PBUF, V_PSTR, V_LIMIT, V_CEIL, V_MANY, V_MUTEX, V_SPROC,
       V_SCLAIM, V_PCLAIM, V_SCLAIM64 };

static sample results[NVARIANTS][MAX_SIZES][MAX_REPS];
static const config *active_cfg;

/* Is the `len`-byte item of a comma-separated list at `item` this name? */
static int item_is(const char *item, size_t len, const char *name) {
    return strlen(name) == len && strncmp(item, name, len) == 0;
}

/* Is variant v (or "latency") selected by --variants? */
static int selected_name(const char *name) {
    const char *p = active_cfg->only;
    if (p == NULL) return 1;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (item_is(p, len, name)) return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}
static int selected(int v) { return selected_name(variants[v].name); }

static const char *size_label(size_t s, char *buf, size_t n) {
    if (s >= 1024 && s % 1024 == 0)
        snprintf(buf, n, "%zu KiB", s / 1024);
    else
        snprintf(buf, n, "%zu B", s);
    return buf;
}

static void column_header(const config *cfg, const char *first) {
    char b[32];
    printf("| %s |", first);
    for (int s = 0; s < cfg->nsizes; s++) printf(" %s |", size_label(cfg->sizes[s], b, sizeof b));
    printf("\n|---|");
    for (int s = 0; s < cfg->nsizes; s++) printf("---:|");
    printf("\n");
}

/* Is repetition r usable for variant v at size s? The noisy ones are left
   out, unless every repetition was noisy (then all are used, and the count
   of left-out runs says so). */
static int kept(const config *cfg, int v, int s, int r) {
    int clean = 0;
    for (int i = 0; i < cfg->reps; i++) clean += !results[v][s][i].noisy;
    return clean == 0 || !results[v][s][r].noisy;
}

/* The kept values of variant v at size s; returns how many. */
static int values(const config *cfg, int v, int s, int bytes, double *out) {
    int n = 0;
    for (int r = 0; r < cfg->reps; r++)
        if (kept(cfg, v, s, r))
            out[n++] = bytes ? results[v][s][r].bytes_per_s : results[v][s][r].msgs_per_s;
    return n;
}

static int left_out(const config *cfg, int v, int s) {
    int n = 0;
    for (int r = 0; r < cfg->reps; r++) n += !kept(cfg, v, s, r);
    return n;
}

static void print_rate_table(const config *cfg, int bytes) {
    double vals[MAX_REPS], scale = bytes ? 1.0 / (1024.0 * 1024.0 * 1024.0) : 1e-6;
    printf("\n%s (median of %d repetitions less the noisy ones, [min–max])\n\n",
           bytes ? "Throughput, GiB/s" : "Message rate, M msg/s", cfg->reps);
    column_header(cfg, "variant");
    for (int v = 0; v < NVARIANTS; v++) {
        if (!selected(v)) continue;
        printf("| %s |", variants[v].name);
        for (int s = 0; s < cfg->nsizes; s++) {
            int n = values(cfg, v, s, bytes, vals);
            printf(" %.3g [%.3g–%.3g] |", median(vals, n) * scale, min_of(vals, n) * scale,
                   max_of(vals, n) * scale);
        }
        printf("\n");
    }
}

/* Median over repetitions of the ratio within each repetition: both runs of
   a pair ran seconds apart, so machine noise largely cancels. */
/* a ÷ b per repetition (the two runs of a pair ran back to back), over
   the repetitions neither of whose runs was noisy (all, if none is left):
   the median, with p10 and p90 in *lo and *hi and the pair count in *n. */
static double paired_ratio(const config *cfg, int a, int b, int s, double *lo, double *hi,
                           int *n) {
    double r[MAX_REPS], all[MAX_REPS];
    const double *use = r;
    *n = 0;
    for (int i = 0; i < cfg->reps; i++) {
        all[i] = results[a][s][i].msgs_per_s / results[b][s][i].msgs_per_s;
        if (kept(cfg, a, s, i) && kept(cfg, b, s, i)) r[(*n)++] = all[i];
    }
    if (*n == 0) {
        use = all;
        *n = cfg->reps;
    }
    *lo = quantile(use, *n, 0.1);
    *hi = quantile(use, *n, 0.9);
    return median(use, *n);
}


/* The median of a ÷ b over the repetitions in which both runs saw `state`
   (noisy ones left out); *n is how many pairs. */
static double state_ratio(const config *cfg, int a, int b, int s, int state, int *n) {
    double r[MAX_REPS];
    *n = 0;
    for (int i = 0; i < cfg->reps; i++) {
        const sample *x = &results[a][s][i], *y = &results[b][s][i];
        if (state_of(x->flag_ns) != state || state_of(y->flag_ns) != state) continue;
        if (!kept(cfg, a, s, i) || !kept(cfg, b, s, i)) continue;
        r[(*n)++] = x->msgs_per_s / y->msgs_per_s;
    }
    return *n > 0 ? median(r, *n) : 0;
}

static void print_state_ratio_table(const config *cfg) {
    static const struct {
        const char *label;
        int a, b;
    } rows[] = {
        { "shared-buffer ÷ ceiling", V_SBUF, V_CEIL },
        { "shared-buffer ÷ limit", V_SBUF, V_LIMIT },
        { "shared-corked ÷ limit", V_SCORK, V_LIMIT },
        { "shared-buffer ÷ pipe-buffer", V_SBUF, V_PBUF },
        { "shared-process ÷ shared-buffer", V_SPROC, V_SBUF },
    };
    int seen[NSTATES] = { 0, 0 }, runs = 0;
    for (int v = 0; v < NVARIANTS; v++) {
        if (!selected(v)) continue;
        for (int s = 0; s < cfg->nsizes; s++)
            for (int r = 0; r < cfg->reps; r++) {
                seen[state_of(results[v][s][r].flag_ns)]++;
                runs++;
            }
    }
    printf("\nRatios per machine state (a two-flag ping-pong before every run: one-way p50 "
           "<= %.0f ns is fast; fast in %d of %d runs, slow in %d). Median of the "
           "repetitions whose two runs saw the same state, (pairs)\n\n",
           FAST_STATE_NS, seen[STATE_FAST], runs, seen[STATE_SLOW]);
    char b[32];
    printf("| ratio | state |");
    for (int s = 0; s < cfg->nsizes; s++) printf(" %s |", size_label(cfg->sizes[s], b, sizeof b));
    printf("\n|---|---|");
    for (int s = 0; s < cfg->nsizes; s++) printf("---:|");
    printf("\n");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (!selected(rows[i].a) || !selected(rows[i].b)) continue;
        for (int st = 0; st < NSTATES; st++) {
            printf("| %s | %s |", rows[i].label, state_names[st]);
            for (int s = 0; s < cfg->nsizes; s++) {
                int n;
                double x = state_ratio(cfg, rows[i].a, rows[i].b, s, st, &n);
                if (n == 0)
                    printf(" never seen |");
                else
                    printf(" %.2f× (%d) |", x, n);
            }
            printf("\n");
        }
    }
}

static void print_ratio_table(const config *cfg) {
    static const struct {
        const char *label;
        int a, b;
    } rows[] = {
        { "shared-buffer ÷ pipe-buffer", V_SBUF, V_PBUF },
        { "shared-string ÷ pipe-string", V_SSTR, V_PSTR },
        { "shared-buffer ÷ ceiling", V_SBUF, V_CEIL },
        { "shared-buffer ÷ limit", V_SBUF, V_LIMIT },
        { "shared-corked ÷ limit", V_SCORK, V_LIMIT },
        { "shared-string ÷ shared-buffer", V_SSTR, V_SBUF },
        { "shared-corked ÷ shared-buffer", V_SCORK, V_SBUF },
        { "many-rings ÷ mutex-queue (4 producers)", V_MANY, V_MUTEX },
        { "shared-process ÷ shared-buffer (fenced ÷ fenceless)", V_SPROC, V_SBUF },
        { "shared-claim ÷ shared-buffer (claim + commit ÷ write_bytes)", V_SCLAIM, V_SBUF },
        { "shared-claim64 ÷ shared-claim (claims at 64 bytes ÷ at 8)", V_SCLAIM64, V_SCLAIM },
        { "process-claim ÷ shared-process (the same, between processes)", V_PCLAIM, V_SPROC },
    };
    printf("\nRatios: median of per-repetition ratios [p10–p90] (pairs)\n\n");
    column_header(cfg, "ratio");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (!selected(rows[i].a) || !selected(rows[i].b)) continue;
        printf("| %s |", rows[i].label);
        for (int s = 0; s < cfg->nsizes; s++) {
            double lo, hi;
            int n;
            double x = paired_ratio(cfg, rows[i].a, rows[i].b, s, &lo, &hi, &n);
            printf(" %.2f× [%.2f–%.2f] (%d) |", x, lo, hi, n);
        }
        printf("\n");
    }
}

static void print_sleep_table(const config *cfg) {
    printf("\nBlocking path: OS sleeps per million messages (median; producer / consumer)\n\n");
    column_header(cfg, "variant");
    for (int v = V_SBUF; v <= V_SCORK; v++) {
        if (!selected(v)) continue;
        printf("| %s |", variants[v].name);
        for (int s = 0; s < cfg->nsizes; s++) {
            double p[MAX_REPS], c[MAX_REPS];
            int n = 0;
            for (int r = 0; r < cfg->reps; r++) {
                double m = (double)results[v][s][r].messages / 1e6;
                if (!kept(cfg, v, s, r)) continue;
                p[n] = (double)results[v][s][r].producer_sleeps / m;
                c[n++] = (double)results[v][s][r].consumer_sleeps / m;
            }
            printf(" %.1f / %.1f |", median(p, n), median(c, n));
        }
        printf("\n");
    }
}

static void print_noise_table(const config *cfg) {
    int total = 0, out = 0;
    printf("\nLeft out as noisy: runs where a spinning thread got less than %.0f%% of a CPU "
           "(CPU time / wall time)\n\n",
           NOISY_CPU * 100);
    column_header(cfg, "variant");
    for (int v = 0; v < NVARIANTS; v++) {
        if (!selected(v) || !variants[v].spins) continue;
        printf("| %s |", variants[v].name);
        for (int s = 0; s < cfg->nsizes; s++) {
            int n = 0;
            for (int r = 0; r < cfg->reps; r++) n += results[v][s][r].noisy;
            total += cfg->reps;
            out += left_out(cfg, v, s);
            printf(" %d of %d |", n, cfg->reps);
        }
        printf("\n");
    }
    printf("\n%d of %d runs left out of the medians.\n", out, total);
}

static void print_json(const config *cfg) {
    double vals[MAX_REPS], bytes[MAX_REPS];
    int total = 0, out = 0;
    for (int v = 0; v < NVARIANTS; v++)
        for (int s = 0; s < cfg->nsizes; s++) {
            if (!selected(v)) continue;
            int n = values(cfg, v, s, 0, vals);
            values(cfg, v, s, 1, bytes);
            total += cfg->reps;
            out += left_out(cfg, v, s);
            printf("{\"variant\": \"%s\", \"size\": %zu, \"msgs_per_s\": %.0f, "
                   "\"bytes_per_s\": %.0f, \"min\": %.0f, \"max\": %.0f, \"reps\": %d, "
                   "\"excluded\": %d}\n",
                   variants[v].name, cfg->sizes[s], median(vals, n), median(bytes, n),
                   min_of(bytes, n), max_of(bytes, n), cfg->reps, left_out(cfg, v, s));
        }
    printf("{\"noisy_runs_excluded\": %d, \"runs\": %d, \"noisy_cpu_share\": %.2f}\n", out, total,
           NOISY_CPU);
}

static void write_svg(const config *cfg, const char *path) {
    static const char *colors[] = { "#1f77b4", "#2ca02c", "#17becf", "#d62728", "#ff7f0e",
                                    "#000000", "#7f7f7f", "#9467bd", "#8c564b", "#e377c2",
                                    "#bcbd22", "#aec7e8", "#98df8a" };
    _Static_assert(sizeof colors / sizeof colors[0] == NVARIANTS, "one color per variant");
    const double W = 760, H = 440, L = 70, R = 170, T = 30, B = 50;
    double lo = 1e30, hi = 0, vals[MAX_REPS];
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return;
    }
    for (int v = 0; v < NVARIANTS; v++)
        for (int s = 0; s < cfg->nsizes; s++) {
            if (!selected(v)) continue;
            int n = values(cfg, v, s, 1, vals);
            double m = median(vals, n) / 1073741824.0;
            lo = m < lo ? m : lo;
            hi = m > hi ? m : hi;
        }
    double ylo = pow(10, floor(log10(lo))), yhi = pow(10, ceil(log10(hi)));
    double xlo = log2((double)cfg->sizes[0]), xhi = log2((double)cfg->sizes[cfg->nsizes - 1]);
    if (xhi <= xlo) xhi = xlo + 1;
#define XPOS(sz) (L + (log2((double)(sz)) - xlo) / (xhi - xlo) * (W - L - R))
#define YPOS(g) (H - B - (log10(g) - log10(ylo)) / (log10(yhi) - log10(ylo)) * (H - T - B))
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f,
            "<text x=\"%.0f\" y=\"18\" font-size=\"14\">Throughput vs message size "
            "(GiB/s, log scales; median of %d)</text>\n",
            L, cfg->reps);
    for (double g = ylo; g <= yhi * 1.001; g *= 10) {
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L,
                W - R, YPOS(g), YPOS(g));
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6,
                YPOS(g) + 4, g);
    }
    for (int s = 0; s < cfg->nsizes; s++) {
        char b[32];
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                XPOS(cfg->sizes[s]), H - B + 18, size_label(cfg->sizes[s], b, sizeof b));
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">message size</text>\n",
            (L + W - R) / 2, H - 10);
    for (int v = 0; v < NVARIANTS; v++) {
        if (!selected(v)) continue;
        fprintf(f, "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"%s\" points=\"", colors[v]);
        for (int s = 0; s < cfg->nsizes; s++) {
            int n = values(cfg, v, s, 1, vals);
            fprintf(f, "%.1f,%.1f ", XPOS(cfg->sizes[s]), YPOS(median(vals, n) / 1073741824.0));
        }
        fprintf(f, "\"/>\n<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>\n", W - R + 10,
                T + 20.0 + 18.0 * v, colors[v], variants[v].name);
    }
    fprintf(f, "</svg>\n");
#undef XPOS
#undef YPOS
    fclose(f);
}

/* ---- main ---------------------------------------------------------------------------- */

/* Every name in a --variants list must be one we run: a throughput
   variant or "latency". */
static int known_variants(const char *list) {
    while (*list) {
        size_t len = strcspn(list, ",");
        int known = item_is(list, len, "latency") || item_is(list, len, "fan-in");
        for (int v = 0; v < NVARIANTS; v++) known |= item_is(list, len, variants[v].name);
        if (!known) {
            fprintf(stderr, "bench: unknown variant '%.*s' (see --help)\n", (int)len, list);
            return 0;
        }
        list += len + (list[len] == ',');
    }
    return 1;
}

static void usage(FILE *to) {
    fprintf(to, "usage: bench [options]\n"
                "  --quick         short run (under 30 s): 3 reps of 0.1 s\n"
                "  --json          one JSON object per line instead of tables\n"
                "  --svg FILE      also write a throughput chart as SVG\n"
                "  --sizes LIST    message sizes in bytes, comma separated\n"
                "                  (default 64,256,1024,4096,16384,65536)\n"
                "  --ring BYTES    ring capacity, a power of two (default 8388608)\n"
                "  --reps N        repetitions per measurement (default 5)\n"
                "  --seconds S     seconds per measurement (default 0.4)\n"
                "  --variants LIST run only these (comma separated); tables then show\n"
                "                  only what ran. Names: shared-buffer, shared-string,\n"
                "                  shared-corked, pipe-buffer, pipe-string, limit, ceiling,\n"
                "                  many-rings, mutex-queue (4 producers, one consumer),\n"
                "                  shared-process (shared-buffer between two processes),\n"
                "                  shared-claim, process-claim (claim + commit of the same\n"
                "                  bytes, between threads and between processes),\n"
                "                  shared-claim64 (claims aligned to 64 bytes),\n"
                "                  latency, fan-in (one producer over 1 to 1,000 rings)\n"
                "  --help          this text\n");
}

static int parse_args(config *cfg, int argc, char **argv) {
    static const size_t defaults[] = { 64, 256, 1024, 4096, 16384, 65536 };
    memset(cfg, 0, sizeof *cfg);
    cfg->nsizes = 6;
    memcpy(cfg->sizes, defaults, sizeof defaults);
    cfg->ring = 8u << 20;
    cfg->reps = 5;
    cfg->seconds = 0.4;
    cfg->latency_iters = 200000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--quick")) {
            cfg->quick = 1;
            cfg->reps = 3;
            cfg->seconds = 0.1;
            cfg->latency_iters = 50000;
        } else if (!strcmp(a, "--json")) {
            cfg->json = 1;
        } else if (!strcmp(a, "--svg") && val) {
            cfg->svg = argv[++i];
        } else if (!strcmp(a, "--sizes") && val) {
            char *copy = strdup(argv[++i]), *tok, *save = NULL;
            cfg->nsizes = 0;
            for (tok = strtok_r(copy, ",", &save); tok && cfg->nsizes < MAX_SIZES;
                 tok = strtok_r(NULL, ",", &save))
                cfg->sizes[cfg->nsizes++] = strtoull(tok, NULL, 10);
            free(copy);
        } else if (!strcmp(a, "--ring") && val) {
            cfg->ring = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--variants") && val) {
            cfg->only = argv[++i];
            if (!known_variants(cfg->only)) return -1;
        } else if (!strcmp(a, "--reps") && val) {
            cfg->reps = atoi(argv[++i]);
        } else if (!strcmp(a, "--seconds") && val) {
            cfg->seconds = atof(argv[++i]);
        } else {
            usage(stderr);
            return -1;
        }
    }
    if (cfg->nsizes < 1 || cfg->reps < 1 || cfg->reps > MAX_REPS || cfg->seconds <= 0 ||
        shared_ring_region_size(cfg->ring, 0) == 0) {
        fprintf(stderr,
                "bench: bad --sizes, --reps (1..%d), --seconds or --ring "
                "(a power of two)\n",
                MAX_REPS);
        return -1;
    }
    for (int s = 0; s < cfg->nsizes; s++) {
        if (cfg->sizes[s] < 1 || cfg->sizes[s] > cfg->ring / 4) {
            fprintf(stderr, "bench: size %zu must be 1..ring/4\n", cfg->sizes[s]);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    config cfg;
    latency lat[LAT_VARIANTS];
    double lat_ratio[2] = { 0, 0 };
    latency dense_lat[2];
    uint64_t bad = 0;
    int runs = 0, total;
    if (parse_args(&cfg, argc, argv) != 0) return 2;
    active_cfg = &cfg;
    shared_region_bytes = shared_ring_region_size(cfg.ring, 0);
    shared_region = aligned_alloc(4096, shared_region_bytes);
    limit_buf = aligned_alloc(4096, cfg.ring);
    process_region = mmap(NULL, shared_region_bytes, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (process_region == MAP_FAILED) return 1;
    memset(shared_region, 0, shared_region_bytes); /* fault the pages in once */
    memset(process_region, 0, shared_region_bytes);
    memset(limit_buf, 0, cfg.ring);
    total = 0;
    for (int v = 0; v < NVARIANTS; v++) total += selected(v) * cfg.reps * cfg.nsizes;
    /* Interleave: every repetition runs every variant at every size, so slow
       phases of a noisy machine hit all variants alike. */
    for (int r = 0; r < cfg.reps; r++)
        for (int s = 0; s < cfg.nsizes; s++)
            for (int v = 0; v < NVARIANTS; v++) {
                double flag_ns;
                if (!selected(v)) continue;
                flag_ns = machine_state_ns();
                results[v][s][r] = variants[v].run(&cfg, cfg.sizes[s]);
                results[v][s][r].flag_ns = flag_ns;
                results[v][s][r].noisy =
                    variants[v].spins && (results[v][s][r].producer_cpu < NOISY_CPU ||
                                          results[v][s][r].consumer_cpu < NOISY_CPU);
                bad += results[v][s][r].bad;
                if (results[v][s][r].messages == 0) bad++;
                fprintf(stderr, "\rbench: %d/%d runs", ++runs, total);
            }
    int with_latency = selected_name("latency");
    if (with_latency) {
        fprintf(stderr, "\rbench: latency...        ");
        measure_latencies(cfg.latency_iters, lat, lat_ratio);
        measure_dense(cfg.latency_iters, dense_lat);
    }
    fprintf(stderr, "\rbench: done                \n");

    if (cfg.json) {
        static const char *names[] = { "latency-shared", "latency-pipe", "latency-limit",
                                       "latency-record" };
        print_json(&cfg);
        for (int i = 0; i < LAT_VARIANTS && with_latency; i++)
            printf("{\"variant\": \"%s\", \"size\": %d, \"one_way_ns_p50\": %.0f, "
                   "\"one_way_ns_p99\": %.0f, \"iterations\": %ld}\n",
                   names[i], PING_SIZE, lat[i].p50, lat[i].p99, cfg.latency_iters);
        if (with_latency)
            printf("{\"variant\": \"latency-ratio\", \"shared_over_limit_p50\": %.3f, "
                   "\"shared_over_record_p50\": %.3f, \"rounds\": %d}\n",
                   lat_ratio[0], lat_ratio[1], LAT_ROUNDS);
        for (int i = 0; i < 2 && with_latency; i++)
            printf("{\"variant\": \"%s\", \"size\": %d, \"gap_ns\": %u, \"trail_ns\": %u, "
                   "\"one_way_ns_p50\": %.0f, \"one_way_ns_p99\": %.0f, \"messages\": %ld}\n",
                   i == 0 ? "dense-trailing" : "dense-no-trailing", PING_SIZE, DENSE_GAP_NS,
                   i == 0 ? SHARED_RING_DEFAULT_TRAIL_NS : 0u, dense_lat[i].p50, dense_lat[i].p99,
                   cfg.latency_iters);
    } else {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        printf("shared_ring.h %s benchmark: %ld CPUs, ring %zu bytes, %d reps of %.2f s, "
               "pipe buffer %d bytes\n",
               SHARED_RING_VERSION, cpus, cfg.ring, cfg.reps, cfg.seconds, pipe_bytes);
        print_rate_table(&cfg, 1);
        print_rate_table(&cfg, 0);
        print_ratio_table(&cfg);
        print_state_ratio_table(&cfg);
        print_sleep_table(&cfg);
        print_noise_table(&cfg);
        if (with_latency) {
            printf(
                "\nLatency: %d-byte ping-pong, one-way ns (half a round trip), %ld round trips\n\n",
                PING_SIZE, cfg.latency_iters);
            printf("| variant | p50 | p99 |\n|---|---:|---:|\n");
            printf("| shared (two rings) | %.0f | %.0f |\n", lat[0].p50, lat[0].p99);
            printf("| pipe (two pipes) | %.0f | %.0f |\n", lat[1].p50, lat[1].p99);
            printf("| limit (two flags) | %.0f | %.0f |\n", lat[2].p50, lat[2].p99);
            printf("| hand-written record ring (%u-byte records) | %.0f | %.0f |\n", RECORD_SIZE,
                   lat[3].p50, lat[3].p99);
            printf("\nOne-way p50, median of %d interleaved rounds: shared ÷ limit %.2f×, "
                   "shared ÷ hand-written record ring %.2f×\n",
                   LAT_ROUNDS, lat_ratio[0], lat_ratio[1]);
            printf("\nLatency in a dense stream: %d-byte messages, one every %u ns, send to "
                   "callback, ns, %ld messages each, %d interleaved rounds\n\n",
                   PING_SIZE, DENSE_GAP_NS, cfg.latency_iters, LAT_ROUNDS);
            printf("| shared_ring_read | p50 | p99 |\n|---|---:|---:|\n");
            printf("| trailing (trail_ns %u) | %.0f | %.0f |\n", SHARED_RING_DEFAULT_TRAIL_NS,
                   dense_lat[0].p50, dense_lat[0].p99);
            printf("| without (trail_ns 0) | %.0f | %.0f |\n", dense_lat[1].p50, dense_lat[1].p99);
        }
        printf("\nInstructions per cycle: %s\n",
               have_hw_counters() ? "(counters present; not collected by this version)"
                                  : "n/a (no hardware performance counters on this machine)");
    }
    if (selected_name("fan-in")) {
        fflush(stdout);
        fprintf(stderr, "bench: fan-in...\n");
        measure_fan_in(&cfg, &bad);
    }
    if (cfg.svg) write_svg(&cfg, cfg.svg);
    if (bad) fprintf(stderr, "bench: %llu messages failed their check\n", (unsigned long long)bad);
    return bad ? 1 : 0;
}
