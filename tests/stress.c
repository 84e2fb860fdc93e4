/* Stress: many self-checking messages of random sizes through a small ring
   that wraps constantly, between two threads and between two processes, in
   every producer mode, and with a consumer that sleeps in its own poll()
   loop (shared_ring_arm + pipes signalled by wake hooks). Zero lost,
   duplicated, reordered or corrupted messages, and no lost wake-up.

   usage: stress [MESSAGES_PER_RUN [threads|processes|all]]
   (default 10000000 messages per run, all runs) */
#define _GNU_SOURCE
#ifndef TESTS_EXTERNAL_IMPLEMENTATION /* else linked from a C++ build */
#ifndef TEST_IMPLEMENTATION_ELSEWHERE /* the fast-* builds: in tests/compile/impl.c */
#define SHARED_RING_IMPLEMENTATION
#endif
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
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#define CAPACITY 4096u
#define MAX_LEN 1000u

static uint64_t messages = 10000000u;

typedef enum mode { MODE_BLOCKING, MODE_NO_WAIT, MODE_CORKED, MODE_EVENT_LOOP } mode;

/* MODE_EVENT_LOOP: each side sleeps on the read end of its own pipe, and
   its wake hook writes to the other side's pipe. */
typedef struct loop_fds {
    int sleep_on; /* read end this side polls */
    int wake;     /* write end of the peer's pipe */
} loop_fds;

typedef struct run {
    void *region;
    size_t size;
    mode how;
    int attach_failed;
    message_tally seen;
    int end_result;
    loop_fds producer_fds, consumer_fds;
    uint64_t lost_wakeups; /* event loop: a poll that waited 5 s for nothing */
    uint64_t progress;     /* seen.delivered, published for the watchdog */
    /* The handles live here so that the watchdog can show their state
       (the producer's only between threads: a child process has its own). */
    shared_ring_producer producer;
    shared_ring_consumer consumer;
} run;

/* ---- watchdog ------------------------------------------------------------------
   A run that stops making progress is a failure, not a hang: after
   STALL_SECONDS without a new message the watchdog prints the region's
   positions and sleeping words (offsets from the header's layout table),
   kills the producer process if there is one, and exits non-zero. */
#ifndef STALL_SECONDS
#define STALL_SECONDS 30
#endif

static run *watched_run; /* __atomic accesses: the watchdog reads them */
#if HAVE_PROCESSES
static pid_t watched_child; /* the producer process, or 0 */
#endif

#ifdef _WIN32
#include <windows.h>
static void sleep_one_second(void) { Sleep(1000); }
#else
#include <signal.h>
static void sleep_one_second(void) { sleep(1); }
#endif

static void watch(run *r) { __atomic_store_n(&watched_run, r, __ATOMIC_RELEASE); }

static uint64_t region_u64(const run *r, size_t off) {
    uint64_t v;
    memcpy(&v, (const unsigned char *)r->region + off, sizeof v);
    return v;
}

static uint32_t region_u32(const run *r, size_t off) {
    uint32_t v;
    memcpy(&v, (const unsigned char *)r->region + off, sizeof v);
    return v;
}

/* What each handle believed when the run stalled: positions, the
   producer's publish state, and how often each side slept and woke. */
static void report_handles(const run *r) {
    const shared_ring_producer *p = &r->producer;
    const shared_ring_consumer *c = &r->consumer;
    fprintf(
        stderr,
        "stress: consumer peek_pos %#llx (header there %#llx) read_pos %#llx peeked %u "
        "sleeps %llu wakes %llu; "
        "producer write_pos %#llx published %#llx direct %u cork_depth %u full_latched %u "
        "read_cache %#llx fast_left %#llx sleeps %llu wakes %llu\n",
        (unsigned long long)c->peek_pos,
        (unsigned long long)region_u64(r, 1024 + (size_t)(c->peek_pos & (region_u64(r, 8) - 1u))),
        (unsigned long long)c->read_pos, c->peeked, (unsigned long long)c->s.stats.sleeps,
        (unsigned long long)c->s.stats.wakes, (unsigned long long)p->write_pos,
        (unsigned long long)p->published, p->direct, p->cork_depth, p->full_latched,
        (unsigned long long)p->read_cache, (unsigned long long)p->fast_left,
        (unsigned long long)p->s.stats.sleeps, (unsigned long long)p->s.stats.wakes);
}

static void report_stall(const run *r) {
    uint64_t rd = region_u64(r, 256), cap = region_u64(r, 8);
    uint64_t at_read = region_u64(r, 1024 + (size_t)(rd & (cap - 1u)));
    fprintf(stderr,
            "stress: no progress for %d s after %llu messages (mode %d): write_pos %#llx "
            "read_pos %#llx producer_wake_pos %#llx, consumer sleeping %u fenceless_for %llu mode %#x, "
            "producer sleeping %u fenceless_for %llu mode %#x, closed %u corrupt %u, header at "
            "read_pos %#llx\n",
            STALL_SECONDS, (unsigned long long)r->progress, (int)r->how,
            (unsigned long long)region_u64(r, 128), (unsigned long long)rd,
            (unsigned long long)region_u64(r, 528), region_u32(r, 384),
            (unsigned long long)region_u64(r, 408), region_u32(r, 392), region_u32(r, 512),
            (unsigned long long)region_u64(r, 536), region_u32(r, 520),
            region_u32(r, 524), region_u32(r, 264), (unsigned long long)at_read);
}

static void *watchdog(void *arg) {
    uint64_t last = UINT64_MAX;
    int still = 0;
    (void)arg;
    for (;;) {
        run *r = __atomic_load_n(&watched_run, __ATOMIC_ACQUIRE);
        uint64_t now = r != NULL ? __atomic_load_n(&r->progress, __ATOMIC_RELAXED) : 0;
        if (r == NULL || now != last)
            still = 0;
        else if (++still >= STALL_SECONDS) {
            report_stall(r);
            report_handles(r);
#if HAVE_PROCESSES
            pid_t child = __atomic_load_n(&watched_child, __ATOMIC_RELAXED);
            if (child > 0) kill(child, SIGKILL);
#endif
            _exit(3);
        }
        last = now;
        sleep_one_second();
    }
    return NULL;
}

#if HAVE_PROCESSES
static void drain_pipe(int fd) {
    char buf[64];
    while (read(fd, buf, sizeof buf) > 0) {
    }
}

static void pipe_wait(void *user, void *addr, uint32_t expected, uint64_t timeout_ns) {
    const loop_fds *f = (const loop_fds *)user;
    struct pollfd pfd;
    int ms = timeout_ns >= 1000000000u ? 1000 : (int)(timeout_ns / 1000000u) + 1;
    if (__atomic_load_n((uint32_t *)addr, __ATOMIC_ACQUIRE) != expected) return;
    pfd.fd = f->sleep_on;
    pfd.events = POLLIN;
    if (poll(&pfd, 1, ms) > 0) drain_pipe(f->sleep_on);
}

static void pipe_wake(void *user, void *addr) {
    const loop_fds *f = (const loop_fds *)user;
    char one = 1;
    (void)addr;
    if (write(f->wake, &one, 1) < 0) { /* full: a wake-up is pending anyway */
    }
}

/* Two non-blocking pipes, one per sleeper. */
static int make_loop_fds(run *r) {
    int to_producer[2], to_consumer[2], i;
    if (pipe(to_producer) != 0 || pipe(to_consumer) != 0) return -1;
    for (i = 0; i < 2; i++) {
        fcntl(to_producer[i], F_SETFL, O_NONBLOCK);
        fcntl(to_consumer[i], F_SETFL, O_NONBLOCK);
    }
    r->producer_fds.sleep_on = to_producer[0];
    r->producer_fds.wake = to_consumer[1];
    r->consumer_fds.sleep_on = to_consumer[0];
    r->consumer_fds.wake = to_producer[1];
    return 0;
}

static void close_loop_fds(run *r) {
    close(r->producer_fds.sleep_on);
    close(r->producer_fds.wake);
    close(r->consumer_fds.sleep_on);
    close(r->consumer_fds.wake);
}
#endif

/* Attach options for a side: NULL, or pipe hooks in the event-loop mode. */
static const shared_ring_options *options_for(const run *r, const loop_fds *fds,
                                              shared_ring_options *o) {
#if HAVE_PROCESSES
    if (r->how == MODE_EVENT_LOOP) {
        *o = shared_ring_default_options();
        o->wait = pipe_wait;
        o->wake = pipe_wake;
        o->hook_user = (void *)(uintptr_t)fds;
        return o;
    }
#endif
    (void)r;
    (void)fds;
    (void)o;
    return NULL;
}

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
        int r = shared_ring_claim(p, len, &dst, SHARED_RING_FOREVER);
        if (r != SHARED_RING_OK) return r;
        message_fill(seq, (unsigned char *)dst, len);
        return shared_ring_commit(p, len);
    }
    return shared_ring_write(p, len, fill_message, &seq, SHARED_RING_FOREVER);
}

/* Returns 0 when every message was written. */
static int produce_all(run *r) {
    shared_ring_producer *const p = &r->producer;
    shared_ring_options o;
    uint64_t seq = 0;
    mode how = r->how;
    if (shared_ring_attach_producer(p, r->region, r->size, options_for(r, &r->producer_fds, &o)) !=
        SHARED_RING_OK)
        return 1;
    while (seq < messages) {
        uint64_t batch = how == MODE_CORKED ? 1u + message_mix(seq) % 64u : 1u;
        if (how == MODE_CORKED) shared_ring_cork(p);
        for (; batch > 0 && seq < messages; batch--, seq++)
            if (produce_one(p, seq, how) != SHARED_RING_OK) return 1;
        if (how == MODE_CORKED) shared_ring_uncork(p);
    }
    if (shared_ring_close(p) != SHARED_RING_OK) return 1;
    /* A producer process reports its late wake-ups by failing. */
    return r->producer.s.stats.late_wakes != 0 ? 4 : 0;
}

static void *producer_thread(void *arg) {
    run *r = (run *)arg;
    if (produce_all(r) != 0) r->attach_failed = 1;
    return NULL;
}

/* ---- consumer -------------------------------------------------------------- */

#if HAVE_PROCESSES
/* The event loop: read what is there; when nothing, arm, then sleep in
   poll() on our pipe until the producer's wake hook writes to it. A poll
   that waits 5 s for nothing is a lost wake-up. Returns read_some's last. */
static int event_loop_step(run *r, shared_ring_consumer *c) {
    struct pollfd pfd;
    int n = shared_ring_read_some(c, message_tally_check, &r->seen);
    if (n != SHARED_RING_EMPTY) return n;
    n = shared_ring_arm(c);
    if (n != SHARED_RING_OK) return n == 1 ? 0 : n;
    pfd.fd = r->consumer_fds.sleep_on;
    pfd.events = POLLIN;
    /* after one lost wake-up, short polls: finish (and fail) soon */
    if (poll(&pfd, 1, r->lost_wakeups != 0 ? 10 : 5000) == 0) r->lost_wakeups++;
    drain_pipe(r->consumer_fds.sleep_on);
    return 0;
}
#endif

/* Blocking batch reads, polling batch reads, the pull API, or an event
   loop, by mode. */
static void consume_all(run *r) {
    shared_ring_consumer *const c = &r->consumer;
    shared_ring_options o;
    int n;
    if (shared_ring_attach_consumer(c, r->region, r->size, options_for(r, &r->consumer_fds, &o)) !=
        SHARED_RING_OK) {
        r->attach_failed = 1;
        return;
    }
    for (;;) {
        if (r->how == MODE_BLOCKING) {
            n = shared_ring_read(c, message_tally_check, &r->seen, SHARED_RING_FOREVER);
        } else if (r->how == MODE_NO_WAIT) {
            n = shared_ring_read_some(c, message_tally_check, &r->seen);
            if (n == SHARED_RING_EMPTY) {
                sched_yield();
                n = 0;
            }
        } else if (r->how == MODE_EVENT_LOOP) {
#if HAVE_PROCESSES
            n = event_loop_step(r, c);
#endif
        } else {
            shared_ring_message m;
            n = shared_ring_wait(c, SHARED_RING_FOREVER);
            while (n == SHARED_RING_OK && (n = shared_ring_peek(c, &m)) == SHARED_RING_OK)
                message_tally_check(&r->seen, m.data, m.len);
            shared_ring_release(c);
            if (n == SHARED_RING_EMPTY) n = 0;
        }
        __atomic_store_n(&r->progress, r->seen.delivered, __ATOMIC_RELAXED);
        if (n < 0) break;
    }
    r->end_result = n;
}

/* A region both sides see: shared anonymous memory (inherited by fork). */
static void *alloc_region(size_t *size) {
    void *mem;
    *size = shared_ring_region_size(CAPACITY, 0);
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

/* Sleeps that ran into recheck_ns and found what they waited for: a
   wake-up that did not come. The library bounds them (a safety net for
   what nobody has found yet); here any of them is a failure. The
   producer's count is only here between threads (a producer process keeps
   its own). */
static uint64_t late_wakes(const run *r) {
    return r->consumer.s.stats.late_wakes + r->producer.s.stats.late_wakes;
}

static void check_run(const run *r) {
    CHECK_EQ(r->attach_failed, 0);
    CHECK_EQ(r->lost_wakeups, 0);
    CHECK_EQ(r->end_result, SHARED_RING_CLOSED);
    CHECK_EQ(r->seen.delivered, messages);
    CHECK_EQ(r->seen.bad, 0);
    CHECK_EQ(late_wakes(r), 0);
    /* trails: how often blocking reads began trailing the producer (their
       bounded reads are checked like every other delivery) */
    printf("  %-40s %llu messages, %llu bad, %llu late wake-ups, %llu trails\n", harness_current,
           (unsigned long long)r->seen.delivered, (unsigned long long)r->seen.bad,
           (unsigned long long)late_wakes(r), (unsigned long long)r->consumer.s.stats.trails);
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
#if HAVE_PROCESSES
    if (how == MODE_EVENT_LOOP) CHECK_EQ(make_loop_fds(&r), 0);
#endif
    pthread_create(&t, NULL, producer_thread, &r);
    watch(&r);
    consume_all(&r);
    pthread_join(t, NULL);
    watch(NULL);
    check_run(&r);
#if HAVE_PROCESSES
    if (how == MODE_EVENT_LOOP) close_loop_fds(&r);
#endif
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
    if (how == MODE_EVENT_LOOP) CHECK_EQ(make_loop_fds(&r), 0);
    child = harness_fork();
    if (child == 0) _exit(produce_all(&r));
    __atomic_store_n(&watched_child, child, __ATOMIC_RELAXED);
    watch(&r);
    consume_all(&r);
    watch(NULL);
    /* A consumer that stopped early would leave the producer blocked on
       a full ring forever: fail, don't hang. */
    if (r.end_result != SHARED_RING_CLOSED) kill(child, SIGKILL);
    CHECK(waitpid(child, &status, 0) == child);
    __atomic_store_n(&watched_child, 0, __ATOMIC_RELAXED);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    check_run(&r);
    if (how == MODE_EVENT_LOOP) close_loop_fds(&r);
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
TEST(threads_event_loop_consumer_loses_no_message_and_no_wakeup) {
    between_threads(MODE_EVENT_LOOP);
}
TEST(processes_event_loop_consumer_loses_no_message_and_no_wakeup) {
    between_processes(MODE_EVENT_LOOP);
}
#endif

int main(int argc, char **argv) {
    const char *which = argc > 2 ? argv[2] : "all";
    int threads = strcmp(which, "processes") != 0, processes = strcmp(which, "threads") != 0;
    pthread_t dog;
    if (argc > 1) messages = strtoull(argv[1], NULL, 10);
    pthread_create(&dog, NULL, watchdog, NULL);
    if (threads) {
        RUN(threads_blocking_writes_and_blocking_batch_reads_lose_nothing);
        RUN(threads_writes_without_waiting_and_polled_batch_reads_lose_nothing);
        RUN(threads_corked_claims_and_pull_reads_lose_nothing);
#if HAVE_PROCESSES
        RUN(threads_event_loop_consumer_loses_no_message_and_no_wakeup);
#endif
    }
    if (processes && HAVE_PROCESSES) {
#if HAVE_PROCESSES
        RUN(processes_blocking_writes_and_blocking_batch_reads_lose_nothing);
        RUN(processes_writes_without_waiting_and_polled_batch_reads_lose_nothing);
        RUN(processes_corked_claims_and_pull_reads_lose_nothing);
        RUN(processes_event_loop_consumer_loses_no_message_and_no_wakeup);
#endif
    }
    return harness_summary("stress");
}
