/* band: shared_ring.h against Aeron's SPSC ring between two processes, set
   up and consumed the way users write them. Each side is a program of its
   own (this one, exec'd again with a role): it opens the shared memory by
   name, and for shared_ring calls shared_ring_prepare and attach_*_wait
   with region_fd, as examples/shm_*.c do; Aeron's ring, which has no such
   protocol, is made zero by the driver before its two sides start. The
   producer copies each message in (write_bytes; aeron_spsc_rb_write); the
   consumer reads every 8-byte word of it where it lies, checks the
   sequence number in its first word and a sum over the rest, and counts.
   The producer runs for SECONDS and ends the stream (close; a last
   message for Aeron); the rate is what the consumer saw between its first
   message and the end.

   Variants: shared (defaults: the consumer sleeps when idle, so the
   producer fences), shared-poll (the consumer attached with
   SHARED_RING_POLL_ONLY: it naps, never woken, and its producer publishes
   without a fence), aeron (aeron_spsc_rb_write, spin on FULL;
   aeron_spsc_rb_read, spin while it returns 0). Producer on CPU 0,
   consumer on CPU 1. Each repetition runs every variant at a size and
   ring size, starting with another one each time; the ratios are medians
   of the per-repetition ratios with p10-p90. Before each repetition the
   driver measures the machine's state (bench/machine_state.h); a row
   says how many repetitions ran in the slow one.

   BAND_PAIRS=1: each repetition prints to stderr "pair RING_KIB SIZE REP STATE_NS_BEFORE
   STATE_NS_AFTER SHARED SHARED_POLL AERON" (M msg/s), so that two builds run in turn can be
   compared pair by pair, within one machine state.

   band [REPS] [SECONDS] [RING_KIB,...] [SIZE,...]
   band producer|consumer VARIANT NAME RING SIZE SECONDS   (the roles) */
#define _GNU_SOURCE
#define SHARED_RING_SHM
#include "../../shared_ring.h"
#include "../machine_state.h"

#ifndef NO_AERON
#include "concurrent/aeron_spsc_rb.h"
#include "aeron_err_stub.h"
#endif

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NSRC 16
#define MAX_REPS 64
#define TIMEOUT_NS 10000000000u /* a side that waits longer than this fails */
enum { V_SHARED, V_POLL, V_AERON, NV };
static const char *const names[NV] = { "shared", "shared-poll", "aeron" };

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* BAND_STATS=1: each shared_ring side prints its counters to stderr (for
   finding where the time goes; the driver ignores them). */
static void print_stats(const char *side, const shared_ring_stats *st) {
    if (getenv("BAND_STATS") == NULL) return;
    fprintf(stderr,
            "%s: messages %llu waits %llu sleeps %llu wakes %llu wait_ms %.1f trails %llu "
            "spin_now_us %.1f\n",
            side, (unsigned long long)st->messages, (unsigned long long)st->waits,
            (unsigned long long)st->sleeps, (unsigned long long)st->wakes, st->wait_ns / 1e6,
            (unsigned long long)st->trails, st->spin_now_ns / 1e3);
}

static void fail(const char *what) {
    fprintf(stderr, "band: %s\n", what);
    exit(3);
}

/* Message bodies: source i's word j (j >= 1) is i * 1000003 + j; word 0
   is the sequence number, stored by the producer per message. */
static uint64_t word_of(unsigned i, size_t j) { return (uint64_t)i * 1000003u + j; }

/* The consumer's view: the next sequence number, the expected sums. */
typedef struct reader {
    uint64_t next, bad;
    uint64_t sum[NSRC];
    size_t size;
    double first, end;
    int ended;
} reader;

/* Read the message in place: every word, once. */
static void take(reader *r, const void *data, size_t len) {
    const uint64_t *w = (const uint64_t *)data;
    uint64_t seq = w[0], sum = 0;
    size_t j;
    if (len != r->size) {
        if (len == 8 && seq == UINT64_MAX) { /* Aeron's end of stream */
            r->ended = 1;
            return;
        }
        r->bad++;
        return;
    }
    for (j = 1; j < len / 8; j++) sum += w[j];
    if (seq != r->next || sum != r->sum[seq % NSRC]) r->bad++;
    if (r->next == 0) r->first = now_s();
    r->next = seq + 1;
}

static int shared_take(void *user, const void *data, size_t len) {
    take((reader *)user, data, len);
    return 0;
}

#ifndef NO_AERON
/* Aeron's sides spin; one that spins past TIMEOUT_NS (its peer died) fails the run. */
static void spin_or_fail(unsigned *spins, double *since) {
    __builtin_ia32_pause();
    if (++*spins % 65536u != 0) return;
    if (*since == 0) *since = now_s();
    else if (now_s() - *since > TIMEOUT_NS / 1e9) fail("aeron: the peer made no progress");
}

static void aeron_take(int32_t type, const void *data, size_t len, void *user) {
    (void)type;
    take((reader *)user, data, len);
}

/* Aeron's buffer: a shared memory object of ring + trailer bytes, opened
   by name (the driver made it, zero). */
static void *aeron_map(const char *name, size_t ring) {
    int fd = shm_open(name, O_RDWR, 0600);
    void *m;
    if (fd < 0) fail("shm_open (aeron)");
    m = mmap(NULL, ring + AERON_RB_TRAILER_LENGTH, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
             fd, 0); /* prefaulted, as the ring's side is */
    close(fd);
    if (m == MAP_FAILED) fail("mmap (aeron)");
    return m;
}
#endif

/* A shared_ring side set up as a separate program does: open by name,
   prepare, attach with region_fd. */
static void shared_open(shared_ring_shm *shm, const char *name, size_t ring, size_t size) {
    size_t bytes = shared_ring_region_size(ring, size);
    if (shared_ring_shm_open(shm, name, bytes, TIMEOUT_NS) != SHARED_RING_OK) fail("shm_open");
    if (shared_ring_prepare(shm->region, shm->size, ring, size, shm->fd) < 0) fail("prepare");
    (void)shared_ring_shm_prefault(shm);
}

static int producer(int v, const char *name, size_t ring, size_t size, double seconds) {
    static uint64_t *src[NSRC];
    uint64_t seq = 0;
    unsigned i;
    double until;
    pin_to_cpu(0);
    for (i = 0; i < NSRC; i++) {
        size_t j;
        src[i] = aligned_alloc(64, (size + 63) & ~(size_t)63);
        for (j = 1; j < size / 8; j++) src[i][j] = word_of(i, j);
    }
    if (v != V_AERON) {
        shared_ring_shm shm;
        shared_ring_producer p;
        shared_ring_options o = SHARED_RING_OPTIONS_INIT;
        shared_open(&shm, name, ring, size);
        o.region_fd = shm.fd;
        if (shared_ring_attach_producer_wait(&p, shm.region, shm.size, &o, TIMEOUT_NS) !=
            SHARED_RING_OK)
            fail("attach_producer_wait");
        until = now_s() + seconds;
        do {
            for (i = 0; i < 64; i++, seq++) {
                uint64_t *m = src[seq % NSRC];
                m[0] = seq;
                if (shared_ring_write_bytes(&p, m, size, TIMEOUT_NS) != SHARED_RING_OK)
                    fail("write_bytes");
            }
        } while (now_s() < until);
        if (shared_ring_close(&p) != SHARED_RING_OK) fail("close");
        {
            shared_ring_stats st;
            if (shared_ring_producer_stats(&p, &st) == SHARED_RING_OK) print_stats("producer", &st);
        }
        shared_ring_detach_producer(&p);
        shared_ring_shm_close(&shm);
        return 0;
    }
#ifndef NO_AERON
    {
        aeron_spsc_rb_t rb;
        uint64_t end = UINT64_MAX;
        if (aeron_spsc_rb_init(&rb, aeron_map(name, ring), ring + AERON_RB_TRAILER_LENGTH) != 0)
            fail("aeron_spsc_rb_init");
        until = now_s() + seconds;
        do {
            for (i = 0; i < 64; i++, seq++) {
                uint64_t *m = src[seq % NSRC];
                unsigned spins = 0;
                double since = 0;
                m[0] = seq;
                while (aeron_spsc_rb_write(&rb, 1, m, size) != AERON_RB_SUCCESS)
                    spin_or_fail(&spins, &since);
            }
        } while (now_s() < until);
        {
            unsigned spins = 0;
            double since = 0;
            while (aeron_spsc_rb_write(&rb, 1, &end, sizeof end) != AERON_RB_SUCCESS)
                spin_or_fail(&spins, &since);
        }
    }
#endif
    return 0;
}

static void expected_sums(reader *r, size_t size) {
    unsigned i;
    memset(r, 0, sizeof *r);
    r->size = size;
    for (i = 0; i < NSRC; i++) {
        size_t j;
        for (j = 1; j < size / 8; j++) r->sum[i] += word_of(i, j);
    }
}

/* Prints "messages seconds bad" for the driver. */
static int consumer(int v, const char *name, size_t ring, size_t size) {
    reader r;
    pin_to_cpu(1);
    expected_sums(&r, size);
    if (v != V_AERON) {
        shared_ring_shm shm;
        shared_ring_consumer c;
        shared_ring_options o = SHARED_RING_OPTIONS_INIT;
        int n;
        shared_open(&shm, name, ring, size);
        o.region_fd = shm.fd;
        if (v == V_POLL) o.flags = SHARED_RING_POLL_ONLY;
        if (shared_ring_attach_consumer_wait(&c, shm.region, shm.size, &o, TIMEOUT_NS) !=
            SHARED_RING_OK)
            fail("attach_consumer_wait");
        while ((n = shared_ring_read(&c, shared_take, &r, TIMEOUT_NS)) > 0) continue;
        if (n != SHARED_RING_CLOSED) fail("read");
        r.end = now_s();
        {
            shared_ring_stats st;
            if (shared_ring_consumer_stats(&c, &st) == SHARED_RING_OK) print_stats("consumer", &st);
        }
        shared_ring_detach_consumer(&c);
        shared_ring_shm_close(&shm);
    } else {
#ifndef NO_AERON
        aeron_spsc_rb_t rb;
        if (aeron_spsc_rb_init(&rb, aeron_map(name, ring), ring + AERON_RB_TRAILER_LENGTH) != 0)
            fail("aeron_spsc_rb_init");
        unsigned spins = 0;
        double since = 0;
        while (!r.ended) {
            if (aeron_spsc_rb_read(&rb, aeron_take, &r, SIZE_MAX) != 0) {
                spins = 0;
                since = 0;
            } else {
                spin_or_fail(&spins, &since);
            }
        }
        r.end = now_s();
#endif
    }
    printf("%llu %.9f %llu\n", (unsigned long long)r.next, r.end - r.first,
           (unsigned long long)r.bad);
    return 0;
}

/* ---- the driver ---------------------------------------------------------- */

static const char *self;

/* One run of variant v: both sides started as programs; messages per
   second, or -1 if a side failed or a message was bad. */
static double run_once(int v, size_t ring, size_t size, double seconds) {
    char name[64], ring_s[32], size_s[32], sec_s[32], line[128] = "";
    int fds[2], st_p = 0, st_c = 0;
    pid_t cons, prod;
    unsigned long long n = 0, bad = 1;
    double t = 0;
    FILE *f;
    snprintf(name, sizeof name, "/srng_band_%d_%d", (int)getpid(), v);
    snprintf(ring_s, sizeof ring_s, "%zu", ring);
    snprintf(size_s, sizeof size_s, "%zu", size);
    snprintf(sec_s, sizeof sec_s, "%g", seconds);
    shm_unlink(name);
#ifndef NO_AERON
    if (v == V_AERON) { /* Aeron's ring: zero memory of ring + trailer bytes */
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)(ring + AERON_RB_TRAILER_LENGTH)) != 0)
            fail("shm_open (aeron, driver)");
        close(fd);
    }
#endif
    if (pipe(fds) != 0) fail("pipe");
    cons = fork();
    if (cons == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(self, self, "consumer", names[v], name, ring_s, size_s, sec_s, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    prod = fork();
    if (prod == 0) {
        close(fds[0]);
        execl(self, self, "producer", names[v], name, ring_s, size_s, sec_s, (char *)NULL);
        _exit(127);
    }
    f = fdopen(fds[0], "r");
    if (f != NULL && fgets(line, sizeof line, f) != NULL) sscanf(line, "%llu %lf %llu", &n, &t, &bad);
    if (f != NULL) fclose(f);
    waitpid(prod, &st_p, 0);
    waitpid(cons, &st_c, 0);
    shm_unlink(name);
    if (st_p != 0 || st_c != 0 || bad != 0 || n == 0 || t <= 0) {
        fprintf(stderr, "band: %s ring %zu size %zu failed (producer %d, consumer %d, bad %llu)\n",
                names[v], ring, size, st_p, st_c, bad);
        return -1;
    }
    return (double)n / t;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double pct(double *v, int n, double p) { /* nearest rank on a sorted copy */
    double s[MAX_REPS];
    int k;
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    k = (int)(p * (n - 1) + 0.5);
    return s[k];
}

static size_t parse_list(const char *s, size_t *out, size_t most, size_t unit) {
    size_t n = 0;
    while (*s && n < most) {
        char *end;
        out[n++] = (size_t)strtoull(s, &end, 10) * unit;
        s = *end == ',' ? end + 1 : end;
        if (end == s && *s) break;
    }
    return n;
}

int main(int argc, char **argv) {
    static const size_t default_sizes[] = { 64,   256,  512,  768,  1024,  1536,  2048,
                                            3072, 4096, 8192, 16384, 32768, 65536 };
    size_t sizes[32], rings[4], nsizes, nrings, si, ri;
    int reps, rep, v, failed = 0;
    double seconds;
    self = "/proc/self/exe";
    if (argc == 7 && (strcmp(argv[1], "producer") == 0 || strcmp(argv[1], "consumer") == 0)) {
        int var = -1;
        for (v = 0; v < NV; v++)
            if (strcmp(argv[2], names[v]) == 0) var = v;
        if (var < 0) fail("unknown variant");
        if (argv[1][0] == 'p')
            return producer(var, argv[3], strtoull(argv[4], NULL, 10),
                            strtoull(argv[5], NULL, 10), atof(argv[6]));
        return consumer(var, argv[3], strtoull(argv[4], NULL, 10), strtoull(argv[5], NULL, 10));
    }
    reps = argc > 1 ? atoi(argv[1]) : 15;
    seconds = argc > 2 ? atof(argv[2]) : 0.3;
    nrings = argc > 3 ? parse_list(argv[3], rings, 4, 1024) : 0;
    if (nrings == 0) {
        rings[0] = 1u << 20;
        rings[1] = 8u << 20;
        nrings = 2;
    }
    nsizes = argc > 4 ? parse_list(argv[4], sizes, 32, 1) : 0;
    if (nsizes == 0) {
        nsizes = sizeof default_sizes / sizeof *default_sizes;
        memcpy(sizes, default_sizes, sizeof default_sizes);
    }
    if (reps < 1 || reps > MAX_REPS) fail("REPS: 1 to 64");
    printf("band: %d pairs of %.2f s per variant; each side its own process (prepare + "
           "attach_*_wait with region_fd; Aeron: a zeroed buffer); consumer reads every word in "
           "place\n",
           reps, seconds);
    printf("| ring | size | shared M msg/s | shared-poll | aeron | shared / aeron (p10-p90) | "
           "shared-poll / aeron (p10-p90) | slow reps |\n|---|---:|---:|---:|---:|---|---|---:|\n");
    for (ri = 0; ri < nrings; ri++)
        for (si = 0; si < nsizes; si++) {
            double rate[NV][MAX_REPS], ratio[2][MAX_REPS];
            int ok = 1, slow = 0;
            /* 16 at least: an 8-byte message would be Aeron's end of stream */
            if (sizes[si] < 16 || sizes[si] % 8 != 0 || sizes[si] > rings[ri] / 4) continue;
            for (rep = 0; rep < reps && ok; rep++) {
                double before = machine_state_ns(), after;
                slow += state_of(before) == STATE_SLOW;
                for (v = 0; v < NV; v++) {
                    int w = (v + rep) % NV; /* each repetition starts with another variant */
                    rate[w][rep] = run_once(w, rings[ri], sizes[si], seconds);
                    if (rate[w][rep] < 0) ok = 0;
                }
                after = machine_state_ns();
                if (getenv("BAND_PAIRS") && ok)
                    fprintf(stderr, "pair %zu %zu %d %.0f %.0f %.3f %.3f %.3f\n", rings[ri] >> 10,
                            sizes[si], rep, before, after, rate[V_SHARED][rep] / 1e6,
                            rate[V_POLL][rep] / 1e6, rate[V_AERON][rep] / 1e6);
            }
            if (!ok) {
                failed = 1;
                continue;
            }
            for (rep = 0; rep < reps; rep++) {
                ratio[0][rep] = rate[V_SHARED][rep] / rate[V_AERON][rep];
                ratio[1][rep] = rate[V_POLL][rep] / rate[V_AERON][rep];
            }
            printf("| %zu KiB | %zu | %.2f | %.2f | %.2f | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | "
                   "%d/%d |\n",
                   rings[ri] >> 10, sizes[si], pct(rate[V_SHARED], reps, 0.5) / 1e6,
                   pct(rate[V_POLL], reps, 0.5) / 1e6, pct(rate[V_AERON], reps, 0.5) / 1e6,
                   pct(ratio[0], reps, 0.5), pct(ratio[0], reps, 0.1), pct(ratio[0], reps, 0.9),
                   pct(ratio[1], reps, 0.5), pct(ratio[1], reps, 0.1), pct(ratio[1], reps, 0.9),
                   slow, reps);
            fflush(stdout);
        }
    return failed;
}
