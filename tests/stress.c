/* Stress: many self-checking messages of random sizes through a small ring
   that wraps constantly, between two threads and between two processes, in
   every producer mode. Zero lost, duplicated, reordered or corrupted messages.

   usage: stress [MESSAGES_PER_RUN [threads|processes|all]]
   (default 10000000 messages per run, all runs) */
#define _GNU_SOURCE
#ifndef TESTS_EXTERNAL_IMPLEMENTATION /* else linked from a C++ build */
#define SHARED_RING_IMPLEMENTATION
#endif
#include "../shared_ring.h"
#include "harness.h"
#include "message_check.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#ifdef _WIN32 /* threads only: no fork */
#define HAVE_PROCESSES 0
#else
#define HAVE_PROCESSES 1
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#define CAPACITY 4096u
#define MAX_LEN 1000u

static uint64_t messages = 10000000u;

typedef enum mode { MODE_BLOCKING, MODE_NO_WAIT, MODE_CORKED } mode;

typedef struct run {
    void *region;
    size_t size;
    mode how;
    int attach_failed;
    message_tally seen;
    int end_result;
} run;

/* ---- producer -------------------------------------------------------------- */

static size_t fill_message(void *user, void *dst, size_t max_len) {
    uint64_t seq = *(const uint64_t *)user;
    message_fill(seq, (unsigned char *)dst, max_len);
    return max_len;
}

static int produce_one(shared_ring_producer *p, uint64_t seq, mode how) {
    size_t len = message_len(seq, MAX_LEN);
    if (how == MODE_NO_WAIT) {
        int r;
        while ((r = shared_ring_write(p, len, fill_message, &seq, 0)) == SHARED_RING_FULL)
            sched_yield();
        return r;
    }
    if (how == MODE_CORKED) {
        void *dst;
        int r = shared_ring_claim(p, len, SHARED_RING_FOREVER, &dst);
        if (r != SHARED_RING_OK) return r;
        message_fill(seq, (unsigned char *)dst, len);
        return shared_ring_commit(p, len);
    }
    return shared_ring_write(p, len, fill_message, &seq, SHARED_RING_FOREVER);
}

/* Returns 0 when every message was written. */
static int produce_all(void *region, size_t size, mode how) {
    shared_ring_producer p;
    uint64_t seq = 0;
    if (shared_ring_attach_producer(&p, region, size, NULL) != SHARED_RING_OK) return 1;
    while (seq < messages) {
        uint64_t batch = how == MODE_CORKED ? 1u + message_mix(seq) % 64u : 1u;
        if (how == MODE_CORKED) shared_ring_cork(&p);
        for (; batch > 0 && seq < messages; batch--, seq++)
            if (produce_one(&p, seq, how) != SHARED_RING_OK) return 1;
        if (how == MODE_CORKED) shared_ring_uncork(&p);
    }
    return shared_ring_close(&p) != SHARED_RING_OK;
}

static void *producer_thread(void *arg) {
    run *r = (run *)arg;
    if (produce_all(r->region, r->size, r->how) != 0) r->attach_failed = 1;
    return NULL;
}

/* ---- consumer -------------------------------------------------------------- */

/* Blocking batch reads, polling batch reads, or the pull API, by mode. */
static void consume_all(run *r) {
    shared_ring_consumer c;
    int n;
    if (shared_ring_attach_consumer(&c, r->region, r->size, NULL) != SHARED_RING_OK) {
        r->attach_failed = 1;
        return;
    }
    for (;;) {
        if (r->how == MODE_BLOCKING) {
            n = shared_ring_read(&c, message_tally_check, &r->seen, SHARED_RING_FOREVER);
        } else if (r->how == MODE_NO_WAIT) {
            n = shared_ring_read_some(&c, message_tally_check, &r->seen);
            if (n == SHARED_RING_EMPTY) {
                sched_yield();
                n = 0;
            }
        } else {
            shared_ring_message m;
            n = shared_ring_wait(&c, SHARED_RING_FOREVER);
            while (n == SHARED_RING_OK && (n = shared_ring_peek(&c, &m)) == SHARED_RING_OK)
                message_tally_check(&r->seen, m.data, m.len);
            shared_ring_release(&c);
            if (n == SHARED_RING_EMPTY) n = 0;
        }
        if (n < 0) break;
    }
    r->end_result = n;
}

/* A region both sides see: shared anonymous memory (inherited by fork). */
static void *alloc_region(size_t *size) {
    void *mem;
    *size = shared_ring_region_size(CAPACITY);
#if HAVE_PROCESSES
    mem = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return NULL;
#else
    mem = malloc(*size);
    if (mem == NULL) return NULL;
#endif
    if (shared_ring_format(mem, *size, CAPACITY, MAX_LEN) != SHARED_RING_OK) return NULL;
    return mem;
}

static void free_region(void *mem, size_t size) {
#if HAVE_PROCESSES
    munmap(mem, size);
#else
    (void)size;
    free(mem);
#endif
}

static void check_run(const run *r) {
    CHECK_EQ(r->attach_failed, 0);
    CHECK_EQ(r->end_result, SHARED_RING_CLOSED);
    CHECK_EQ(r->seen.delivered, messages);
    CHECK_EQ(r->seen.bad, 0);
    printf("  %-40s %llu messages, %llu bad\n", harness_current,
           (unsigned long long)r->seen.delivered, (unsigned long long)r->seen.bad);
}

static void between_threads(mode how) {
    run r;
    pthread_t t;
    memset(&r, 0, sizeof r);
    r.seen.max_len = MAX_LEN;
    r.how = how;
    r.region = alloc_region(&r.size);
    CHECK(r.region != NULL);
    if (r.region == NULL) return;
    pthread_create(&t, NULL, producer_thread, &r);
    consume_all(&r);
    pthread_join(t, NULL);
    check_run(&r);
    free_region(r.region, r.size);
}

#if HAVE_PROCESSES
static void between_processes(mode how) {
    run r;
    pid_t child;
    int status = 0;
    memset(&r, 0, sizeof r);
    r.seen.max_len = MAX_LEN;
    r.how = how;
    r.region = alloc_region(&r.size);
    CHECK(r.region != NULL);
    if (r.region == NULL) return;
    child = fork();
    if (child == 0) _exit(produce_all(r.region, r.size, how));
    consume_all(&r);
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    check_run(&r);
    free_region(r.region, r.size);
}
#endif

TEST(threads_blocking_writes_and_blocking_batch_reads_lose_nothing) {
    between_threads(MODE_BLOCKING);
}
TEST(threads_writes_without_waiting_and_polled_batch_reads_lose_nothing) {
    between_threads(MODE_NO_WAIT);
}
TEST(threads_corked_claims_and_pull_reads_lose_nothing) { between_threads(MODE_CORKED); }
#if HAVE_PROCESSES
TEST(processes_blocking_writes_and_blocking_batch_reads_lose_nothing) {
    between_processes(MODE_BLOCKING);
}
TEST(processes_writes_without_waiting_and_polled_batch_reads_lose_nothing) {
    between_processes(MODE_NO_WAIT);
}
TEST(processes_corked_claims_and_pull_reads_lose_nothing) { between_processes(MODE_CORKED); }
#endif

int main(int argc, char **argv) {
    const char *which = argc > 2 ? argv[2] : "all";
    int threads = strcmp(which, "processes") != 0, processes = strcmp(which, "threads") != 0;
    if (argc > 1) messages = strtoull(argv[1], NULL, 10);
    if (threads) {
        RUN(threads_blocking_writes_and_blocking_batch_reads_lose_nothing);
        RUN(threads_writes_without_waiting_and_polled_batch_reads_lose_nothing);
        RUN(threads_corked_claims_and_pull_reads_lose_nothing);
    }
    if (processes && HAVE_PROCESSES) {
#if HAVE_PROCESSES
        RUN(processes_blocking_writes_and_blocking_batch_reads_lose_nothing);
        RUN(processes_writes_without_waiting_and_polled_batch_reads_lose_nothing);
        RUN(processes_corked_claims_and_pull_reads_lose_nothing);
#endif
    }
    return harness_summary("stress");
}
