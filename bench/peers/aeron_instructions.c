/* The loop of bench/instructions.c with Aeron's C SPSC ring
   (aeron_spsc_rb, built by bench/instructions.sh in its own translation
   unit from the checkout you name, with the PR #2015 fix): BATCH messages
   of SIZE bytes, each aeron_spsc_rb_try_claim + memcpy + commit, then one
   aeron_spsc_rb_read whose handler copies each message out. Only
   run_loop() is counted.

   aeron_instructions [MESSAGES] [SIZE] [BATCH] */
#include "concurrent/aeron_spsc_rb.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING (64u * 1024u)

#include "aeron_err_stub.h"

/* AERON_SAME_FILE names the ring's source: it is then compiled in this
   file, where the compiler may inline it into the loop (as the ring's
   fast path is inlined into its caller's). */
#ifdef AERON_SAME_FILE
#include AERON_SAME_FILE
#endif

typedef struct sink {
    unsigned char copy[4096];
    uint64_t sum, count;
} sink;

static void take(int32_t type, const void *data, size_t len, void *user) {
    sink *s = (sink *)user;
    (void)type;
    memcpy(s->copy, data, len);
    s->sum += s->copy[0];
    s->count++;
}

#ifdef __clang__
#define RUN_LOOP_ATTRIBUTES __attribute__((noinline))
#else
#define RUN_LOOP_ATTRIBUTES __attribute__((noinline, noclone))
#endif
RUN_LOOP_ATTRIBUTES uint64_t run_loop(aeron_spsc_rb_t *rb, const void *msg, size_t size,
                                      uint64_t messages, unsigned batch, sink *s) {
    uint64_t delivered = 0;
    for (uint64_t sent = 0; sent < messages; sent += batch) {
        for (unsigned i = 0; i < batch; i++) {
            int32_t at = aeron_spsc_rb_try_claim(rb, 1, size);
            if (at < 0) continue; /* never: the ring is drained every batch */
            memcpy(rb->buffer + at, msg, size);
            aeron_spsc_rb_commit(rb, at);
        }
        delivered += aeron_spsc_rb_read(rb, take, s, SIZE_MAX);
    }
    return delivered;
}

int main(int argc, char **argv) {
    uint64_t messages = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000u;
    size_t size = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 64u;
    unsigned batch = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 16u;
    void *mem = aligned_alloc(4096, RING + AERON_RB_TRAILER_LENGTH);
    unsigned char msg[4096];
    static sink s;
    aeron_spsc_rb_t rb;
    uint64_t got;
    if (mem == NULL || size > sizeof msg || batch == 0 || batch > 64 || messages % batch != 0)
        return 2;
    memset(mem, 0, RING + AERON_RB_TRAILER_LENGTH);
    memset(msg, 'x', size);
    if (aeron_spsc_rb_init(&rb, mem, RING + AERON_RB_TRAILER_LENGTH) != 0) return 1;
    got = run_loop(&rb, msg, size, messages, batch, &s);
    printf("%llu messages of %zu bytes delivered\n", (unsigned long long)got, size);
    free(mem);
    return got == messages ? 0 : 1;
}
