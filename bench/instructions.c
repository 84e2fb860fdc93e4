/* instructions: the single-thread loop whose instruction count callgrind
   measures (make instructions, bench/instructions.sh). One thread writes
   BATCH messages of SIZE bytes with shared_ring_write_bytes, then drains
   them with one shared_ring_read_some whose callback copies each message
   out, like the benchmark's consumer. Only run_loop() is counted
   (--toggle-collect), so set-up and the process's start do not blur the
   per-message figure.

   Built two ways: with the implementation in this file (the compiler may
   inline all of it into the loop), and with -DSEPARATE_IMPLEMENTATION,
   linked to bench/impl.c, as users of an stb-style header
   build it: the implementation in its own translation unit, so only what
   the header's declaration part makes inline can be.

   instructions [MESSAGES] [SIZE] [BATCH]   (defaults 1000000, 64, 16)

   Built with -DCLAIM_LOOP, each message is shared_ring_claim + memcpy +
   commit instead (a build of its own, so that the write loop's code, and
   what the compiler inlines into it, stays as it is); with
   -DBLOCKING_READ, the drain is one shared_ring_read (the messages are
   there: it never waits).

   Build against another copy of the header with
   -DSHARED_RING_HEADER='"path/to/shared_ring.h"' to compare versions. */
#ifndef SEPARATE_IMPLEMENTATION
#define SHARED_RING_IMPLEMENTATION
#endif
#ifndef SHARED_RING_HEADER
#define SHARED_RING_HEADER "../shared_ring.h"
#endif
#include SHARED_RING_HEADER

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING (64u * 1024u)

typedef struct sink {
    unsigned char copy[4096];
    uint64_t sum;
} sink;

static int take(void *user, const void *data, size_t len) {
    sink *s = (sink *)user;
    memcpy(s->copy, data, len);
    s->sum += s->copy[0];
    return 0;
}

/* Returns the number of messages delivered (must equal `messages`). */
#ifdef __clang__ /* no noclone attribute */
#define RUN_LOOP_ATTRIBUTES __attribute__((noinline))
#else
#define RUN_LOOP_ATTRIBUTES __attribute__((noinline, noclone))
#endif
RUN_LOOP_ATTRIBUTES uint64_t run_loop(shared_ring_producer *p, shared_ring_consumer *c,
                                      const void *msg, size_t size, uint64_t messages,
                                      unsigned batch, sink *s) {
    uint64_t delivered = 0;
    for (uint64_t sent = 0; sent < messages; sent += batch) {
        for (unsigned i = 0; i < batch; i++) {
#ifdef CLAIM_LOOP
            void *at;
            if (shared_ring_claim(p, size, &at, 0) == SHARED_RING_OK) {
                memcpy(at, msg, size);
                shared_ring_commit(p, size);
            }
#else
            shared_ring_write_bytes(p, msg, size, 0);
#endif
        }
#ifdef BLOCKING_READ
        delivered += (uint64_t)shared_ring_read(c, take, s, SHARED_RING_FOREVER);
#else
        delivered += (uint64_t)shared_ring_read_some(c, take, s);
#endif
    }
    return delivered;
}

int main(int argc, char **argv) {
    uint64_t messages = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000u;
    size_t size = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 64u;
    unsigned batch = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 16u;
    size_t bytes = shared_ring_region_size(RING, 0);
    void *region = aligned_alloc(4096, bytes);
    unsigned char msg[4096];
    static sink s;
    shared_ring_producer p;
    shared_ring_consumer c;
    uint64_t got;
    if (region == NULL || size > sizeof msg || batch == 0 || batch > 64 || messages % batch != 0) {
        fprintf(stderr, "usage: instructions [MESSAGES, a multiple of BATCH] [SIZE <= 4096] "
                        "[BATCH 1..64]\n");
        return 2;
    }
    memset(msg, 'x', size);
    if (shared_ring_format(region, bytes, RING, 0) != 0 ||
        shared_ring_attach_producer(&p, region, bytes, NULL) != 0 ||
        shared_ring_attach_consumer(&c, region, bytes, NULL) != 0) {
        fprintf(stderr, "instructions: set-up failed\n");
        return 1;
    }
    got = run_loop(&p, &c, msg, size, messages, batch, &s);
    printf("%llu messages of %zu bytes delivered\n", (unsigned long long)got, size);
    free(region);
    return got == messages ? 0 : 1;
}
