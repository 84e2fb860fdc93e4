/* What both peer harnesses (aeron_vs_shared.c between threads,
   processes.c between processes) share: the clock, the start line, the
   message check with its callbacks, and the statistics. Include it after
   Aeron's header (unless NO_AERON). Messages come from NSRC ready-made sources in turn;
   source i's first and last bytes are mark(i), so a consumer that copies
   each message out can tell a torn, lost or reordered one. */
#ifndef BENCH_PEER_COMMON_H
#define BENCH_PEER_COMMON_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NSRC 26

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Both sides arrive; neither starts before the other is ready. */
static void meet(atomic_int *arrived) {
    atomic_fetch_add(arrived, 1);
    while (atomic_load(arrived) < 2) __builtin_ia32_pause();
}

static unsigned char mark(unsigned i) { return (unsigned char)('A' + i); }

typedef struct checker {
    unsigned char *copy;
    size_t size;
    unsigned source;
    uint64_t seen, bad;
} checker;

static void check(checker *k, const void *data, size_t len) {
    if (len != k->size) {
        k->bad++;
    } else {
        memcpy(k->copy, data, len);
        if (k->copy[0] != mark(k->source) || k->copy[len - 1] != mark(k->source)) k->bad++;
    }
    k->seen++;
    k->source = k->source + 1 == NSRC ? 0 : k->source + 1;
}

static int shared_cb(void *user, const void *data, size_t len) {
    check((checker *)user, data, len);
    return 0;
}

#ifndef NO_AERON
static void aeron_cb(int32_t type, const void *data, size_t len, void *user) {
    (void)type;
    check((checker *)user, data, len);
}
#endif

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
