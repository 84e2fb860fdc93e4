/* alone: what each side's calls cost with the other side out of the way.

   make bench runs both sides at once, so a ratio there says only which
   side was slower. This times each side alone, in one thread, against the
   same work written inline the way bench's `limit` does it:

   - producer: shared_ring_write_bytes / shared_ring_write_str (timeout 0)
     until the ring is full, against memcpy into a plain buffer;
   - consumer: shared_ring_read_some draining that full ring with the
     bench's checking callback (copy out, compare the first and last byte),
     against the same copy and check inline over the buffer.

   Each repetition times all four, in turns, over the same 8 MiB; the
   table gives medians in ns per message and the speed of each call as a
   fraction of its inline counterpart. Times, not instruction counts: the
   store and load traffic of a full ring is part of the cost.

   alone [SIZE [REPS]]   (defaults 64 and 15) */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING (8u * 1024u * 1024u)
#define MAX_REPS 99
#define NSOURCES 26

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static unsigned char mark(int source) { return (unsigned char)('A' + source); }

/* The consumer's work, as in bench.c: copy the message out, check it. */
typedef struct checker {
    unsigned char *dst;
    size_t size;
    int source;
    long seq, bad;
} checker;

static inline void check_copy(checker *k, const unsigned char *data, size_t len) {
    if (len != k->size) {
        k->bad++;
    } else {
        memcpy(k->dst, data, len);
        if (k->dst[0] != mark(k->source) || k->dst[len - 1] != mark(k->source)) k->bad++;
    }
    k->seq++;
    k->source = k->source + 1 == NSOURCES ? 0 : k->source + 1;
}

static int shared_check(void *user, const void *data, size_t len) {
    check_copy((checker *)user, (const unsigned char *)data, len);
    return 0;
}

typedef struct setup {
    size_t size, region_bytes;
    void *region;
    unsigned char *buf;
    char *text[NSOURCES];
} setup;

/* Write until the ring is full; returns ns per message, *count the count. */
static double time_ring_writes(setup *s, int strings, long *count) {
    shared_ring_producer p;
    long n = 0;
    int source = 0;
    double t0;
    memset(s->region, 0, s->region_bytes);
    if (shared_ring_format(s->region, s->region_bytes, RING, 0) != 0 ||
        shared_ring_attach_producer(&p, s->region, s->region_bytes, NULL) != 0)
        abort();
    t0 = now_ns();
    for (;; n++) {
        const char *text = s->text[source];
        int r = strings ? shared_ring_write_str(&p, text, 0)
                        : shared_ring_write_bytes(&p, text, s->size, 0);
        if (r != SHARED_RING_OK) break;
        source = source + 1 == NSOURCES ? 0 : source + 1;
    }
    *count = n;
    return (now_ns() - t0) / (double)n;
}

static double time_ring_reads(setup *s, long count) {
    shared_ring_consumer c;
    checker k = { malloc(s->size), s->size, 0, 0, 0 };
    double t0;
    int r;
    if (shared_ring_attach_consumer(&c, s->region, s->region_bytes, NULL) != 0) abort();
    t0 = now_ns();
    while ((r = shared_ring_read_some(&c, shared_check, &k)) > 0) {
    }
    t0 = now_ns() - t0;
    if (r != SHARED_RING_EMPTY || k.seq != count || k.bad != 0) {
        fprintf(stderr, "alone: ring read %ld of %ld messages, %ld bad\n", k.seq, count, k.bad);
        exit(1);
    }
    free(k.dst);
    return t0 / (double)count;
}

/* bench's limit, one thread: copy in at `size` strides, then copy out. */
static double time_inline_writes(setup *s, long count) {
    int source = 0;
    double t0;
    memset(s->buf, 0, RING);
    t0 = now_ns();
    for (long i = 0; i < count; i++) {
        memcpy(s->buf + (size_t)i * s->size, s->text[source], s->size);
        source = source + 1 == NSOURCES ? 0 : source + 1;
    }
    return (now_ns() - t0) / (double)count;
}

static double time_inline_reads(setup *s, long count) {
    checker k = { malloc(s->size), s->size, 0, 0, 0 };
    double t0 = now_ns();
    for (long i = 0; i < count; i++) check_copy(&k, s->buf + (size_t)i * s->size, s->size);
    t0 = now_ns() - t0;
    if (k.bad != 0) {
        fprintf(stderr, "alone: inline read found %ld bad\n", k.bad);
        exit(1);
    }
    free(k.dst);
    return t0 / (double)count;
}

int main(int argc, char **argv) {
    setup s;
    int reps = argc > 2 ? atoi(argv[2]) : 15;
    double t[5][MAX_REPS];
    static const char *names[5] = { "write_bytes", "write_str", "inline copy in",
                                    "read_some + check", "inline copy out + check" };
    s.size = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 64u;
    if (s.size < 1 || s.size > RING / 64 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "usage: alone [SIZE 1..%u [REPS 1..%d]]\n", RING / 64, MAX_REPS);
        return 2;
    }
    s.region_bytes = shared_ring_region_size(RING, 0);
    s.region = aligned_alloc(4096, s.region_bytes);
    s.buf = aligned_alloc(4096, RING);
    for (int i = 0; i < NSOURCES; i++) {
        s.text[i] = malloc(s.size + 1);
        memset(s.text[i], 'x', s.size);
        s.text[i][0] = s.text[i][s.size - 1] = (char)mark(i);
        s.text[i][s.size] = '\0';
    }
    for (int r = 0; r < reps; r++) {
        long count, str_count;
        t[1][r] = time_ring_writes(&s, 1, &str_count);
        t[0][r] = time_ring_writes(&s, 0, &count);
        t[3][r] = time_ring_reads(&s, count);
        if (count != str_count) abort();
        /* the inline side moves as many messages as the ring held */
        t[2][r] = time_inline_writes(&s, count);
        t[4][r] = time_inline_reads(&s, count);
    }
    printf("One thread, %zu-byte messages, 8 MiB, median of %d repetitions\n\n", s.size, reps);
    printf("| call | ns per message |\n|---|---:|\n");
    double m[5];
    for (int i = 0; i < 5; i++) {
        m[i] = median(t[i], reps);
        printf("| %s | %.2f |\n", names[i], m[i]);
    }
    printf("\nSpeed against the inline loop: write_bytes %.2fx, write_str %.2fx, "
           "read_some %.2fx\n",
           m[2] / m[0], m[2] / m[1], m[4] / m[3]);
    return 0;
}
