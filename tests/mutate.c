/* Hostile-peer stress: while this thread formats, attaches and calls every
   function of both sides, a second thread keeps rewriting the region's
   header words (capacity, max_message, positions, flags, wait words) and
   record headers with values chosen to hurt: other capacities, huge
   lengths, valid-looking tags. Run under ASan (make check): the region is
   a heap block of exactly its size, so any read or write outside it
   aborts. Also checked: every result is a known one, every delivered
   message lies inside the data area and within max_message as attach saw
   it, and nothing hangs (alarm).
   Usage: mutate [ITERATIONS] [SEED] */
#define _GNU_SOURCE
#ifndef TEST_IMPLEMENTATION_ELSEWHERE /* the fast-* builds: in tests/compile/impl.c */
#define SHARED_RING_IMPLEMENTATION
#endif
#include "../shared_ring.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAPACITY 64u /* the smallest ring: a flip to 2^20 is 16384x too big */

static unsigned char *region;
static size_t region_bytes;
static int stop_mutating;
static unsigned long failures;

static uint64_t next_random(uint64_t *state) {
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

/* A value a hostile peer would pick for a word. */
static uint64_t nasty_value(uint64_t *rng) {
    static const uint64_t picks[] = {
        0, 1, 7, 8, 64, 1u << 20, 0xFFFFFFFFu, 0x7FFFFFF8u, UINT64_MAX, (uint64_t)1 << 62, 4096, 56,
        0xFFFFFFF1u, 0xFFFFFFF7u, 0xFFFFFFF0u /* fillers: 8 and 56 bytes, and none */
    };
    uint64_t r = next_random(rng);
    if (r % 3 == 0) return picks[(r >> 8) % (sizeof picks / sizeof picks[0])];
    if (r % 3 == 1) return (uint64_t)((r >> 8) % 200 * 8 | 1) << 32 | (r >> 40) % 300; /* tagged */
    return next_random(rng);
}

static void *mutator(void *arg) {
    uint64_t rng = (uint64_t)(uintptr_t)arg | 1u;
    while (!__atomic_load_n(&stop_mutating, __ATOMIC_RELAXED)) {
        uint64_t r = next_random(&rng);
        size_t off;
        if (r % 256 == 0) sched_yield(); /* on a loaded machine, let the caller run */
        for (off = (r >> 50) % 512; off > 0; off--) __asm__ volatile("" ::: "memory"); /* pace */
        if (r % 8 == 0) { /* the reported attack: capacity flipping 64 <-> 2^20 */
            __atomic_store_n((uint64_t *)(void *)(region + 8), r & 16 ? (uint64_t)1 << 20 : 64u,
                             __ATOMIC_RELAXED);
            continue;
        }
        off = (size_t)(r >> 8) % (region_bytes / 8) * 8; /* any 8-byte word, data area too */
        if (off == 0 && r % 16 != 0) continue;           /* mostly leave the magic alone */
        __atomic_store_n((uint64_t *)(void *)(region + off), nasty_value(&rng), __ATOMIC_RELAXED);
    }
    return NULL;
}

static int known_result(int r) { return r >= SHARED_RING_PEER_GONE; }

static size_t attached_max; /* max_message the consumer saw at attach */

static int check_message(void *user, const void *data, size_t len) {
    const unsigned char *p = (const unsigned char *)data;
    (void)user;
    if (p < region + SHARED_RING_HEADER_SIZE || p + len > region + region_bytes ||
        len > attached_max) {
        fprintf(stderr, "message outside the data area or over max: %zu bytes\n", len);
        failures++;
    }
    return 0;
}

static size_t fill_some(void *user, void *dst, size_t max_len) {
    (void)user;
    memset(dst, 'x', max_len);
    return max_len;
}

static unsigned long outcomes[16]; /* by -result; [0]: OK or a count */
static unsigned long delivered;

/* 1 while that side's handle is unattached or broken. */
static int producer_down = 1, consumer_down = 1;

/* Check a result of a call on `side` ('p', 'c', or 0 for format). */
static void expect_known(char side, const char *call, int r) {
    int down = r == SHARED_RING_ERR_HANDLE || r == SHARED_RING_ERR_CORRUPT ||
               (strncmp(call, "attach", 6) == 0 && r != SHARED_RING_OK);
    if (side == 'p') producer_down = down;
    if (side == 'c') consumer_down = down;
    outcomes[r >= 0 ? 0 : r >= SHARED_RING_ERR_HANDLE ? -r : 15]++;
    if (r > 0) delivered += (unsigned long)r;
    if (!known_result(r)) {
        fprintf(stderr, "%s returned unknown result %d\n", call, r);
        failures++;
    }
}

int main(int argc, char **argv) {
    long iterations = argc > 1 ? atol(argv[1]) : 200000, i;
    uint64_t rng = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x9E3779B97F4A7C15ull;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_producer p;
    shared_ring_consumer c;
    pthread_t t;
    o.spin_ns = 2000;
    region_bytes = shared_ring_region_size(CAPACITY, 0);
    region = (unsigned char *)malloc(region_bytes); /* 16-aligned; 8 is required */
    if (region == NULL) return 1;
    shared_ring_format(region, region_bytes, CAPACITY, 0);
    memset(&p, 0, sizeof p);
    memset(&c, 0, sizeof c);
    alarm(300); /* a hang is a failure */
    pthread_create(&t, NULL, mutator, (void *)(uintptr_t)(rng * 7));
    for (i = 0; i < iterations; i++) {
        uint64_t r = next_random(&rng);
        uint64_t timeout = r & 256 ? 0 : 20000; /* 0 or 20 us */
        shared_ring_message m;
        shared_ring_stats st;
        void *claim;
        /* A side that reported a broken or unattached handle attaches again
           (after a fresh format, now and then), so calls keep going ahead. */
        int op = (int)((r >> 12) % 16);
        if (producer_down && op != 0)
            op = 1;
        else if (consumer_down && op != 0)
            op = 2;
        switch (op) {
        case 0:
            expect_known(0, "format", shared_ring_format(region, region_bytes, CAPACITY, 0));
            break;
        case 1:
            expect_known('p', "attach_producer",
                         shared_ring_attach_producer(&p, region, region_bytes, &o));
            break;
        case 2:
            expect_known('c', "attach_consumer",
                         shared_ring_attach_consumer(&c, region, region_bytes, &o));
            attached_max = shared_ring_consumer_max_message(&c);
            break;
        case 3:
        case 4:
            expect_known(
                'p', "write_bytes",
                shared_ring_write_bytes(&p, "0123456789abcdef0123", (r >> 20) % 21, timeout));
            break;
        case 5:
            expect_known('p', "write",
                         shared_ring_write(&p, (r >> 20) % 24, fill_some, NULL, timeout));
            break;
        case 6:
            if (shared_ring_claim(&p, (r >> 20) % 24, &claim, timeout) == SHARED_RING_OK) {
                memset(claim, 'c', (r >> 20) % 24);
                expect_known('p', "commit",
                             r & 1024 ? shared_ring_commit(&p, (r >> 30) % 24)
                                      : shared_ring_abort(&p));
            }
            break;
        case 7:
            expect_known('p', "cork", r & 1024 ? shared_ring_cork(&p) : shared_ring_uncork(&p));
            break;
        case 8:
            expect_known('p', "flush", r & 1024 ? shared_ring_flush(&p) : shared_ring_close(&p));
            break;
        case 9:
        case 10:
            expect_known('c', "read_some", shared_ring_read_some(&c, check_message, NULL));
            break;
        case 11:
            expect_known('c', "read", shared_ring_read(&c, check_message, NULL, timeout));
            break;
        case 12:
            if (shared_ring_peek(&c, &m) == SHARED_RING_OK) check_message(NULL, m.data, m.len);
            break;
        case 13: expect_known('c', "release", shared_ring_release(&c)); break;
        case 14: expect_known('c', "wait", shared_ring_wait(&c, timeout)); break;
        default:
            expect_known('p', "producer_stats", shared_ring_producer_stats(&p, &st));
            expect_known('c', "consumer_stats", shared_ring_consumer_stats(&c, &st));
            break;
        }
    }
    __atomic_store_n(&stop_mutating, 1, __ATOMIC_RELAXED);
    pthread_join(t, NULL);
    free(region);
    printf("mutate: %ld calls against a header rewritten under them, %lu failures\n", iterations,
           failures);
    printf("mutate: %lu went ahead (%lu messages read), %lu corrupt, %lu unattached, %lu "
           "full/empty/timeout\n",
           outcomes[0], delivered, outcomes[11], outcomes[13],
           outcomes[1] + outcomes[2] + outcomes[3]);
    printf("mutate: %d passed, %d failed\n", failures == 0, failures != 0);
    return failures == 0 ? 0 : 1;
}
