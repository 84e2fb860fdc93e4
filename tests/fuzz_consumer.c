/* Fuzz target: a hostile region. The input becomes the region itself
   (header and data area) plus a list of consumer operations and of
   "peer" moves (write_pos jumps, closing, record headers with a valid tag
   for their position, some of them written while the consumer is inside
   its callback, runs of such records up to the end of a lap); reads include trailing ones, which trust write_pos as a
   bound. Whatever the bytes, every call must return valid data or
   an error code, and nothing outside the region may be touched: the region
   is an exact-size heap block, so AddressSanitizer flags any access past
   it.

   Input: [capacity exponent][flags][op count][ops...][region bytes...]
   flags bit 0: after overlaying, restore a valid header (magic, version,
   capacity, max_message, data offset), so the data area gets exercised.
   flags bit 2: start both positions (flags >> 3) laps and a few records
   before the 64-bit counters wrap.

   Built with -fsanitize=fuzzer it is a libFuzzer target; otherwise main()
   replays the files named on the command line (the seed corpus). */
#ifndef TEST_IMPLEMENTATION_ELSEWHERE /* the fast-* builds: in tests/compile/impl.c */
#define SHARED_RING_IMPLEMENTATION
#endif
#include "../shared_ring.h"
#include "fuzz_main.h"

#include <stdlib.h>

static volatile unsigned sink;
static unsigned char *fuzz_region;
static size_t fuzz_capacity;
static uint8_t forge_in_callback; /* 0: no; else the forged length's seed */

static void put_u64(unsigned char *r, size_t off, uint64_t v) { memcpy(r + off, &v, 8); }
static uint64_t get_u64(const unsigned char *r, size_t off) {
    uint64_t v;
    memcpy(&v, r + off, 8);
    return v;
}

/* The peer publishes a record header with the right tag (low 32 bits of
   the position, bit 0 set) at read_pos + 8 * step: the only way for random
   input to reach the consumer's deeper paths. Lengths may be anything. */
static void forge_header(unsigned step, uint32_t len) {
    uint64_t pos = (get_u64(fuzz_region, 256) & ~(uint64_t)7) + 8u * step;
    uint64_t hdr = (uint64_t)((uint32_t)pos | 1u) << 32 | len;
    put_u64(fuzz_region, SHARED_RING_HEADER_SIZE + (size_t)(pos & (fuzz_capacity - 1)), hdr);
}

/* The peer publishes a run of equal records, each with the right tag, from
   read_pos (or the start of the next lap) + 8 * (0..3) to the end of that
   lap: a chain for the consumer to follow, which random bytes almost
   never give. Payloads of 8, 16, 32 or 64 bytes. */
static void forge_chain(uint8_t seed) {
    uint64_t read_pos = get_u64(fuzz_region, 256) & ~(uint64_t)7;
    uint64_t base = seed & 32u ? (read_pos | (fuzz_capacity - 1)) + 1u : read_pos;
    uint64_t pos = base + 8u * ((seed >> 6) & 3u), rec = (8u << ((seed >> 2) & 3u)) + 8u;
    while ((pos & (fuzz_capacity - 1)) + rec <= fuzz_capacity) {
        uint64_t hdr = (uint64_t)((uint32_t)pos | 1u) << 32 | (rec - 8u);
        put_u64(fuzz_region, SHARED_RING_HEADER_SIZE + (size_t)(pos & (fuzz_capacity - 1)), hdr);
        pos += rec;
        if ((pos & (fuzz_capacity - 1)) == 0) break; /* the lap is full */
    }
}

static uint32_t forged_length(uint8_t seed) {
    switch (seed & 3u) {
    case 0: return seed >> 2;                    /* small */
    case 1: return 0xFFFFFFFFu;                  /* padding */
    case 2: return (uint32_t)fuzz_capacity / 2u; /* just over max */
    default: /* a filler (0xFFFFFFF0 with no size included), or huge */
        return seed & 4u ? 0xFFFFFFF0u | ((seed >> 3) & 7u) : (uint32_t)seed << 24;
    }
}

/* Read every byte handed out, so ASan checks the whole message. */
static int touch_message(void *user, const void *data, size_t len) {
    const unsigned char *p = (const unsigned char *)data;
    size_t max = *(const size_t *)user, i;
    if (len > max) abort(); /* must never exceed the attached max_message */
    for (i = 0; i < len; i++) sink += p[i];
    /* The peer keeps writing while we read. */
    if (forge_in_callback)
        forge_header((unsigned)(forge_in_callback & 31u), forged_length(forge_in_callback));
    return 0;
}

static int stop_after_one(void *user, const void *data, size_t len) {
    touch_message(user, data, len);
    return 1;
}

static int is_result(int r) { return r >= SHARED_RING_PEER_GONE; }

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n) {
    size_t capacity, size, max, nops, i;
    unsigned char *region;
    shared_ring_consumer c;
    const uint8_t *ops;
    int r;
    if (n < 3) return 0;
    capacity = (size_t)64 << (in[0] % 7u); /* 64 .. 4096 */
    nops = in[2] % 64u;
    if (n < 3 + nops) return 0;
    ops = in + 3;
    size = shared_ring_region_size(capacity, 0);
    region = (unsigned char *)malloc(size);
    if (region == NULL) return 0;
    fuzz_region = region;
    fuzz_capacity = capacity;
    forge_in_callback = 0;
    shared_ring_format(region, size, capacity, 0);
    /* Overlay the rest of the input onto the region. */
    memcpy(region, in + 3 + nops, n - 3 - nops < size ? n - 3 - nops : size);
    if (in[1] & 1u) {
        uint32_t magic = SHARED_RING_MAGIC, version = SHARED_RING_LAYOUT_VERSION;
        uint32_t max32 = (uint32_t)(capacity / 2 - 8), off = SHARED_RING_HEADER_SIZE;
        memcpy(region + 0, &magic, 4);
        memcpy(region + 4, &version, 4);
        put_u64(region, 8, capacity);
        memcpy(region + 16, &max32, 4);
        memcpy(region + 20, &off, 4);
    }
    if (in[1] & 4u) {
        uint64_t start = (uint64_t)0 - capacity * (uint64_t)(in[1] >> 3) - 8u * (in[1] & 3u);
        put_u64(region, 128, start);
        put_u64(region, 256, start);
    }
    /* Garbage in the consumer's identity block mostly names no live
       process, or one in another pid namespace (ERR_BUSY: nothing to fuzz
       after that): keep it only for inputs that ask, so the rest reach the
       consumer's read paths. */
    if (!(in[1] & 2u) && size >= 864) memset(region + 768, 0, 96);
    r = shared_ring_attach_consumer(&c, region, size, NULL);
    if (!is_result(r)) abort();
    max = shared_ring_consumer_max_message(&c);
    for (i = 0; r == SHARED_RING_OK && i < nops; i++) {
        shared_ring_message m;
        int q;
        switch (ops[i] & 15u) {
        case 0: q = shared_ring_read_some(&c, touch_message, &max); break;
        case 1: q = shared_ring_read_some(&c, stop_after_one, &max); break;
        case 2:
            q = shared_ring_peek(&c, &m);
            if (q == SHARED_RING_OK) touch_message(&max, m.data, m.len);
            break;
        case 3: q = shared_ring_release(&c); break;
        case 4: q = shared_ring_wait(&c, 0); break;
        case 5: /* the peer moves write_pos: a few records past read_pos
                   (into a record, onto padding), or anywhere in two laps */
            put_u64(region, 128,
                    ops[i] & 8u
                        ? (get_u64(region, 256) & ~(uint64_t)7) + (uint64_t)(ops[i] >> 4) * 8u
                        : (uint64_t)(ops[i] >> 4) * 8u * 17u);
            q = 0;
            break;
        case 6: /* the peer rewrites the header after attach */
            put_u64(region, 8, (uint64_t)ops[i] << 20);
            q = 0;
            break;
        case 7: /* the peer closes */
            memset(region + 524, 1, 1);
            q = 0;
            break;
        case 8:
        case 9:
        case 10:
        case 11: /* the peer publishes a header */
            forge_header(ops[i] >> 4, forged_length((uint8_t)(ops[i] * 37u)));
            q = 0;
            break;
        case 12: /* the peer publishes a chain of records, or will write
                    headers during our callbacks */
            if (ops[i] & 16u)
                forge_chain(ops[i]);
            else
                forge_in_callback = (uint8_t)(ops[i] | 1u);
            q = 0;
            break;
        case 13: /* the peer rewrites max_message after attach */
            memset(region + 16, ops[i], 4);
            q = 0;
            break;
        case 14: q = shared_ring_read(&c, touch_message, &max, 0); break;
        default: /* a read that trails a dense stream: it bounds itself by
                    write_pos, which the peer moves (case 5) */
            c.trailing = 1;
            q = shared_ring_read(&c, touch_message, &max, 1000);
            break;
        }
        if (!is_result(q) && q < 0) abort();
    }
    free(region);
    return 0;
}

FUZZ_REPLAY_MAIN
