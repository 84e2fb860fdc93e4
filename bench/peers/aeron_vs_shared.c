/* aeron_vs_shared: shared_ring.h and Aeron's C SPSC ring buffer
   (aeron_spsc_rb) side by side, in one process, with the same loop as
   bench/bench.c: one producer thread and one consumer thread on two CPUs,
   fixed-size messages from ready-made sources, a consumer that copies each
   message out and checks its first and last byte. Repetitions interleave
   the variants, so a slow phase of the machine hits all of them alike.

   Built and run by bench/peers/peers.sh, which compiles Aeron's ring from
   a checkout the user names (nothing of Aeron's is part of this project).

   shared_ring's implementation is linked from bench/impl.c, a file of its
   own, as users of an stb-style header build it (so the header's inline
   fast path is what runs here).

   Variants:
     shared        shared_ring_write_bytes + shared_ring_read (blocking),
                   default options (the consumer trails a dense stream)
     shared-no-trail  the same with trail_ns off
     aeron-claim   aeron_spsc_rb_try_claim + memcpy + commit, spin on FULL;
                   aeron_spsc_rb_read, spin while it returns 0
     aeron-write   aeron_spsc_rb_write (its own copy), same reader
   and a 64-byte ping-pong (two rings each) for one-way latency. Before each
   run a two-flag ping-pong says whether the machine is in its fast or its
   slow state (bench/machine_state.h); ratios are given per state. */
#define _GNU_SOURCE
#include "../../shared_ring.h"
#include "../machine_state.h"

#include "concurrent/aeron_spsc_rb.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aeron_err_stub.h"
#include "peer_common.h"

#define RING (8u << 20)
#define MAX_REPS 32
enum { V_SHARED, V_NO_TRAIL, V_CLAIM, V_WRITE, NV };
static const char *const names[NV] = { "shared", "shared-no-trail", "aeron-claim", "aeron-write" };
static int is_shared(int variant) { return variant == V_SHARED || variant == V_NO_TRAIL; }

typedef struct run {
    int variant;
    size_t size;
    double seconds;
    void *mem;          /* the shared_ring region, or Aeron's buffer */
    aeron_spsc_rb_t rb; /* Aeron's view of mem */
    atomic_int ready, done;
    uint64_t received, bad;
    double t0, t1;
} run;

static void *producer(void *arg) {
    run *r = (run *)arg;
    unsigned char *src[NSRC];
    unsigned s = 0;
    uint64_t n = 0;
    shared_ring_producer p;
    pin_to_cpu(0);
    for (unsigned i = 0; i < NSRC; i++) {
        src[i] = malloc(r->size);
        memset(src[i], 'x', r->size);
        src[i][0] = src[i][r->size - 1] = mark(i);
    }
    if (is_shared(r->variant))
        shared_ring_attach_producer(&p, r->mem, shared_ring_region_size(RING, 0), NULL);
    meet(&r->ready);
    double deadline = now_s() + r->seconds;
    for (;; n++) {
        if (is_shared(r->variant)) {
            shared_ring_write_bytes(&p, src[s], r->size, SHARED_RING_FOREVER);
        } else if (r->variant == V_CLAIM) {
            int32_t at;
            while ((at = aeron_spsc_rb_try_claim(&r->rb, 1, r->size)) < 0) __builtin_ia32_pause();
            memcpy(r->rb.buffer + at, src[s], r->size); /* at: the message offset */
            aeron_spsc_rb_commit(&r->rb, at);
        } else {
            while (aeron_spsc_rb_write(&r->rb, 1, src[s], r->size) != AERON_RB_SUCCESS)
                __builtin_ia32_pause();
        }
        s = s + 1 == NSRC ? 0 : s + 1;
        if ((n & 255u) == 0 && now_s() >= deadline) break;
    }
    if (is_shared(r->variant)) shared_ring_close(&p);
    atomic_store(&r->done, 1);
    for (unsigned i = 0; i < NSRC; i++) free(src[i]);
    return NULL;
}

static void consume(run *r) {
    checker k = { malloc(r->size), r->size, 0, 0, 0 };
    shared_ring_consumer c;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    pin_to_cpu(1);
    if (r->variant == V_NO_TRAIL) o.trail_ns = SHARED_RING_OFF;
    if (is_shared(r->variant))
        shared_ring_attach_consumer(&c, r->mem, shared_ring_region_size(RING, 0), &o);
    meet(&r->ready);
    r->t0 = now_s();
    if (is_shared(r->variant)) {
        while (shared_ring_read(&c, shared_cb, &k, SHARED_RING_FOREVER) >= 0) {
        }
    } else {
        for (;;) {
            int done = atomic_load(&r->done);
            if (aeron_spsc_rb_read(&r->rb, aeron_cb, &k, SIZE_MAX) == 0) {
                if (done) break;
                __builtin_ia32_pause();
            }
        }
    }
    r->t1 = now_s();
    r->received = k.seen;
    r->bad = k.bad;
    free(k.copy);
}

static double throughput(int variant, size_t size, double seconds, void *mem) {
    run r;
    pthread_t t;
    memset(&r, 0, sizeof r);
    r.variant = variant;
    r.size = size;
    r.seconds = seconds;
    r.mem = mem;
    if (is_shared(variant)) {
        shared_ring_format(mem, shared_ring_region_size(RING, 0), RING, 0);
    } else {
        memset(mem, 0, RING + AERON_RB_TRAILER_LENGTH);
        if (aeron_spsc_rb_init(&r.rb, mem, RING + AERON_RB_TRAILER_LENGTH) != 0) exit(1);
    }
    pthread_create(&t, NULL, producer, &r);
    consume(&r);
    pthread_join(t, NULL);
    if (r.bad) {
        fprintf(stderr, "%s: %llu bad messages\n", names[variant], (unsigned long long)r.bad);
        exit(1);
    }
    return (double)r.received / (r.t1 - r.t0);
}

/* ---- ping-pong: A sends 64 bytes on one ring, B echoes on another -------- */

#define PING 64
typedef struct pingpong {
    int variant;
    long iters;
    void *mem[2];
    aeron_spsc_rb_t rb[2];
    double *rtt;
} pingpong;

static int copy_shared(void *user, const void *d, size_t n) {
    memcpy(user, d, n);
    return 0;
}
static void copy_aeron(int32_t t, const void *d, size_t n, void *user) {
    (void)t;
    memcpy(user, d, n);
}

static void send_one(pingpong *pp, shared_ring_producer *p, int ring, unsigned char *msg) {
    if (pp->variant == V_SHARED)
        shared_ring_write_bytes(p, msg, PING, SHARED_RING_FOREVER);
    else
        while (aeron_spsc_rb_write(&pp->rb[ring], 1, msg, PING) != AERON_RB_SUCCESS)
            __builtin_ia32_pause();
}

static int receive_one(pingpong *pp, shared_ring_consumer *c, int ring, unsigned char *msg) {
    if (pp->variant == V_SHARED)
        return shared_ring_read(c, copy_shared, msg, SHARED_RING_FOREVER) > 0;
    while (aeron_spsc_rb_read(&pp->rb[ring], copy_aeron, msg, 1) == 0) __builtin_ia32_pause();
    return 1;
}

static void *echo(void *arg) {
    pingpong *pp = (pingpong *)arg;
    shared_ring_producer p;
    shared_ring_consumer c;
    unsigned char msg[PING];
    pin_to_cpu(1);
    if (pp->variant == V_SHARED) {
        shared_ring_attach_consumer(&c, pp->mem[0], shared_ring_region_size(1u << 16, 0), NULL);
        shared_ring_attach_producer(&p, pp->mem[1], shared_ring_region_size(1u << 16, 0), NULL);
    }
    for (long i = 0; i < pp->iters; i++) {
        while (!receive_one(pp, &c, 0, msg)) {
        }
        send_one(pp, &p, 1, msg);
    }
    return NULL;
}

/* iters round trips of `variant`; one-way times stored at out[0..iters). */
static void latency(int variant, long iters, double *out) {
    pingpong pp;
    pthread_t t;
    shared_ring_producer p;
    shared_ring_consumer c;
    unsigned char msg[PING] = { 0 };
    size_t bytes = shared_ring_region_size(1u << 16, 0);
    memset(&pp, 0, sizeof pp);
    pp.variant = variant;
    pp.iters = iters;
    pp.rtt = out;
    for (int i = 0; i < 2; i++) {
        pp.mem[i] = aligned_alloc(4096, bytes);
        memset(pp.mem[i], 0, bytes);
        if (variant == V_SHARED)
            shared_ring_format(pp.mem[i], bytes, 1u << 16, 0);
        else if (aeron_spsc_rb_init(&pp.rb[i], pp.mem[i], (1u << 16) + AERON_RB_TRAILER_LENGTH) !=
                 0)
            exit(1);
    }
    if (variant == V_SHARED) {
        shared_ring_attach_producer(&p, pp.mem[0], bytes, NULL);
        shared_ring_attach_consumer(&c, pp.mem[1], bytes, NULL);
    }
    pthread_create(&t, NULL, echo, &pp);
    pin_to_cpu(0);
    for (long i = 0; i < iters; i++) {
        double t0 = now_s();
        send_one(&pp, &p, 0, msg);
        while (!receive_one(&pp, &c, 1, msg)) {
        }
        pp.rtt[i] = (now_s() - t0) * 1e9 / 2; /* one way */
    }
    pthread_join(t, NULL);
    free(pp.mem[0]);
    free(pp.mem[1]);
}

/* Cross-core latency on a shared virtual machine changes 2-6x from one
   second to the next: the two ping-pongs take turns in LAT_ROUNDS rounds,
   so both see the same phases; the ratio is the median of the rounds'. */
#define LAT_ROUNDS 10
#define LAT_CHUNK 20000
static void print_latency(void) {
    static double all[2][LAT_ROUNDS * LAT_CHUNK];
    double ratio[LAT_ROUNDS], tmp[LAT_CHUNK];
    for (int round = 0; round < LAT_ROUNDS; round++) {
        double p50[2];
        for (int k = 0; k < 2; k++) {
            double *at = all[k] + round * LAT_CHUNK;
            latency(k == 0 ? V_SHARED : V_WRITE, LAT_CHUNK, at);
            memcpy(tmp, at, sizeof tmp);
            p50[k] = median(tmp, LAT_CHUNK);
        }
        ratio[round] = p50[0] / p50[1];
    }
    printf("\nOne-way latency, 64-byte ping-pong, ns (%d interleaved rounds)\n\n"
           "| variant | p50 | p99 |\n|---|---:|---:|\n",
           LAT_ROUNDS);
    for (int k = 0; k < 2; k++) {
        qsort(all[k], LAT_ROUNDS * LAT_CHUNK, sizeof all[k][0], cmp_double);
        printf("| %s | %.0f | %.0f |\n", k == 0 ? "shared" : "aeron",
               all[k][LAT_ROUNDS * LAT_CHUNK / 2], all[k][LAT_ROUNDS * LAT_CHUNK * 99 / 100]);
    }
    printf("\nshared ÷ aeron one-way p50: %.2f× (median of the rounds)\n",
           median(ratio, LAT_ROUNDS));
}

/* ours ÷ aeron-claim, trailing on and off, per machine state: the median
   over the repetitions whose two runs saw that state, (pairs). */
static void print_state_ratios(double rate[][6][MAX_REPS], double state[][6][MAX_REPS], int reps,
                               const size_t *sizes, int ns) {
    int seen[NSTATES] = { 0, 0 };
    for (int v = 0; v < NV; v++)
        for (int s = 0; s < ns; s++)
            for (int r = 0; r < reps; r++) seen[state_of(state[v][s][r])]++;
    printf("\nPer machine state (a two-flag ping-pong before every run, one-way p50 <= %.0f ns "
           "is fast: %d fast runs, %d slow); median over the repetitions whose two runs saw "
           "that state, (pairs)\n\n| ratio | state |",
           FAST_STATE_NS, seen[STATE_FAST], seen[STATE_SLOW]);
    for (int s = 0; s < ns; s++) printf(" %zu B |", sizes[s]);
    printf("\n|---|---|");
    for (int s = 0; s < ns; s++) printf("---:|");
    printf("\n");
    for (int v = V_SHARED; v <= V_NO_TRAIL; v++)
        for (int st = 0; st < NSTATES; st++) {
            printf("| %s ÷ aeron-claim | %s |", names[v], state_names[st]);
            for (int s = 0; s < ns; s++) {
                double q[MAX_REPS];
                int n = 0;
                for (int r = 0; r < reps; r++)
                    if (state_of(state[v][s][r]) == st && state_of(state[V_CLAIM][s][r]) == st)
                        q[n++] = rate[v][s][r] / rate[V_CLAIM][s][r];
                if (n == 0)
                    printf(" never seen |");
                else
                    printf(" %.2f× (%d) |", median(q, n), n);
            }
            printf("\n");
        }
}

int main(int argc, char **argv) {
    static const size_t sizes[] = { 64, 256, 1024, 4096, 16384, 65536 };
    enum { NS = sizeof sizes / sizeof sizes[0] };
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    double seconds = argc > 2 ? atof(argv[2]) : 0.4;
    static double rate[NV][NS][MAX_REPS], state[NV][NS][MAX_REPS];
    void *mem = aligned_alloc(4096, shared_ring_region_size(RING, 0) + 4096);
    if (reps < 1 || reps > MAX_REPS || seconds <= 0 || mem == NULL) {
        fprintf(stderr, "usage: aeron_vs_shared [REPS 1..%d] [SECONDS]\n", MAX_REPS);
        return 2;
    }
    memset(mem, 0, shared_ring_region_size(RING, 0) + 4096);
    for (int r = 0; r < reps; r++)
        for (int s = 0; s < NS; s++)
            for (int k = 0; k < NV; k++) {
                int v = (k + r) % NV; /* each repetition starts with another variant */
                state[v][s][r] = machine_state_ns();
                rate[v][s][r] = throughput(v, sizes[s], seconds, mem);
            }
    printf("shared_ring %s against aeron_spsc_rb: 8 MiB ring, %d interleaved reps of %.2f s, "
           "%ld CPUs\n\nMessage rate, M msg/s (median)\n\n| variant |",
           SHARED_RING_VERSION, reps, seconds, sysconf(_SC_NPROCESSORS_ONLN));
    for (int s = 0; s < NS; s++) printf(" %zu B |", sizes[s]);
    printf("\n|---|");
    for (int s = 0; s < NS; s++) printf("---:|");
    printf("\n");
    for (int v = 0; v < NV; v++) {
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
    for (int ours = V_SHARED; ours <= V_NO_TRAIL; ours++)
        for (int v = V_CLAIM; v < NV; v++) {
            printf("| %s ÷ %s |", names[ours], names[v]);
            for (int s = 0; s < NS; s++) {
                double q[MAX_REPS];
                for (int r = 0; r < reps; r++) q[r] = rate[ours][s][r] / rate[v][s][r];
                qsort(q, (size_t)reps, sizeof q[0], cmp_double);
                printf(" %.2f× [%.2f–%.2f] (%d) |", median(q, reps), q[(reps - 1) / 10],
                       q[reps - 1 - (reps - 1) / 10], reps);
            }
            printf("\n");
        }
    print_state_ratios(rate, state, reps, sizes, NS);
    print_latency();
    free(mem);
    return 0;
}
