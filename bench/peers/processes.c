/* processes: shared_ring.h between two processes, against what such a
   program would use instead: Aeron's C SPSC ring over the same shared
   memory, a Unix stream socket and a pipe. The producer is a forked child
   pinned to CPU 0, the consumer the parent on CPU 1; fixed-size messages
   from ready-made sources; the consumer copies each one out and checks
   its first and last byte. Repetitions interleave the variants (each
   starts with another one), so a slow phase of the machine hits all
   alike; ratios are medians of per-repetition ratios with p10-p90.

   Built and run by bench/peers/peers.sh (make peers): with Aeron's ring
   from the checkout you name, or without it (-DNO_AERON: socket and pipe
   only). The implementation is in bench/impl.c, a file of its own, as
   users of an stb-style header build it. Every region is shared memory
   from shared_ring_shm_anonymous, pre-faulted in both processes
   (shared_ring_shm_prefault), Aeron's too.

   Variants:
     shared       write_bytes FOREVER / shared_ring_read FOREVER, defaults:
                  the producer fences (its consumer may sleep)
     shared-poll  the same with a consumer that polls as Aeron's does:
                  attached with SHARED_RING_POLL_ONLY (it is never woken,
                  so the producer publishes without a fence) and a spin of
                  up to a second before it would nap
     aeron-claim  aeron_spsc_rb_try_claim + memcpy + commit, spin on FULL;
                  aeron_spsc_rb_read, spin while it returns 0
     unix-socket  write() per message into a socketpair, read() in 64 KiB
     pipe         the same through a pipe
     iceoryx      Eclipse iceoryx's C binding (built with WITH_ICEORYX when
                  its Debian packages are installed; peers.sh starts RouDi):
                  iox_pub_loan_chunk + memcpy + publish, the subscriber
                  polling iox_sub_take_chunk (queue 256, the publisher
                  waits for a slow subscriber: nothing is dropped)
   and one-way latency by a 64-byte ping-pong over two rings (the ring's
   and Aeron's; not iceoryx's).

   processes [REPS] [SECONDS] */
#define _GNU_SOURCE
#define SHARED_RING_SHM
#include "../../shared_ring.h"
#include "../machine_state.h"

#ifndef NO_AERON
#include "concurrent/aeron_spsc_rb.h"
#include "aeron_err_stub.h"
#endif

#ifdef WITH_ICEORYX
#include "iceoryx_binding_c/log.h"
#include "iceoryx_binding_c/publisher.h"
#include "iceoryx_binding_c/runtime.h"
#include "iceoryx_binding_c/subscriber.h"
#endif

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "peer_common.h"

#define RING (8u << 20)
#define MAX_REPS 64
#define CHUNK 65536
enum { V_SHARED, V_POLL, V_AERON, V_SOCKET, V_PIPE, V_ICEORYX, NV };
static const char *const names[NV] = { "shared", "shared-poll", "aeron-claim", "unix-socket",
                                       "pipe", "iceoryx" };
static int available(int v) {
#ifdef NO_AERON
    if (v == V_AERON) return 0;
#endif
#ifndef WITH_ICEORYX
    if (v == V_ICEORYX) return 0;
#endif
    (void)v;
    return 1;
}
static int is_shared(int v) { return v == V_SHARED || v == V_POLL; }

/* A consumer that polls, as Aeron's does: it spins (up to a second) and
   is never woken, so its producer publishes without a fence. */
static void poll_only(shared_ring_options *o) {
    o->flags = SHARED_RING_POLL_ONLY;
    o->spin_ns = 1000000000u;
    o->spin_max_ns = 1000000000u;
}

/* The control block both processes see, in shared memory of its own. */
typedef struct control {
    atomic_int ready;
    _Atomic int done;
    _Atomic int drained; /* iceoryx: the consumer took the last chunk */
    uint64_t seen, bad;  /* iceoryx: what its consumer process counted */
    double t0, t1;
} control;

/* One run's shared memory and descriptors. */
typedef struct run {
    int variant;
    size_t size;
    double seconds;
    shared_ring_shm *shm; /* the ring (ours or Aeron's) */
    control *k;
    int fd[2]; /* socket or pipe: [0] the consumer's, [1] the producer's */
} run;

static size_t region_bytes(void) { return shared_ring_region_size(RING, 0); }

static void write_all(int fd, const unsigned char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) _exit(4);
        p += w;
        n -= (size_t)w;
    }
}

static void produce(run *r) {
    unsigned char *src[NSRC];
    unsigned s = 0;
    uint64_t n = 0;
    shared_ring_producer p;
#ifndef NO_AERON
    aeron_spsc_rb_t rb;
#endif
    pin_to_cpu(0);
    shared_ring_shm_prefault(r->shm);
    for (unsigned i = 0; i < NSRC; i++) {
        src[i] = aligned_alloc(4096, (r->size + 4095) & ~(size_t)4095);
        memset(src[i], 'x', r->size);
        src[i][0] = src[i][r->size - 1] = mark(i);
    }
    if (is_shared(r->variant) &&
        shared_ring_attach_producer(&p, r->shm->region, region_bytes(), NULL) != SHARED_RING_OK)
        _exit(2);
#ifndef NO_AERON
    if (r->variant == V_AERON &&
        aeron_spsc_rb_init(&rb, r->shm->region, RING + AERON_RB_TRAILER_LENGTH) != 0)
        _exit(2);
#endif
#ifdef WITH_ICEORYX
    iox_pub_storage_t pub_storage;
    iox_pub_t pub = NULL;
    if (r->variant == V_ICEORYX) {
        char name[64];
        iox_pub_options_t po;
        snprintf(name, sizeof name, "shared_ring_pub_%d", (int)getpid());
        iox_set_loglevel(Iceoryx_LogLevel_Fatal);
        iox_runtime_init(name);
        iox_pub_options_init(&po);
        po.subscriberTooSlowPolicy = ConsumerTooSlowPolicy_WAIT_FOR_CONSUMER;
        pub = iox_pub_init(&pub_storage, "shared_ring", "bench", "messages", &po);
        while (!iox_pub_has_subscribers(pub)) usleep(1000);
    }
#endif
    meet(&r->k->ready);
    double deadline = now_s() + r->seconds;
    for (;; n++) {
        if (is_shared(r->variant)) {
            shared_ring_write_bytes(&p, src[s], r->size, SHARED_RING_FOREVER);
#ifndef NO_AERON
        } else if (r->variant == V_AERON) {
            int32_t at;
            while ((at = aeron_spsc_rb_try_claim(&rb, 1, r->size)) < 0) __builtin_ia32_pause();
            memcpy(rb.buffer + at, src[s], r->size);
            aeron_spsc_rb_commit(&rb, at);
#endif
#ifdef WITH_ICEORYX
        } else if (r->variant == V_ICEORYX) {
            void *chunk;
            while (iox_pub_loan_chunk(pub, &chunk, (uint32_t)r->size) != AllocationResult_SUCCESS)
                __builtin_ia32_pause();
            memcpy(chunk, src[s], r->size);
            iox_pub_publish_chunk(pub, chunk);
#endif
        } else {
            write_all(r->fd[1], src[s], r->size);
        }
        s = s + 1 == NSRC ? 0 : s + 1;
        if ((n & 255u) == 0 && now_s() >= deadline) break;
    }
    if (is_shared(r->variant)) shared_ring_close(&p);
    if (r->fd[1] >= 0) close(r->fd[1]);
    atomic_store(&r->k->done, 1);
#ifdef WITH_ICEORYX
    if (pub != NULL) { /* its chunks live as long as it does */
        while (!atomic_load(&r->k->drained)) usleep(1000);
        iox_pub_deinit(pub);
        exit(0); /* the runtime's destructor tells RouDi this process ended */
    }
#endif
    _exit(0);
}

#ifdef WITH_ICEORYX
/* Subscribes, and waits until RouDi has connected the publisher. */
static iox_sub_t iceoryx_subscribe(iox_sub_storage_t *storage) {
    iox_sub_options_t so;
    iox_sub_t sub;
    iox_sub_options_init(&so);
    so.queueCapacity = 256;
    so.queueFullPolicy = QueueFullPolicy_BLOCK_PRODUCER;
    sub = iox_sub_init(storage, "shared_ring", "bench", "messages", &so);
    while (iox_sub_get_subscription_state(sub) != SubscribeState_SUBSCRIBED) usleep(1000);
    return sub;
}

/* The consumer, in a process of its own: an iceoryx runtime does not
   survive a fork, so the parent (which forks every run) never starts one. */
static void consume_iceoryx(size_t size, control *k) {
    iox_sub_storage_t storage;
    checker cc, *c = &cc;
    iox_sub_t sub;
    char name[64];
    memset(c, 0, sizeof *c);
    c->copy = malloc(size);
    c->size = size;
    pin_to_cpu(1);
    snprintf(name, sizeof name, "shared_ring_sub_%d", (int)getpid());
    iox_set_loglevel(Iceoryx_LogLevel_Fatal);
    iox_runtime_init(name);
    sub = iceoryx_subscribe(&storage);
    meet(&k->ready);
    k->t0 = now_s();
    for (;;) {
        const void *chunk;
        int done = atomic_load(&k->done);
        if (iox_sub_take_chunk(sub, &chunk) == ChunkReceiveResult_SUCCESS) {
            check(c, chunk, c->size);
            iox_sub_release_chunk(sub, chunk);
        } else if (done) {
            break; /* nothing came after the producer said it was done */
        } else {
            __builtin_ia32_pause();
        }
    }
    k->t1 = now_s();
    k->seen = c->seen;
    k->bad = c->bad;
    atomic_store(&k->drained, 1);
    iox_sub_deinit(sub);
    /* exit, not _exit: the runtime's destructor tells RouDi this process
       ended (and removes its socket in /tmp); RouDi would otherwise try to
       kill it at its own SIGTERM, fail, and abort without removing its files */
    exit(0);
}
#endif

/* Reads the stream in CHUNK pieces and checks each whole message. */
static void consume_stream(run *r, checker *c) {
    static unsigned char buf[CHUNK * 2];
    size_t have = 0;
    for (;;) {
        ssize_t got = read(r->fd[0], buf + have, CHUNK);
        size_t at = 0;
        if (got <= 0) break;
        have += (size_t)got;
        for (; have - at >= r->size; at += r->size) check(c, buf + at, r->size);
        memmove(buf, buf + at, have - at);
        have -= at;
    }
}

static void consume(run *r, checker *c) {
    shared_ring_consumer cons;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    if (r->variant == V_POLL) poll_only(&o);
    if (is_shared(r->variant)) {
        /* the producer formats nothing: the parent formatted before the fork */
        if (shared_ring_attach_consumer(&cons, r->shm->region, region_bytes(), &o) != SHARED_RING_OK)
            exit(2);
    }
    meet(&r->k->ready);
    if (is_shared(r->variant)) {
        while (shared_ring_read(&cons, shared_cb, c, SHARED_RING_FOREVER) >= 0) {
        }
#ifndef NO_AERON
    } else if (r->variant == V_AERON) {
        aeron_spsc_rb_t rb; /* init fills the struct only: a view of the shared buffer */
        if (aeron_spsc_rb_init(&rb, r->shm->region, RING + AERON_RB_TRAILER_LENGTH) != 0) exit(2);
        for (;;) {
            int done = atomic_load(&r->k->done);
            if (aeron_spsc_rb_read(&rb, aeron_cb, c, SIZE_MAX) == 0) {
                if (done && aeron_spsc_rb_read(&rb, aeron_cb, c, SIZE_MAX) == 0) break;
                __builtin_ia32_pause();
            }
        }
#endif
    } else {
        consume_stream(r, c);
    }
    if (is_shared(r->variant)) shared_ring_detach_consumer(&cons);
}

/* One run: messages per second the consumer saw. */
static double throughput(int variant, size_t size, double seconds, shared_ring_shm *shm,
                         control *k) {
    run r = { variant, size, seconds, shm, k, { -1, -1 } };
    checker c;
    double t0, t1;
    pid_t child;
    int status = 0;
    memset(&c, 0, sizeof c);
    c.copy = malloc(size);
    c.size = size;
    atomic_store(&k->ready, 0);
    atomic_store(&k->done, 0);
    atomic_store(&k->drained, 0);
    if (is_shared(variant)) shared_ring_format(shm->region, region_bytes(), RING, 0);
    if (variant == V_AERON) memset(shm->region, 0, RING + 4096); /* the producer inits */
    if (variant == V_SOCKET && socketpair(AF_UNIX, SOCK_STREAM, 0, r.fd) != 0) exit(1);
    if (variant == V_PIPE && pipe(r.fd) != 0) exit(1);
    child = fork();
    if (child < 0) exit(1);
    if (child == 0) {
        if (r.fd[0] >= 0) close(r.fd[0]);
        produce(&r);
    }
    if (r.fd[1] >= 0) close(r.fd[1]);
    pin_to_cpu(1);
#ifdef WITH_ICEORYX
    if (variant == V_ICEORYX) {
        pid_t consumer = fork();
        if (consumer < 0) exit(1);
        if (consumer == 0) consume_iceoryx(size, k);
        if (waitpid(consumer, &status, 0) != consumer || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            exit(1);
        c.seen = k->seen;
        c.bad = k->bad;
        t0 = k->t0;
        t1 = k->t1;
    } else
#endif
    {
        t0 = now_s();
        consume(&r, &c);
        t1 = now_s();
    }
    if (r.fd[0] >= 0) close(r.fd[0]);
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: the producer failed (status %d)\n", names[variant], status);
        exit(1);
    }
    if (c.bad) {
        fprintf(stderr, "%s: %llu bad messages\n", names[variant], (unsigned long long)c.bad);
        exit(1);
    }
    free(c.copy);
    return (double)c.seen / (t1 - t0);
}

/* ---- latency: A sends 64 bytes on one ring, B echoes on the other ------- */

#define PING 64
#define PING_RING (1u << 16)
enum { L_SHARED, L_POLL, L_AERON, NL };
static const char *const lat_names[NL] = { "shared", "shared-poll", "aeron" };

typedef struct pinger {
    int kind;
    shared_ring_producer p;
    shared_ring_consumer c;
#ifndef NO_AERON
    aeron_spsc_rb_t out, in;
#endif
} pinger;

static int copy_out(void *user, const void *d, size_t n) {
    memcpy(user, d, n);
    return 0;
}
#ifndef NO_AERON
static void copy_aeron(int32_t t, const void *d, size_t n, void *user) {
    (void)t;
    memcpy(user, d, n);
}
static void aeron_view(aeron_spsc_rb_t *rb, void *mem) {
    if (aeron_spsc_rb_init(rb, mem, PING_RING + AERON_RB_TRAILER_LENGTH) != 0) exit(2);
}
#endif

/* `out` and `in` formatted (or zeroed, Aeron) already. */
static void pinger_attach(pinger *g, int kind, void *out, void *in) {
    size_t bytes = shared_ring_region_size(PING_RING, 0);
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    g->kind = kind;
    if (kind == L_POLL) poll_only(&o);
    if (kind != L_AERON) {
        if (shared_ring_attach_producer(&g->p, out, bytes, NULL) != SHARED_RING_OK ||
            shared_ring_attach_consumer(&g->c, in, bytes, &o) != SHARED_RING_OK)
            exit(2);
    }
#ifndef NO_AERON
    else {
        aeron_view(&g->out, out);
        aeron_view(&g->in, in);
    }
#endif
}

static void ping_send(pinger *g, unsigned char *msg) {
    if (g->kind != L_AERON) {
        shared_ring_write_bytes(&g->p, msg, PING, SHARED_RING_FOREVER);
        return;
    }
#ifndef NO_AERON
    while (aeron_spsc_rb_write(&g->out, 1, msg, PING) != AERON_RB_SUCCESS) __builtin_ia32_pause();
#endif
}

static void ping_receive(pinger *g, unsigned char *msg) {
    if (g->kind == L_SHARED) {
        while (shared_ring_read(&g->c, copy_out, msg, SHARED_RING_FOREVER) <= 0) {
        }
    } else if (g->kind == L_POLL) {
        while (shared_ring_read_some(&g->c, copy_out, msg) <= 0) __builtin_ia32_pause();
    }
#ifndef NO_AERON
    else {
        while (aeron_spsc_rb_read(&g->in, copy_aeron, msg, 1) == 0) __builtin_ia32_pause();
    }
#endif
}

static void pinger_detach(pinger *g) {
    if (g->kind == L_AERON) return;
    shared_ring_detach_producer(&g->p);
    shared_ring_detach_consumer(&g->c);
}

/* `iters` round trips; one-way times in out[0..iters). */
static void latency(int kind, long iters, shared_ring_shm *a, shared_ring_shm *b, double *out) {
    size_t bytes = shared_ring_region_size(PING_RING, 0);
    unsigned char msg[PING] = { 0 };
    pinger g;
    pid_t child;
    int status = 0;
    for (int i = 0; i < 2; i++) {
        shared_ring_shm *m = i == 0 ? a : b;
        memset(m->region, 0, bytes);
        if (kind != L_AERON) shared_ring_format(m->region, bytes, PING_RING, 0);
    }
    child = fork();
    if (child < 0) exit(1);
    if (child == 0) { /* the echo: reads a, writes b */
        pin_to_cpu(1);
        shared_ring_shm_prefault(a);
        shared_ring_shm_prefault(b);
        pinger_attach(&g, kind, b->region, a->region);
        for (long i = 0; i < iters; i++) {
            ping_receive(&g, msg);
            ping_send(&g, msg);
        }
        pinger_detach(&g);
        _exit(0);
    }
    pin_to_cpu(0);
    pinger_attach(&g, kind, a->region, b->region);
    for (long i = 0; i < iters; i++) {
        double t0 = now_s();
        ping_send(&g, msg);
        ping_receive(&g, msg);
        out[i] = (now_s() - t0) * 1e9 / 2;
    }
    pinger_detach(&g);
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        exit(1);
}

/* v sorted: the value at quantile q (nearest rank). */
static double quantile(const double *v, int n, double q) {
    int i = (int)(q * (n - 1) + 0.5);
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

#define LAT_ROUNDS 10
#define LAT_CHUNK 20000
static void print_latency(void) {
    static double all[NL][LAT_ROUNDS * LAT_CHUNK];
    double ratio[NL][LAT_ROUNDS], tmp[LAT_CHUNK];
    shared_ring_shm a, b;
    size_t bytes = shared_ring_region_size(PING_RING, 0);
    int nl = available(V_AERON) ? NL : L_AERON;
    if (shared_ring_shm_anonymous(&a, bytes) != SHARED_RING_OK ||
        shared_ring_shm_anonymous(&b, bytes) != SHARED_RING_OK)
        exit(1);
    shared_ring_shm_prefault(&a);
    shared_ring_shm_prefault(&b);
    for (int round = 0; round < LAT_ROUNDS; round++) {
        double p50[NL];
        for (int k = 0; k < nl; k++) {
            double *at = all[k] + round * LAT_CHUNK;
            latency(k, LAT_CHUNK, &a, &b, at);
            memcpy(tmp, at, sizeof tmp);
            p50[k] = median(tmp, LAT_CHUNK);
        }
        for (int k = 0; k < nl; k++) ratio[k][round] = p50[k] / p50[nl - 1];
    }
    printf("\nOne-way latency between processes, 64-byte ping-pong, ns (%d interleaved rounds "
           "of %d)\n\n| variant | p50 | p99 | p50 ÷ %s's (median of the rounds [p10–p90]) |\n"
           "|---|---:|---:|---:|\n",
           LAT_ROUNDS, LAT_CHUNK, lat_names[nl - 1]);
    for (int k = 0; k < nl; k++) {
        qsort(all[k], LAT_ROUNDS * LAT_CHUNK, sizeof all[k][0], cmp_double);
        qsort(ratio[k], LAT_ROUNDS, sizeof ratio[k][0], cmp_double);
        printf("| %s | %.0f | %.0f | %.2f× [%.2f–%.2f] |\n", lat_names[k],
               all[k][LAT_ROUNDS * LAT_CHUNK / 2], all[k][LAT_ROUNDS * LAT_CHUNK * 99 / 100],
               median(ratio[k], LAT_ROUNDS), quantile(ratio[k], LAT_ROUNDS, 0.1),
               quantile(ratio[k], LAT_ROUNDS, 0.9));
    }
    shared_ring_shm_close(&a);
    shared_ring_shm_close(&b);
}

int main(int argc, char **argv) {
    static const size_t sizes[] = { 64, 256, 1024, 4096, 16384, 65536 };
    enum { NS = sizeof sizes / sizeof sizes[0] };
    static const int pairs[][2] = { { V_SHARED, V_AERON },  { V_POLL, V_AERON },
                                    { V_POLL, V_SHARED },   { V_SHARED, V_SOCKET },
                                    { V_SHARED, V_PIPE },   { V_SHARED, V_ICEORYX } };
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    double seconds = argc > 2 ? atof(argv[2]) : 0.4;
    static double rate[NV][NS][MAX_REPS];
    shared_ring_shm ring, ctl;
    control *k;
    if (reps < 1 || reps > MAX_REPS || seconds <= 0) {
        fprintf(stderr, "usage: processes [REPS 1..%d] [SECONDS]\n", MAX_REPS);
        return 2;
    }
    if (shared_ring_shm_anonymous(&ring, region_bytes() + 4096) != SHARED_RING_OK ||
        shared_ring_shm_anonymous(&ctl, 4096) != SHARED_RING_OK)
        return 1;
    shared_ring_shm_prefault(&ring);
    k = (control *)ctl.region;
    signal(SIGPIPE, SIG_IGN);
    for (int r = 0; r < reps; r++)
        for (int s = 0; s < NS; s++)
            for (int j = 0; j < NV; j++) {
                int v = (j + r) % NV; /* each repetition starts with another variant */
                if (available(v)) rate[v][s][r] = throughput(v, sizes[s], seconds, &ring, k);
            }
    printf("shared_ring %s between two processes (fork, pinned, shared memory pre-faulted): "
           "8 MiB rings, %d interleaved reps of %.2f s, %ld CPUs\n\n"
           "Message rate, M msg/s (median)\n\n| variant |",
           SHARED_RING_VERSION, reps, seconds, sysconf(_SC_NPROCESSORS_ONLN));
    for (int s = 0; s < NS; s++) printf(" %zu B |", sizes[s]);
    printf("\n|---|");
    for (int s = 0; s < NS; s++) printf("---:|");
    printf("\n");
    for (int v = 0; v < NV; v++) {
        if (!available(v)) continue;
        printf("| %s |", names[v]);
        for (int s = 0; s < NS; s++) {
            double tmp[MAX_REPS];
            memcpy(tmp, rate[v][s], sizeof tmp);
            printf(" %.3g |", median(tmp, reps) / 1e6);
        }
        printf("\n");
    }
    printf("\nRatios: median of per-repetition ratios [p10–p90] (pairs)\n\n| ratio |");
    for (int s = 0; s < NS; s++) printf(" %zu B |", sizes[s]);
    printf("\n|---|");
    for (int s = 0; s < NS; s++) printf("---:|");
    printf("\n");
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        int ours = pairs[i][0], other = pairs[i][1];
        if (!available(other)) continue;
        printf("| %s ÷ %s |", names[ours], names[other]);
        for (int s = 0; s < NS; s++) {
            double q[MAX_REPS];
            for (int r = 0; r < reps; r++) q[r] = rate[ours][s][r] / rate[other][s][r];
            qsort(q, (size_t)reps, sizeof q[0], cmp_double);
            printf(" %.2f× [%.2f–%.2f] (%d) |", median(q, reps), quantile(q, reps, 0.1),
                   quantile(q, reps, 0.9), reps);
        }
        printf("\n");
    }
    print_latency();
    shared_ring_shm_close(&ring);
    shared_ring_shm_close(&ctl);
    return 0;
}
