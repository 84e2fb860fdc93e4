/* Fuzz target: producer and consumer operations interleaved in the order the
   input chooses (writes of every kind, claims, aborts, corks, flushes,
   closes, reads, peeks, releases, re-attaches of either side), on one
   well-formed ring.
   A model of the queue checks every delivered message: exactly the
   committed ones, in order, whole, each at most once, and never one that
   was not yet published.

   Input: [capacity exponent][op, arg, arg]...  */
#ifndef TEST_IMPLEMENTATION_ELSEWHERE /* the fast-* builds: in tests/compile/impl.c */
#define SHARED_RING_IMPLEMENTATION
#endif
#include "../shared_ring.h"
#include "fuzz_main.h"

#include <stdlib.h>

#define MODEL_MAX 4096

/* Committed messages not yet released, oldest first: the first `delivered`
   of them were handed out and await release, the first `published` of them
   are visible to the consumer. */
typedef struct model {
    uint64_t seq[MODEL_MAX];
    size_t len[MODEL_MAX];
    unsigned char fill[MODEL_MAX]; /* 0: the seq pattern; else this byte */
    size_t head, count, published, delivered;
    uint64_t next_seq;
} model;

static unsigned char pattern(uint64_t seq, size_t i) { return (unsigned char)(seq * 31u + i * 7u); }

static void fill_pattern(unsigned char *dst, uint64_t seq, size_t len) {
    size_t i;
    for (i = 0; i < len; i++) dst[i] = pattern(seq, i);
}

static void model_push(model *m, size_t len, unsigned char fill) {
    size_t at = (m->head + m->count) % MODEL_MAX;
    if (m->count == MODEL_MAX) abort();
    m->seq[at] = m->next_seq++;
    m->len[at] = len;
    m->fill[at] = fill;
    m->count++;
}

/* A delivered message must be the next published one, byte for byte. */
static int check_delivery(void *user, const void *data, size_t len) {
    model *m = (model *)user;
    const unsigned char *p = (const unsigned char *)data;
    size_t at = (m->head + m->delivered) % MODEL_MAX, i;
    if (m->delivered >= m->published || m->len[at] != len) abort();
    for (i = 0; i < len; i++)
        if (p[i] != (m->fill[at] ? m->fill[at] : pattern(m->seq[at], i))) abort();
    m->delivered++;
    return 0;
}

static int check_one(void *user, const void *data, size_t len) {
    check_delivery(user, data, len);
    return 1;
}

static void model_release(model *m) {
    m->head = (m->head + m->delivered) % MODEL_MAX;
    m->count -= m->delivered;
    m->published -= m->delivered;
    m->delivered = 0;
}

typedef struct fill_ctx {
    uint64_t seq;
    size_t use;
} fill_ctx;

static size_t fill_some(void *user, void *dst, size_t max_len) {
    fill_ctx *f = (fill_ctx *)user;
    size_t n = f->use <= max_len ? f->use : max_len + 1; /* sometimes too long */
    if (n <= max_len) fill_pattern((unsigned char *)dst, f->seq, n);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n) {
    static model m;
    size_t capacity, size, max, i;
    unsigned char *region;
    unsigned char src[4096];
    shared_ring_producer p;
    shared_ring_consumer c;
    int corked = 0, claim_open = 0, closed = 0;
    size_t claim_len = 0;
    /* A restart in one process: the old handle is lost, its side taken back. */
    shared_ring_options take_back = SHARED_RING_OPTIONS_INIT;
    take_back.flags = SHARED_RING_TAKE_BACK;
    if (n < 1) return 0;
    memset(&m, 0, sizeof m);
    capacity = (size_t)64 << (in[0] % 7u);
    size = shared_ring_region_size(capacity, 0);
    region = (unsigned char *)aligned_alloc(128, (size + 127u) & ~(size_t)127u);
    if (region == NULL || shared_ring_format(region, size, capacity, 0) != SHARED_RING_OK) abort();
    if (shared_ring_attach_producer(&p, region, size, NULL) != SHARED_RING_OK) abort();
    if (shared_ring_attach_consumer(&c, region, size, NULL) != SHARED_RING_OK) abort();
    max = shared_ring_producer_max_message(&p);
    for (i = 1; i + 2 < n; i += 3) {
        uint8_t op = in[i] % 16u;
        size_t len = ((size_t)in[i + 1] << 8 | in[i + 2]) % (max + 2); /* may exceed max */
        int r = 0;
        switch (op) {
        case 0: { /* write_bytes */
            size_t k = len <= sizeof src ? len : 0;
            fill_pattern(src, m.next_seq, k);
            r = shared_ring_write_bytes(&p, src, k, 0);
            if (r == SHARED_RING_OK) model_push(&m, k, 0);
            break;
        }
        case 1: { /* write (no wait) with a callback that may return too much */
            fill_ctx f;
            f.seq = m.next_seq;
            f.use = len / 2 + (in[i + 2] & 1u ? len : 0);
            r = shared_ring_write(&p, len, fill_some, &f, 0);
            if (r == SHARED_RING_OK) model_push(&m, f.use, 0);
            break;
        }
        case 2: { /* claim, aligned to 8, 16, 32 or 64 */
            void *dst;
            size_t align = (size_t)8 << (in[i + 2] >> 6);
            r = shared_ring_claim_aligned(&p, len, align, &dst, 0);
            if (r == SHARED_RING_OK && (uintptr_t)dst % align != 0) abort();
            if (r == SHARED_RING_OK) {
                fill_pattern((unsigned char *)dst, m.next_seq, len);
                claim_open = 1;
                claim_len = len;
            }
            break;
        }
        case 3: { /* commit part of the claim, or more than was claimed */
            size_t k = claim_open && len % 4u ? claim_len - len % (claim_len + 1) : len;
            r = shared_ring_commit(&p, k);
            if (r == SHARED_RING_OK) {
                model_push(&m, k, 0);
                claim_open = 0;
            }
            break;
        }
        case 4:
            r = shared_ring_abort(&p);
            if (r == SHARED_RING_OK) claim_open = 0;
            break;
        case 5:
            r = shared_ring_cork(&p);
            if (r == SHARED_RING_OK) corked++;
            break;
        case 6:
            r = shared_ring_uncork(&p);
            if (r == SHARED_RING_OK) corked--;
            break;
        case 7:
            r = shared_ring_flush(&p);
            if (r == SHARED_RING_OK) m.published = m.count;
            break;
        case 8:
            r = shared_ring_close(&p);
            if (r == SHARED_RING_OK) closed = 1, m.published = m.count;
            break;
        case 9: /* a full batch: afterwards nothing published may be left over */
            if (in[i + 1] & 2u) {
                /* a read trailing a dense stream reads up to write_pos,
                   which a single-threaded producer keeps at its end */
                c.trailing = 1;
                r = shared_ring_read(&c, check_delivery, &m, 1000);
                if (r == SHARED_RING_TIMEOUT && m.published != m.delivered) abort();
                /* a wait that found no message (TIMEOUT, CLOSED) reads, and
                   so releases, nothing */
                if (r <= 0) break;
            } else {
                r = shared_ring_read_some(&c, check_delivery, &m);
            }
            model_release(&m);
            if (r == SHARED_RING_EMPTY && m.published != 0) abort();
            break;
        case 10:
            r = shared_ring_read_some(&c, check_one, &m);
            model_release(&m);
            break;
        case 11: {
            shared_ring_message msg;
            r = shared_ring_peek(&c, &msg);
            if (r == SHARED_RING_OK) check_delivery(&m, msg.data, msg.len);
            break;
        }
        case 12:
            r = shared_ring_release(&c);
            model_release(&m);
            break;
        case 13: r = shared_ring_wait(&c, 0); break;
        case 14:
            if (in[i + 1] & 1u) {
                /* A restarted producer continues after what was published;
                   what its predecessor held back (cork, claim) is gone. */
                if (shared_ring_attach_producer(&p, region, size, &take_back) != SHARED_RING_OK)
                    abort();
                m.count = m.published;
                corked = 0;
                claim_open = 0;
            } else {
                /* A restarted consumer resumes after what was released. */
                if (shared_ring_attach_consumer(&c, region, size, &take_back) != SHARED_RING_OK)
                    abort();
                m.delivered = 0;
            }
            break;
        default: { /* write_str */
            char s[64];
            size_t k = len % sizeof s;
            unsigned char ch = (unsigned char)('a' + len % 26u);
            memset(s, ch, k);
            s[k] = '\0';
            r = shared_ring_write_str(&p, s, 0);
            if (r == SHARED_RING_OK) model_push(&m, k, ch);
            break;
        }
        }
        if (r < SHARED_RING_ERR_HANDLE || r == SHARED_RING_ERR_CORRUPT) abort();
        /* A producer that finds the ring full publishes what a cork holds
           back before it says FULL (else retrying would never progress). */
        if (r == SHARED_RING_FULL) m.published = m.count;
        /* Uncorked, every committed message is published (an open claim is
           not committed, so it is not in the model yet). */
        if (corked == 0 && r == SHARED_RING_OK && (op <= 6 || op == 15)) m.published = m.count;
        /* After close, a write that is otherwise valid must say CLOSED. */
        if (closed && (op <= 2 || op == 15) && r == SHARED_RING_OK) abort();
    }
    free(region);
    return 0;
}

FUZZ_REPLAY_MAIN
