/* Self-checking test messages. The length of message `seq` is a hash of seq,
   so the consumer knows what must come next. Messages of 12 bytes or more
   carry their sequence number (8 bytes) and a checksum of the rest (4 bytes);
   shorter ones carry a byte pattern derived from seq. Any lost, duplicated,
   reordered, torn or corrupted message fails message_check(). */
#ifndef TESTS_MESSAGE_CHECK_H
#define TESTS_MESSAGE_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static uint64_t message_mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static size_t message_len(uint64_t seq, size_t max_len) {
    return (size_t)(message_mix(seq) % (max_len + 1u));
}

static uint32_t message_checksum(const unsigned char *p, size_t n) {
    uint64_t h = 0x84222325CBF29CE4ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001B3ull;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ p[i]) * 0x100000001B3ull;
    return (uint32_t)(h ^ (h >> 32));
}

/* Write message `seq` (message_len(seq, max_len) bytes) at dst. */
static void message_fill(uint64_t seq, unsigned char *dst, size_t len) {
    size_t i;
    if (len < 12) {
        for (i = 0; i < len; i++) dst[i] = (unsigned char)(seq * 131u + i * 7u);
        return;
    }
    {
        uint64_t x = message_mix(seq ^ 0x5555u);
        uint32_t sum;
        for (i = 12; i < len; i++) {
            if ((i & 7u) == 4u) x = x * 6364136223846793005ull + 1442695040888963407ull;
            dst[i] = (unsigned char)(x >> ((i & 7u) * 8u));
        }
        memcpy(dst, &seq, 8);
        sum = message_checksum(dst + 12, len - 12);
        memcpy(dst + 8, &sum, 4);
    }
}

/* 1 if (p, len) is exactly message `seq`, else 0. */
static int message_check(uint64_t seq, const unsigned char *p, size_t len, size_t max_len) {
    size_t i;
    if (len != message_len(seq, max_len)) return 0;
    if (len < 12) {
        for (i = 0; i < len; i++)
            if (p[i] != (unsigned char)(seq * 131u + i * 7u)) return 0;
        return 1;
    }
    {
        uint64_t got_seq;
        uint32_t sum;
        memcpy(&got_seq, p, 8);
        memcpy(&sum, p + 8, 4);
        return got_seq == seq && sum == message_checksum(p + 12, len - 12);
    }
}

/* What a consumer saw: messages delivered, and how many failed their check. */
typedef struct message_tally {
    uint64_t delivered, bad;
    size_t max_len; /* the max_len the producer used */
} message_tally;

/* A read callback (the shape of shared_ring_read_fn): each message must be
   the next one in sequence. */
static int message_tally_check(void *user, const void *data, size_t len) {
    message_tally *t = (message_tally *)user;
    if (!message_check(t->delivered, (const unsigned char *)data, len, t->max_len)) t->bad++;
    t->delivered++;
    return 0;
}

#endif
