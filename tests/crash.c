/* Crashed peers: a producer process killed with SIGKILL at a random moment
   (mid-write, inside a claim, while corked) leaves the consumer with a prefix
   of whole, valid messages and then a timeout, never a hang or garbage; a
   killed consumer leaves the producer with FULL / TIMEOUT, never a hang.

   usage: crash [ROUNDS]   (default 50) */
#define _GNU_SOURCE
#ifndef TESTS_EXTERNAL_IMPLEMENTATION /* else linked from a C++ build */
#ifndef TEST_IMPLEMENTATION_ELSEWHERE /* the fast-* builds: in tests/compile/impl.c */
#define SHARED_RING_IMPLEMENTATION
#endif
#endif
#include "../shared_ring.h"
#include "harness.h"
#include "message_check.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CAPACITY 8192u
#define MAX_LEN 700u
#define AFTER_KILL_TIMEOUT_NS 50000000ull /* 50 ms: the producer is gone */

static int rounds = 50;

static void *new_region(size_t *size) {
    void *mem;
    *size = shared_ring_region_size(CAPACITY, 0);
    mem = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return NULL;
    if (shared_ring_format(mem, *size, CAPACITY, MAX_LEN) != SHARED_RING_OK) return NULL;
    return mem;
}

static void sleep_us(long us) {
    struct timespec d;
    d.tv_sec = us / 1000000;
    d.tv_nsec = (us % 1000000) * 1000;
    nanosleep(&d, NULL);
}

/* The child's word says whose side it is from its claim on, before its attach
   ends: a kill in between leaves a claim, not a peer, and a side nobody
   attached gives TIMEOUT, not PEER_GONE. So the child says over a pipe of
   its round when its attach returned, and the parent kills it only after. */
static harness_teller attached;

/* Child: write forever, mixing plain writes, corked batches and claims that
   stay open for a while, so a kill lands in every state. */
static void produce_forever(void *region, size_t size) {
    shared_ring_producer p;
    uint64_t seq = 0;
    int ok = shared_ring_attach_producer(&p, region, size, NULL) == SHARED_RING_OK;
    harness_tell(&attached, ok);
    if (!ok) _exit(3);
    for (;;) {
        uint64_t kind = message_mix(seq ^ 0xC0FFEEu) % 4u;
        size_t len = message_len(seq, MAX_LEN);
        if (kind == 0) {
            unsigned char buf[MAX_LEN];
            message_fill(seq, buf, len);
            if (shared_ring_write_bytes(&p, buf, len, SHARED_RING_FOREVER) != 0) _exit(4);
        } else {
            void *dst;
            int batch = kind == 1 ? 8 : 1, i;
            if (kind == 1) shared_ring_cork(&p);
            for (i = 0; i < batch; i++, seq++) {
                len = message_len(seq, MAX_LEN);
                if (shared_ring_claim(&p, len, &dst, SHARED_RING_FOREVER) != 0) _exit(5);
                /* Half-written claim: a kill here must never surface. */
                memset(dst, 0xEE, len);
                if (kind == 3) sleep_us(20);
                message_fill(seq, (unsigned char *)dst, len);
                shared_ring_commit(&p, len);
            }
            if (kind == 1) shared_ring_uncork(&p);
            continue;
        }
        seq++;
    }
}

TEST(killed_producer_leaves_whole_messages_then_peer_gone) {
    int round, hung = 0, bad_end = 0;
    uint64_t total = 0, bad = 0;
    for (round = 0; round < rounds; round++) {
        size_t size;
        void *region = new_region(&size);
        shared_ring_consumer c;
        message_tally v = { 0, 0, MAX_LEN };
        pid_t child;
        long run_us = (long)(message_mix((uint64_t)round) % 3000u);
        uint64_t start;
        int r;
        CHECK(region != NULL);
        if (region == NULL) return;
        child = harness_fork_telling(&attached);
        if (child == 0) produce_forever(region, size);
        CHECK_EQ(shared_ring_attach_consumer(&c, region, size, NULL), SHARED_RING_OK);
        CHECK(harness_told_ok(&attached));
        start = (uint64_t)time(NULL);
        /* Read while it runs, then kill it without warning. */
        while ((long)((uint64_t)time(NULL) - start) < 1 && v.delivered < 200000u) {
            r = shared_ring_read(&c, message_tally_check, &v, 1000000u);
            if (r < 0 && r != SHARED_RING_TIMEOUT) break;
            if (run_us-- <= 0) break;
        }
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        start = (uint64_t)time(NULL);
        /* A read whose timeout ends before the next look at the producer
           (every 50 ms) times out; the one after it hears PEER_GONE. */
        do {
            r = shared_ring_read(&c, message_tally_check, &v, AFTER_KILL_TIMEOUT_NS);
        } while ((r >= 0 || r == SHARED_RING_TIMEOUT) && (uint64_t)time(NULL) - start < 5);
        if (r >= 0 || r == SHARED_RING_TIMEOUT) hung++;
        if (r != SHARED_RING_PEER_GONE) bad_end++;
        total += v.delivered;
        bad += v.bad;
        munmap(region, size);
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(hung, 0);
    CHECK_EQ(bad_end, 0);
    printf("  %d producer kills, %llu messages checked, %llu bad\n", rounds,
           (unsigned long long)total, (unsigned long long)bad);
}

TEST(killed_consumer_leaves_the_producer_with_full_then_peer_gone) {
    int round, not_full = 0, not_gone = 0;
    for (round = 0; round < rounds; round++) {
        size_t size;
        void *region = new_region(&size);
        shared_ring_producer p;
        pid_t child;
        unsigned char buf[MAX_LEN];
        int r = SHARED_RING_OK, i;
        CHECK(region != NULL);
        if (region == NULL) return;
        child = harness_fork_telling(&attached);
        if (child == 0) {
            shared_ring_consumer c;
            message_tally v = { 0, 0, MAX_LEN };
            int ok = shared_ring_attach_consumer(&c, region, size, NULL) == SHARED_RING_OK;
            harness_tell(&attached, ok);
            if (!ok) _exit(3);
            for (;;) shared_ring_read(&c, message_tally_check, &v, SHARED_RING_FOREVER);
        }
        CHECK_EQ(shared_ring_attach_producer(&p, region, size, NULL), SHARED_RING_OK);
        CHECK(harness_told_ok(&attached));
        for (i = 0; i < (int)(message_mix((uint64_t)round) % 500u); i++) {
            message_fill((uint64_t)i, buf, message_len((uint64_t)i, MAX_LEN));
            shared_ring_write_bytes(&p, buf, message_len((uint64_t)i, MAX_LEN), 100000000u);
        }
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        /* With nobody reading, the ring fills: FULL within a bounded number
           of tries; a write that may wait then learns the consumer is gone. */
        for (i = 0; i < (int)(CAPACITY / 8u) + 1 && r == SHARED_RING_OK; i++)
            r = shared_ring_write_bytes(&p, buf, 64, 0);
        if (r != SHARED_RING_FULL) not_full++;
        if (shared_ring_write_bytes(&p, buf, 64, 1000000000u) != SHARED_RING_PEER_GONE) not_gone++;
        munmap(region, size);
    }
    CHECK_EQ(not_full, 0);
    CHECK_EQ(not_gone, 0);
    printf("  %d consumer kills\n", rounds);
}

int main(int argc, char **argv) {
    if (argc > 1) rounds = atoi(argv[1]);
    alarm(600); /* a hang is a failure, not a stuck CI job */
    RUN(killed_producer_leaves_whole_messages_then_peer_gone);
    RUN(killed_consumer_leaves_the_producer_with_full_then_peer_gone);
    return harness_summary("crash");
}
