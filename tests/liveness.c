/* Peers in other processes: who may attach, what a dead peer's partner
   hears, and how prepare treats a region a dead pair left behind. Every
   test forks; the region maps a memfd, which every side names in
   options.region_fd (the kernel's locks judge who lives), but where a
   test says it attaches without one. */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CAPACITY 4096u
/* The target is 100 ms; the bound checked leaves room for a
   loaded machine, and the time measured is printed. */
/* margin: PEER_GONE comes within SRNG_LIVENESS_NS (50 ms) of the kill, ~21 ms
   measured (p50); 1 s allowed (20x the interval). The interval is a timed
   sleep; ASan (the slowest build that runs this) adds microseconds of work
   to each look. */
#define GONE_BOUND_MS 1000.0

static unsigned char *region;
static size_t size;
static double last_took_ms; /* the last kill test's time to PEER_GONE */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int region_fd = -1;
static shared_ring_options opts; /* the defaults, with region_fd */

/* A formatted ring of `bytes` in a memfd of its own, its descriptor in *fd. */
static unsigned char *ring_file(size_t bytes, int *fd) {
    unsigned char *m;
    *fd = memfd_create("liveness", MFD_CLOEXEC);
    if (*fd < 0 || ftruncate(*fd, (off_t)bytes) != 0) abort();
    m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (m == MAP_FAILED) abort();
    if (shared_ring_format(m, bytes, CAPACITY, 0) != SHARED_RING_OK) abort();
    return m;
}

static void fresh_region(void) {
    if (region != NULL) munmap(region, size);
    if (region_fd >= 0) close(region_fd);
    size = shared_ring_region_size(CAPACITY, 0);
    region = ring_file(size, &region_fd);
    opts = shared_ring_default_options();
    opts.region_fd = region_fd;
}

/* A child that attaches as one side after `prepare` (which may leave it
   unable to read its identity; NULL: none), says so through a pipe, then
   sleeps until killed; with `leader_exits` its main thread calls
   pthread_exit while another thread runs on. Returns its pid once it has
   attached. */
static void *sleep_forever(void *arg) {
    (void)arg;
    for (;;) pause();
    return NULL;
}

static pid_t child_attached(int producer, void (*prepare)(void), int leader_exits) {
    harness_teller t;
    pid_t pid = harness_fork_telling(&t);
    if (pid == 0) {
        shared_ring_producer p;
        shared_ring_consumer c;
        pthread_t thread;
        int r;
        if (prepare != NULL) prepare();
        r = producer ? shared_ring_attach_producer(&p, region, size, &opts)
                     : shared_ring_attach_consumer(&c, region, size, &opts);
        harness_tell(&t, r == SHARED_RING_OK);
        if (leader_exits) {
            pthread_create(&thread, NULL, sleep_forever, NULL);
            pthread_exit(NULL);
        }
        for (;;) pause();
    }
    if (!harness_told_ok(&t)) abort();
    return pid;
}

static pid_t child_attached_as(int producer) { return child_attached(producer, NULL, 0); }

static void reap(pid_t pid) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Kills `victim` after a delay, from a thread, and records when. The
   victim is not reaped until the test is done: a zombie must count as dead. */
typedef struct killer {
    pid_t victim;
    double killed_at;
} killer;

static void *kill_later(void *arg) {
    killer *k = (killer *)arg;
    /* 230 ms: the waiter is asleep by then, and the kill does not fall on
       a multiple of the 50 ms checks that began with its sleep */
    struct timespec d = { 0, 230000000 };
    nanosleep(&d, NULL);
    k->killed_at = now_ms();
    kill(k->victim, SIGKILL);
    return NULL;
}

static int ignore(void *user, const void *data, size_t len) {
    (void)user;
    (void)data;
    (void)len;
    return 0;
}

TEST(consumer_waiting_forever_hears_peer_gone_when_the_producer_is_killed) {
    shared_ring_consumer c;
    killer k = { 0, 0 };
    pthread_t t;
    int r;
    fresh_region();
    k.victim = child_attached_as(1);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    pthread_create(&t, NULL, kill_later, &k);
    r = shared_ring_read(&c, ignore, NULL, SHARED_RING_FOREVER);
    double took = now_ms() - k.killed_at;
    pthread_join(t, NULL);
    CHECK_EQ(r, SHARED_RING_PEER_GONE);
    CHECK(took < GONE_BOUND_MS);
    last_took_ms = took;
    printf("  producer killed: the consumer heard PEER_GONE after %.1f ms\n", took);
    /* A poll after that says so too, instead of EMPTY. */
    CHECK_EQ(shared_ring_read_some(&c, ignore, NULL), SHARED_RING_PEER_GONE);
    reap(k.victim);
}

TEST(producer_blocked_on_a_full_ring_hears_peer_gone_when_the_consumer_is_killed) {
    shared_ring_producer p;
    killer k = { 0, 0 };
    pthread_t t;
    char buf[64] = { 0 };
    int r;
    fresh_region();
    k.victim = child_attached_as(0);
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_OK);
    while (shared_ring_write_bytes(&p, buf, sizeof buf, 0) == SHARED_RING_OK) {
    }
    pthread_create(&t, NULL, kill_later, &k);
    r = shared_ring_write_bytes(&p, buf, sizeof buf, SHARED_RING_FOREVER);
    double took = now_ms() - k.killed_at;
    pthread_join(t, NULL);
    CHECK_EQ(r, SHARED_RING_PEER_GONE);
    CHECK(took < GONE_BOUND_MS);
    last_took_ms = took;
    printf("  consumer killed: the blocked producer heard PEER_GONE after %.1f ms\n", took);
    reap(k.victim);
}

TEST(messages_published_before_the_producer_died_are_read_before_peer_gone) {
    shared_ring_consumer c;
    int count = 0, r;
    pid_t pid;
    fresh_region();
    pid = harness_fork();
    if (pid == 0) {
        shared_ring_producer p;
        if (shared_ring_attach_producer(&p, region, size, &opts) != SHARED_RING_OK) _exit(1);
        shared_ring_write_str(&p, "one", 0);
        shared_ring_write_str(&p, "two", 0);
        _exit(0); /* dies without closing */
    }
    waitpid(pid, NULL, 0);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    while ((r = shared_ring_read(&c, ignore, NULL, SHARED_RING_FOREVER)) > 0) count += r;
    CHECK_EQ(count, 2);
    CHECK_EQ(r, SHARED_RING_PEER_GONE);
}

TEST(a_closed_stream_says_closed_not_peer_gone_after_the_producer_exits) {
    shared_ring_consumer c;
    pid_t pid;
    fresh_region();
    pid = harness_fork();
    if (pid == 0) {
        shared_ring_producer p;
        if (shared_ring_attach_producer(&p, region, size, &opts) != SHARED_RING_OK) _exit(1);
        shared_ring_write_str(&p, "last", 0);
        shared_ring_close(&p);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read(&c, ignore, NULL, SHARED_RING_FOREVER), 1);
    CHECK_EQ(shared_ring_read(&c, ignore, NULL, SHARED_RING_FOREVER), SHARED_RING_CLOSED);
}

TEST(second_producer_while_the_first_process_lives_gets_busy) {
    shared_ring_producer p;
    pid_t first;
    fresh_region();
    first = child_attached_as(1);
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_ERR_BUSY);
    reap(first);
}

TEST(second_consumer_while_the_first_process_lives_gets_busy) {
    shared_ring_consumer c;
    pid_t first;
    fresh_region();
    first = child_attached_as(0);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_ERR_BUSY);
    reap(first);
}

/* TAKE_BACK is for a handle this process lost, not a way past a live
   owner in another process. */
TEST(take_back_does_not_take_a_side_another_live_process_holds) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_producer p;
    pid_t first;
    o.flags = SHARED_RING_TAKE_BACK;
    fresh_region();
    first = child_attached_as(1);
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &o), SHARED_RING_ERR_BUSY);
    reap(first);
}

TEST(a_dead_producers_side_is_taken_over) {
    shared_ring_producer p;
    shared_ring_owners o;
    fresh_region();
    reap(child_attached_as(1));
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_owners_of(region, size, 0, &o), SHARED_RING_OK);
    CHECK_EQ(o.producer.pid, (uint32_t)getpid());
    CHECK_EQ(o.producer.alive, 1);
}

TEST(a_dead_consumers_side_is_taken_over) {
    shared_ring_consumer c;
    fresh_region();
    reap(child_attached_as(0));
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
}

/* A consumer killed between its claim and the end of its attach never was
   a peer: the producer, with the ring full, times out (no PEER_GONE for a
   consumer it never had), and the next consumer takes the dead claim over
   and reads what was written. The word is one no live process can hold. */
TEST(a_consumer_killed_while_attaching_is_no_peer_and_its_claim_is_taken_over) {
    shared_ring_producer p;
    shared_ring_consumer c;
    unsigned char msg[64] = { 0 };
    int r = SHARED_RING_OK, n = 0;
    fresh_region();
    harness_fake_owner(region, SRNG_OFF_CONSUMER_ID,
                       srng_in_state(0x1FFFFFF0u | (uint64_t)777 << 32, SRNG_CLAIMING));
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_OK);
    while (r == SHARED_RING_OK && n++ <= (int)CAPACITY / 8)
        r = shared_ring_write_bytes(&p, msg, 64, 0);
    CHECK_EQ(r, SHARED_RING_FULL);
    CHECK_EQ(shared_ring_write_bytes(&p, msg, 64, 120000000u), SHARED_RING_TIMEOUT);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    CHECK(shared_ring_read(&c, ignore, NULL, 0) > 0);
    CHECK_EQ(shared_ring_write_bytes(&p, msg, 64, 0), SHARED_RING_OK);
    shared_ring_detach_consumer(&c);
    shared_ring_detach_producer(&p);
}

TEST(detach_lets_another_process_attach_as_that_side) {
    shared_ring_producer p;
    int status = -1;
    pid_t pid;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_OK);
    pid = harness_fork();
    if (pid == 0) {
        shared_ring_producer q;
        _exit(shared_ring_attach_producer(&q, region, size, &opts) == SHARED_RING_ERR_BUSY ? 0 : 1);
    }
    waitpid(pid, &status, 0);
    CHECK_EQ(status, 0); /* busy while attached */
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
    pid = harness_fork();
    if (pid == 0) {
        shared_ring_producer q;
        _exit(shared_ring_attach_producer(&q, region, size, &opts) == SHARED_RING_OK ? 0 : 1);
    }
    waitpid(pid, &status, 0);
    CHECK_EQ(status, 0);
}

/* A child producer that writes `n` messages ("m"), closes if asked,
   detaches and exits, before any consumer came. */
static void producer_ran_alone(int n, int close_it) {
    pid_t pid = harness_fork();
    if (pid == 0) {
        shared_ring_producer p;
        int i;
        if (shared_ring_attach_producer(&p, region, size, &opts) != SHARED_RING_OK) _exit(1);
        for (i = 0; i < n; i++) shared_ring_write_str(&p, "m", 0);
        if (close_it) shared_ring_close(&p);
        shared_ring_detach_producer(&p);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
}

static int count_messages(void *user, const void *data, size_t len) {
    (void)data;
    (void)len;
    ++*(int *)user;
    return 0;
}

TEST(prepare_keeps_a_closed_stream_until_a_consumer_has_read_it) {
    shared_ring_consumer c;
    shared_ring_owners before, after;
    int got = 0;
    fresh_region();
    producer_ran_alone(3, 1);
    shared_ring_owners_of(region, size, 0, &before);
    CHECK_EQ(shared_ring_prepare(region, size, 0, 0, region_fd), 1);
    shared_ring_owners_of(region, size, 0, &after);
    CHECK_EQ(after.ring_id, before.ring_id);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, count_messages, &got), 3);
    CHECK_EQ(shared_ring_read_some(&c, count_messages, &got), SHARED_RING_CLOSED);
    shared_ring_detach_consumer(&c);
}

TEST(prepare_keeps_an_empty_closed_stream_until_a_consumer_has_seen_its_end) {
    shared_ring_consumer c;
    fresh_region();
    producer_ran_alone(0, 1);
    CHECK_EQ(shared_ring_prepare(region, size, 0, 0, region_fd), 1);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_wait(&c, 0), SHARED_RING_CLOSED);
    shared_ring_detach_consumer(&c);
}

TEST(prepare_keeps_messages_a_gone_pair_left_unread) {
    shared_ring_consumer c;
    int got = 0;
    fresh_region();
    producer_ran_alone(2, 0);
    CHECK_EQ(shared_ring_prepare(region, size, 0, 0, region_fd), 1);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, count_messages, &got), 2);
    shared_ring_detach_consumer(&c);
}

/* A producer's one-message stream (closed or not), read by a consumer that
   then detaches (after CLOSED, if closed); then prepare must format afresh:
   a new ring id, no producer, no message. */
static void check_prepare_formats_after_a_read_stream(int closed) {
    shared_ring_consumer c;
    shared_ring_owners before, after;
    int got = 0;
    fresh_region();
    producer_ran_alone(1, closed);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, count_messages, &got), 1);
    if (closed) CHECK_EQ(shared_ring_read_some(&c, count_messages, &got), SHARED_RING_CLOSED);
    shared_ring_detach_consumer(&c);
    shared_ring_owners_of(region, size, 0, &before);
    CHECK_EQ(shared_ring_prepare(region, size, 0, 0, region_fd), SHARED_RING_OK);
    shared_ring_owners_of(region, size, 0, &after);
    CHECK(after.ring_id != before.ring_id);
    CHECK_EQ(after.producer.pid, 0);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, ignore, NULL), SHARED_RING_EMPTY); /* a fresh stream */
    shared_ring_detach_consumer(&c);
}

TEST(prepare_formats_afresh_a_closed_stream_whose_end_a_consumer_read) {
    check_prepare_formats_after_a_read_stream(1);
}

TEST(prepare_formats_afresh_a_drained_open_ring_whose_processes_are_all_gone) {
    check_prepare_formats_after_a_read_stream(0);
}

TEST(prepare_leaves_a_ring_with_a_live_producer_alone) {
    shared_ring_owners before, after;
    pid_t live;
    fresh_region();
    live = child_attached_as(1);
    shared_ring_owners_of(region, size, 0, &before);
    CHECK_EQ(shared_ring_prepare(region, size, 0, 0, region_fd), 1);
    shared_ring_owners_of(region, size, 0, &after);
    CHECK_EQ(after.ring_id, before.ring_id);
    CHECK_EQ(after.producer.pid, (uint32_t)live);
    reap(live);
}

TEST(a_handle_whose_region_was_formatted_anew_reports_corruption_in_its_next_wait) {
    shared_ring_consumer c;
    pid_t live;
    fresh_region();
    live = child_attached_as(1); /* a peer in another process: waits look at the region */
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    shared_ring_format(region, size, CAPACITY, 0); /* misuse: under live handles */
    CHECK_EQ(shared_ring_wait(&c, 200000000u), SHARED_RING_ERR_CORRUPT);
    reap(live);
}

/* Two processes that prepare and attach at random moments, over a region
   that the previous round left behind (closed, or half read): every round
   the consumer must get exactly the messages of the producer it ran with. */
static void sleep_random(unsigned *seed) {
    struct timespec d = { 0, (long)(rand_r(seed) % 3000u) * 1000 };
    nanosleep(&d, NULL);
}

TEST(pairs_started_in_any_order_over_a_stale_region_get_exactly_their_stream) {
    enum { ROUNDS = 40, MESSAGES = 2000 };
    int round, bad = 0;
    fresh_region();
    for (round = 0; round < ROUNDS; round++) {
        pid_t prod, cons;
        int sp = -1, sc = -1;
        prod = harness_fork();
        if (prod == 0) {
            unsigned seed = (unsigned)round * 2u + 1u;
            shared_ring_producer p;
            int i, r;
            sleep_random(&seed);
            r = shared_ring_prepare(region, size, CAPACITY, 0, region_fd);
            if (r < 0) _exit(10);
            if (shared_ring_attach_producer_wait(&p, region, size, &opts, 5000000000u) != 0)
                _exit(11);
            for (i = 0; i < MESSAGES; i++) {
                int w = shared_ring_write_bytes(&p, &i, sizeof i, 5000000000u);
                if (w != 0) { /* what a failure looks like, for the log */
                    shared_ring_owners o;
                    shared_ring_owners_of(region, size, region_fd, &o);
                    fprintf(stderr, "  round %d: prepare %d, write %d said %d (%s); consumer %u %d\n",
                            round, r, i, w, shared_ring_why(), o.consumer.pid, o.consumer.alive);
                    _exit(12);
                }
            }
            shared_ring_close(&p);
            _exit(0);
        }
        cons = harness_fork();
        if (cons == 0) {
            unsigned seed = (unsigned)round * 2u + 2u;
            shared_ring_consumer c;
            shared_ring_message m;
            int expect = 0, r, prepared;
            sleep_random(&seed);
            r = prepared = shared_ring_prepare(region, size, CAPACITY, 0, region_fd);
            if (r < 0) _exit(20);
            r = shared_ring_attach_consumer_wait(&c, region, size, &opts, 5000000000u);
            if (r != 0) {
                fprintf(stderr, "  round %d: prepare %d, attach_consumer_wait said %d (%s)\n",
                        round, prepared, r, shared_ring_why());
                _exit(21);
            }
            for (;;) {
                r = shared_ring_wait(&c, 5000000000u);
                if (r == SHARED_RING_CLOSED) break;
                if (r != SHARED_RING_OK) _exit(22);
                while (shared_ring_peek(&c, &m) == SHARED_RING_OK) {
                    int v;
                    memcpy(&v, m.data, sizeof v);
                    if (v != expect++) {
                        fprintf(stderr, "  round %d: prepare %d, message %d read as %d\n", round,
                                prepared, expect - 1, v);
                        _exit(23);
                    }
                }
                shared_ring_release(&c);
            }
            /* Leave half of the runs with the consumer's side still
               claimed by a dead process, the rest detached. */
            if (round % 2) shared_ring_detach_consumer(&c);
            if (expect != MESSAGES)
                fprintf(stderr, "  round %d: prepare %d, CLOSED after %d messages\n", round,
                        prepared, expect);
            _exit(expect == MESSAGES ? 0 : 24);
        }
        waitpid(prod, &sp, 0);
        waitpid(cons, &sc, 0);
        if (sp != 0 || sc != 0) {
            bad++;
            fprintf(stderr, "  round %d: producer exit %d, consumer exit %d\n", round,
                    WEXITSTATUS(sp), WEXITSTATUS(sc));
            fresh_region(); /* unread messages of a bad round would fail every later one */
        }
    }
    CHECK_EQ(bad, 0);
    printf("  %d rounds of prepare + attach in random order over a stale region\n", ROUNDS);
}

/* ---- wait_any across processes ---------------------------------------------- */

#define SET 3
#define SET_MESSAGES 20000

/* SET rings in one shared mapping, formatted. */
static unsigned char *set_region(size_t *each) {
    size_t one = shared_ring_region_size(CAPACITY, 0), i;
    unsigned char *m =
        mmap(NULL, one * SET, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) abort();
    for (i = 0; i < SET; i++)
        if (shared_ring_format(m + i * one, one, CAPACITY, 0) != SHARED_RING_OK) abort();
    *each = one;
    return m;
}

TEST(wait_any_sleeps_on_rings_whose_producers_are_other_processes_and_loses_nothing) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_consumer cons[SET], *set[SET];
    size_t one;
    unsigned char *m = set_region(&one);
    uint32_t next[SET] = { 0 };
    pid_t kids[SET];
    int i, open = SET, bad = 0;
    uint64_t sleeps = 0;
    o.spin_ns = SHARED_RING_OFF; /* sleep at once: every wake-up crosses processes */
    for (i = 0; i < SET; i++) {
        kids[i] = harness_fork();
        if (kids[i] == 0) {
            shared_ring_producer p;
            uint32_t k;
            struct timespec d = { 0, 20000 };
            if (shared_ring_attach_producer(&p, m + (size_t)i * one, one, NULL) != 0) _exit(1);
            for (k = 0; k < SET_MESSAGES; k++) {
                if (shared_ring_write_bytes(&p, &k, sizeof k, SHARED_RING_FOREVER) != 0) _exit(2);
                if (k % 1000 == 0) nanosleep(&d, NULL); /* let the consumer fall asleep */
            }
            shared_ring_close(&p);
            _exit(0);
        }
        CHECK_EQ(shared_ring_attach_consumer(&cons[i], m + (size_t)i * one, one, &o),
                 SHARED_RING_OK);
        set[i] = &cons[i];
    }
    while (open > 0) {
        shared_ring_message msg;
        int at = shared_ring_wait_any(set, SET, 10000000000u), r;
        if (at < 0) {
            bad++;
            break;
        }
        while ((r = shared_ring_peek(set[at], &msg)) == SHARED_RING_OK) {
            uint32_t v;
            memcpy(&v, msg.data, sizeof v);
            if (v != next[at]++) bad++;
        }
        shared_ring_release(set[at]);
        if (r == SHARED_RING_CLOSED) {
            shared_ring_stats st;
            shared_ring_consumer_stats(set[at], &st);
            sleeps += st.sleeps;
            set[at] = NULL;
            open--;
        }
    }
    for (i = 0; i < SET; i++) {
        int status = -1;
        waitpid(kids[i], &status, 0);
        CHECK_EQ(status, 0);
        CHECK_EQ(next[i], SET_MESSAGES);
    }
    CHECK_EQ(bad, 0);
    CHECK(sleeps > 0);
    printf("  wait_any over %d producer processes: %d messages each, %llu sleeps, %d bad\n", SET,
           SET_MESSAGES, (unsigned long long)sleeps, bad);
    munmap(m, one * SET);
}

/* More rings than futex_waitv takes, one producer in another process: no
   doorbell of this process can reach that producer, so the set names none
   (consumer_bell, 396, stays 0) and sleeps in slices, and still wakes. */
#define BIG_SET 130
TEST(wait_any_over_many_rings_with_a_producer_in_another_process_names_no_doorbell) {
    size_t one = shared_ring_region_size(1024, 0);
    unsigned char *m =
        mmap(NULL, one * BIG_SET, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    static shared_ring_producer prods[BIG_SET];
    static shared_ring_consumer cons[BIG_SET];
    shared_ring_consumer *set[BIG_SET];
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    int i, status = -1;
    pid_t kid;
    CHECK(m != MAP_FAILED);
    o.spin_ns = SHARED_RING_OFF;
    for (i = 0; i < BIG_SET; i++) {
        CHECK_EQ(shared_ring_format(m + (size_t)i * one, one, 1024, 0), SHARED_RING_OK);
        if (i < BIG_SET - 1)
            CHECK_EQ(shared_ring_attach_producer(&prods[i], m + (size_t)i * one, one, NULL),
                     SHARED_RING_OK);
    }
    kid = harness_fork();
    if (kid == 0) {
        unsigned char *r = m + (size_t)(BIG_SET - 1) * one;
        struct timespec d = { 0, 1000000 };
        shared_ring_producer p;
        if (shared_ring_attach_producer(&p, r, one, NULL) != SHARED_RING_OK) _exit(1);
        while (__atomic_load_n((uint32_t *)(void *)(r + 384), __ATOMIC_ACQUIRE) != 1u)
            nanosleep(&d, NULL); /* until the consumer sleeps */
        nanosleep(&d, NULL);
        if (__atomic_load_n((uint32_t *)(void *)(r + 396), __ATOMIC_ACQUIRE) != 0u) _exit(3);
        if (shared_ring_write_bytes(&p, "far", 3, 0) != SHARED_RING_OK) _exit(2);
        _exit(0);
    }
    for (i = 0; i < BIG_SET; i++) {
        CHECK_EQ(shared_ring_attach_consumer(&cons[i], m + (size_t)i * one, one, &o),
                 SHARED_RING_OK);
        set[i] = &cons[i];
    }
    CHECK_EQ(shared_ring_wait_any(set, BIG_SET, 10000000000u), BIG_SET - 1);
    waitpid(kid, &status, 0);
    CHECK_EQ(status, 0);
    for (i = 0; i < BIG_SET; i++) {
        shared_ring_detach_consumer(&cons[i]);
        if (i < BIG_SET - 1) shared_ring_detach_producer(&prods[i]);
    }
    munmap(m, one * BIG_SET);
}

TEST(wait_any_reports_the_ring_whose_producer_process_died) {
    shared_ring_consumer cons[SET], *set[SET];
    shared_ring_options o[SET];
    size_t one = shared_ring_region_size(CAPACITY, 0);
    unsigned char *m[SET];
    int fds[SET];
    pid_t kids[SET];
    int i, attached[2];
    char ok;
    if (pipe(attached) != 0) abort();
    for (i = 0; i < SET; i++) {
        m[i] = ring_file(one, &fds[i]); /* a file each: each ring's locks */
        o[i] = shared_ring_default_options();
        o[i].region_fd = fds[i];
    }
    for (i = 0; i < SET; i++) {
        kids[i] = harness_fork();
        if (kids[i] == 0) {
            shared_ring_producer p;
            /* said once attached: a producer killed while still claiming was never a peer */
            ok = shared_ring_attach_producer(&p, m[i], one, &o[i]) == SHARED_RING_OK;
            if (write(attached[1], &ok, 1) != 1 || !ok) _exit(1);
            for (;;) pause();
        }
    }
    for (i = 0; i < SET; i++) {
        CHECK(read(attached[0], &ok, 1) == 1 && ok);
        CHECK_EQ(shared_ring_attach_consumer(&cons[i], m[i], one, &o[i]), SHARED_RING_OK);
        set[i] = &cons[i];
    }
    reap(kids[1]);
    CHECK_EQ(shared_ring_wait_any(set, SET, 5000000000u), 1);
    CHECK_EQ(shared_ring_read_some(set[1], ignore, NULL), SHARED_RING_PEER_GONE);
    /* said: from now on that ring waits for a new producer like the others */
    CHECK_EQ(shared_ring_wait_any(set, SET, 100000000u), SHARED_RING_TIMEOUT);
    reap(kids[0]);
    reap(kids[2]);
    close(attached[0]);
    close(attached[1]);
    for (i = 0; i < SET; i++) {
        shared_ring_detach_consumer(&cons[i]);
        munmap(m[i], one);
        close(fds[i]);
    }
}


/* ---- a live owner is never judged dead on a guess --------------------------- */

/* What a live producer's partners must see: alive (or "cannot tell"), its
   side busy, a consumer's wait running to its timeout (not PEER_GONE). */
static void check_producer_counts_alive(void) {
    shared_ring_producer p;
    shared_ring_consumer c;
    shared_ring_owners o;
    CHECK_EQ(shared_ring_owners_of(region, size, 0, &o), SHARED_RING_OK);
    CHECK(o.producer.alive != 0);
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_ERR_BUSY);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read(&c, ignore, NULL, 120000000), SHARED_RING_TIMEOUT);
    CHECK_EQ(shared_ring_detach_consumer(&c), SHARED_RING_OK);
}

TEST(a_producer_whose_main_thread_exited_while_its_threads_run_counts_alive) {
    pid_t pid;
    struct timespec settle = { 0, 100000000 };
    fresh_region();
    pid = child_attached(1, NULL, 1);
    nanosleep(&settle, NULL); /* the leader is a zombie by now */
    check_producer_counts_alive();
    reap(pid);
}

/* The checker cannot see the owner in /proc: it runs in a chroot without
   one (root only). */
TEST(a_checker_that_cannot_see_proc_judges_no_owner_dead) {
    char dir[] = "/tmp/shared_ring_chroot_XXXXXX";
    pid_t owner, checker;
    int status = -1;
    if (geteuid() != 0 || mkdtemp(dir) == NULL) {
        printf("  skipped: needs root for chroot\n");
        return;
    }
    fresh_region();
    owner = child_attached_as(1);
    checker = harness_fork();
    if (checker == 0) {
        shared_ring_producer p;
        shared_ring_consumer c;
        if (chroot(dir) != 0 || chdir("/") != 0) _exit(3);
        if (shared_ring_attach_producer(&p, region, size, &opts) != SHARED_RING_ERR_BUSY) _exit(4);
        if (shared_ring_attach_consumer(&c, region, size, &opts) != SHARED_RING_OK) _exit(5);
        _exit(shared_ring_read(&c, ignore, NULL, 120000000) == SHARED_RING_TIMEOUT ? 0 : 6);
    }
    CHECK(waitpid(checker, &status, 0) == checker);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    reap(owner);
    rmdir(dir);
}

/* ---- a dead owner is not judged alive -------------------------------------- */

/* ---- PEER_GONE ends when a new peer attaches --------------------------------- */

TEST(a_child_forked_after_attach_may_not_close_or_detach_the_parents_side) {
    shared_ring_producer p;
    shared_ring_owners owners;
    pid_t child;
    int status = -1;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_OK);
    child = harness_fork();
    if (child == 0) {
        shared_ring_consumer c;
        int bad = 0;
        if (shared_ring_close(&p) != SHARED_RING_ERR_HANDLE) bad |= 1;
        if (shared_ring_detach_producer(&p) != SHARED_RING_ERR_HANDLE) bad |= 2;
        /* the child's own consumer handle works; its wait sleeps */
        if (shared_ring_attach_consumer(&c, region, size, &opts) != SHARED_RING_OK) bad |= 4;
        if (shared_ring_wait(&c, 20000000u) != SHARED_RING_TIMEOUT) bad |= 8;
        shared_ring_detach_consumer(&c);
        _exit(bad);
    }
    waitpid(child, &status, 0);
    CHECK_EQ(status, 0);
    shared_ring_owners_of(region, size, 0, &owners);
    CHECK_EQ(owners.producer.pid, (uint32_t)getpid()); /* still the parent's side */
    CHECK_EQ(shared_ring_write_str(&p, "parent", 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
}

/* The parent's handle names a word that is no longer the side's: its
   detach gives back only its own word, never the child's. */
TEST(a_parent_that_detaches_after_its_child_adopted_the_side_leaves_it_to_the_child) {
    shared_ring_producer p;
    shared_ring_owners owners;
    harness_teller adopted;
    pid_t child;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_OK);
    child = harness_fork_telling(&adopted);
    if (child == 0) {
        harness_tell(&adopted, shared_ring_adopt_producer(&p) == SHARED_RING_OK);
        for (;;) pause();
    }
    CHECK(harness_told_ok(&adopted));
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_owners_of(region, size, 0, &owners), SHARED_RING_OK);
    CHECK_EQ(owners.producer.pid, (uint32_t)child);
    reap(child);
}

/* Without a file the parent's new attach holds the very word its old
   handle named: the child's copy of that handle may not adopt it. */
TEST(a_child_may_not_adopt_a_handle_its_parent_detached_and_attached_again) {
    shared_ring_producer p, again;
    shared_ring_options no_file = SHARED_RING_OPTIONS_INIT;
    int go[2], answer[2];
    char c = 0, r = 0;
    pid_t child;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &no_file), SHARED_RING_OK);
    if (pipe(go) != 0 || pipe(answer) != 0) abort();
    child = harness_fork();
    if (child == 0) {
        if (read(go[0], &c, 1) != 1) _exit(2);
        r = (char)shared_ring_adopt_producer(&p);
        if (write(answer[1], &r, 1) != 1) _exit(3);
        for (;;) pause();
    }
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&again, region, size, &no_file), SHARED_RING_OK);
    CHECK(write(go[1], "g", 1) == 1);
    CHECK(read(answer[0], &r, 1) == 1);
    CHECK_EQ(r, SHARED_RING_ERR_BUSY);
    CHECK_EQ(shared_ring_write_str(&again, "still mine", 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&again), SHARED_RING_OK);
    close(go[0]), close(go[1]), close(answer[0]), close(answer[1]);
    reap(child);
}

TEST(a_child_that_adopts_the_handle_keeps_the_side_after_its_parent_exits) {
    enum { MESSAGES = 2000 };
    shared_ring_consumer c;
    pid_t parent;
    int got = 0, r, status = -1;
    fresh_region();
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    parent = harness_fork();
    if (parent == 0) { /* attaches, forks the daemon, exits once it adopted */
        shared_ring_producer p;
        int adopted[2];
        char c;
        if (pipe(adopted) != 0) _exit(5);
        if (shared_ring_attach_producer(&p, region, size, &opts) != SHARED_RING_OK) _exit(1);
        if (harness_fork() == 0) {
            int i;
            if (shared_ring_adopt_producer(&p) != SHARED_RING_OK) _exit(2);
            if (write(adopted[1], "a", 1) != 1) _exit(6);
            usleep(100000); /* its parent is gone by now */
            for (i = 0; i < MESSAGES; i++)
                if (shared_ring_write_bytes(&p, &i, sizeof i, 5000000000u) != SHARED_RING_OK) _exit(3);
            shared_ring_close(&p);
            _exit(shared_ring_detach_producer(&p) == SHARED_RING_OK ? 0 : 4);
        }
        /* Exiting before the child adopted, the peer could judge the side
           by this dead process in between, and say PEER_GONE once. */
        _exit(read(adopted[0], &c, 1) == 1 ? 0 : 7);
    }
    waitpid(parent, &status, 0);
    CHECK_EQ(status, 0);
    do {
        r = shared_ring_read(&c, count_messages, &got, 5000000000u);
    } while (r > 0);
    CHECK_EQ(r, SHARED_RING_CLOSED); /* never PEER_GONE: the side is the daemon's */
    CHECK_EQ(got, MESSAGES);
    shared_ring_detach_consumer(&c);
}

TEST(a_wait_after_a_new_producer_attached_does_not_say_peer_gone) {
    shared_ring_consumer c;
    pid_t first, second;
    fresh_region();
    first = child_attached_as(1);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    reap(first);
    CHECK_EQ(shared_ring_read(&c, ignore, NULL, 2000000000u), SHARED_RING_PEER_GONE);
    second = child_attached_as(1);
    CHECK_EQ(shared_ring_read(&c, ignore, NULL, 20000000), SHARED_RING_TIMEOUT);
    reap(second);
}

/* ---- the peer's death as a descriptor (event loops, no timer) ------------- */

/* A child that attaches as the producer, publishes `n` messages, says so,
   then sleeps until killed. */
static pid_t child_producer_publishing(int n) {
    harness_teller t;
    pid_t pid = harness_fork_telling(&t);
    if (pid == 0) {
        shared_ring_producer p;
        int i, ok = shared_ring_attach_producer(&p, region, size, &opts) == SHARED_RING_OK;
        for (i = 0; i < n && ok; i++) ok = shared_ring_write_bytes(&p, "m", 1, 0) == SHARED_RING_OK;
        harness_tell(&t, ok);
        for (;;) pause();
    }
    if (!harness_told_ok(&t)) abort();
    return pid;
}

/* Sleep in epoll on `fd` alone, as an event loop with no timer would
   (the bound only fails the test); 1 when it became readable. */
static int epoll_readable(int fd, int bound_ms) {
    struct epoll_event ev = { EPOLLIN, { 0 } }, got;
    int ep = epoll_create1(0), n;
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) abort();
    n = epoll_wait(ep, &got, 1, bound_ms);
    close(ep);
    return n == 1;
}

TEST(an_epoll_loop_hears_of_the_producers_death_through_its_peer_fd_without_a_timer) {
    shared_ring_consumer c;
    pid_t child;
    int fd, got = 0;
    double killed_at;
    fresh_region();
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    child = child_producer_publishing(3);
    fd = shared_ring_consumer_peer_fd(&c);
    CHECK(fd >= 0);
    CHECK(!epoll_readable(fd, 0)); /* alive: not readable */
    CHECK_EQ(shared_ring_consumer_peer_fd(&c), fd); /* the same while the peer is */
    CHECK_EQ(shared_ring_read_some(&c, count_messages, &got), 3);
    /* a wait that judged the producer alive: the next judgement by the
       clock is 50 ms away, so only the descriptor can say PEER_GONE sooner */
    CHECK_EQ(shared_ring_wait(&c, 2000000), SHARED_RING_TIMEOUT);
    killed_at = now_ms();
    kill(child, SIGKILL);
    CHECK(epoll_readable(fd, (int)GONE_BOUND_MS));
    CHECK_EQ(shared_ring_read_some(&c, count_messages, &got), SHARED_RING_PEER_GONE);
    last_took_ms = now_ms() - killed_at;
    CHECK(last_took_ms < GONE_BOUND_MS);
    reap(child);
    CHECK_EQ(shared_ring_detach_consumer(&c), SHARED_RING_OK);
    CHECK(fcntl(fd, F_GETFD) < 0); /* detach closed it */
}

TEST(a_producer_in_an_event_loop_hears_of_the_consumers_death_through_its_peer_fd) {
    shared_ring_producer p;
    pid_t child;
    int fd;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_OK);
    child = child_attached_as(0);
    while (shared_ring_write_bytes(&p, "full", 4, 0) == SHARED_RING_OK) {
    }
    fd = shared_ring_producer_peer_fd(&p);
    CHECK(fd >= 0);
    CHECK_EQ(shared_ring_write_bytes(&p, "x", 1, 0), SHARED_RING_FULL); /* alive */
    kill(child, SIGKILL);
    CHECK(epoll_readable(fd, (int)GONE_BOUND_MS));
    CHECK_EQ(shared_ring_write_bytes(&p, "x", 1, 0), SHARED_RING_PEER_GONE);
    reap(child);
}

TEST(peer_fd_is_refused_for_a_peer_in_this_process_or_no_peer) {
    shared_ring_consumer c;
    shared_ring_producer p;
    fresh_region();
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_consumer_peer_fd(&c), SHARED_RING_ERR_STATE); /* no producer yet */
    CHECK(strstr(shared_ring_why(), "no peer") != NULL);
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_consumer_peer_fd(&c), SHARED_RING_ERR_STATE); /* a thread's peer */
    CHECK(strstr(shared_ring_why(), "this process") != NULL);
    CHECK_EQ(shared_ring_producer_peer_fd(&p), SHARED_RING_ERR_STATE);
}

TEST(peer_fd_of_a_producer_already_dead_says_peer_gone) {
    shared_ring_consumer c;
    pid_t child;
    fresh_region();
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    child = child_attached_as(1);
    reap(child);
    CHECK_EQ(shared_ring_consumer_peer_fd(&c), SHARED_RING_PEER_GONE);
}

TEST(a_new_producer_after_a_death_gets_a_new_peer_fd) {
    shared_ring_consumer c;
    pid_t first, second;
    int fd1, fd2, got = 0;
    fresh_region();
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    first = child_producer_publishing(0);
    fd1 = shared_ring_consumer_peer_fd(&c);
    CHECK(fd1 >= 0);
    reap(first);
    CHECK(epoll_readable(fd1, (int)GONE_BOUND_MS));
    CHECK_EQ(shared_ring_read_some(&c, count_messages, &got), SHARED_RING_PEER_GONE);
    second = child_producer_publishing(1);
    fd2 = shared_ring_consumer_peer_fd(&c);
    CHECK(fd2 >= 0);
    CHECK(!epoll_readable(fd2, 0)); /* the new producer lives */
    CHECK_EQ(shared_ring_read_some(&c, count_messages, &got), 1);
    reap(second);
}

static int cmp_ms(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* liveness --kills N: each kill test N times; p50 and max (a measurement,
   for the docs: make test runs each once). */
static int measure_kills(int n) {
    static const char *const what[3] = { "producer killed, consumer waiting", "consumer killed, producer waiting",
                                         "producer killed, consumer in epoll on its peer fd" };
    double ms[3][200];
    int i, side;
    if (n < 1 || n > 200) return 2;
    for (i = 0; i < n; i++) {
        RUN(consumer_waiting_forever_hears_peer_gone_when_the_producer_is_killed);
        ms[0][i] = last_took_ms;
        RUN(producer_blocked_on_a_full_ring_hears_peer_gone_when_the_consumer_is_killed);
        ms[1][i] = last_took_ms;
        RUN(an_epoll_loop_hears_of_the_producers_death_through_its_peer_fd_without_a_timer);
        ms[2][i] = last_took_ms;
    }
    for (side = 0; side < 3; side++) {
        qsort(ms[side], (size_t)n, sizeof ms[side][0], cmp_ms);
        printf("liveness: %s, %d times: PEER_GONE p50 %.2f ms, max %.2f ms\n", what[side], n,
               ms[side][n / 2], ms[side][n - 1]);
    }
    return harness_summary("liveness kills");
}


/* ---- the kernel is the only judge -------------------------------------------- */

/* A word that says its holder locks its byte, whose byte no one holds: a
   holder that is gone, whatever its pid (here one that no process has). */
TEST(a_locked_word_whose_byte_is_free_is_a_gone_holder_and_taken_over) {
    shared_ring_producer p;
    uint64_t owner = 0x1FFFFFF0u | SRNG_OWNER_LOCKED | (uint64_t)12345 << 32;
    fresh_region();
    harness_fake_owner(region, SRNG_OFF_PRODUCER_ID, owner);
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
}

/* The same word without LOCKED, its slot placing it in another pid
   namespace: neither its lock nor its pid can say it died. */
TEST(an_unlocked_word_of_another_pid_namespace_counts_alive) {
    shared_ring_producer p;
    shared_ring_owners o;
    uint64_t owner = 0x1FFFFFF0u | (uint64_t)12345 << 32, ns = 12345;
    fresh_region();
    memcpy(region + SRNG_OFF_PRODUCER_ID + SRNG_ID_SLOT + SRNG_SLOT_NS, &ns, 8);
    memcpy(region + SRNG_OFF_PRODUCER_ID + SRNG_ID_SLOT + SRNG_SLOT_WHO, &owner, 8);
    memcpy(region + SRNG_OFF_PRODUCER_ID, &owner, 8);
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_ERR_BUSY);
    CHECK_EQ(shared_ring_owners_of(region, size, region_fd, &o), SHARED_RING_OK);
    CHECK_EQ(o.producer.alive, -1);
}

/* Placed in our namespace, with a pid no process has: gone. */
TEST(an_unlocked_word_whose_pid_our_namespace_lacks_is_gone) {
    shared_ring_producer p;
    uint64_t owner = 0x1FFFFFF0u | (uint64_t)12345 << 32;
    fresh_region();
    harness_fake_owner(region, SRNG_OFF_PRODUCER_ID, owner);
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
}

/* A producer that attached without the file, killed: no lock tells, but
   its pid in our namespace does (the kernel's pidfd), so the consumer
   hears PEER_GONE and a new producer takes the side over. */
TEST(a_producer_killed_that_attached_without_the_file_is_judged_by_its_pid) {
    shared_ring_producer p;
    shared_ring_consumer c;
    harness_teller t;
    pid_t kid;
    fresh_region();
    kid = harness_fork_telling(&t);
    if (kid == 0) {
        harness_tell(&t, shared_ring_attach_producer(&p, region, size, NULL) == SHARED_RING_OK);
        for (;;) pause();
    }
    CHECK(harness_told_ok(&t));
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_ERR_BUSY);
    kill(kid, SIGKILL); /* not reaped yet: a zombie is gone too */
    CHECK_EQ(shared_ring_read(&c, ignore, NULL, 2000000000u), SHARED_RING_PEER_GONE);
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &opts), SHARED_RING_OK);
    waitpid(kid, NULL, 0);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_consumer(&c), SHARED_RING_OK);
}

int main(int argc, char **argv) {
    alarm(300);
    if (argc > 2 && strcmp(argv[1], "--kills") == 0) return measure_kills(atoi(argv[2]));
    RUN(a_locked_word_whose_byte_is_free_is_a_gone_holder_and_taken_over);
    RUN(an_unlocked_word_of_another_pid_namespace_counts_alive);
    RUN(an_unlocked_word_whose_pid_our_namespace_lacks_is_gone);
    RUN(a_producer_killed_that_attached_without_the_file_is_judged_by_its_pid);
    RUN(consumer_waiting_forever_hears_peer_gone_when_the_producer_is_killed);
    RUN(producer_blocked_on_a_full_ring_hears_peer_gone_when_the_consumer_is_killed);
    RUN(messages_published_before_the_producer_died_are_read_before_peer_gone);
    RUN(a_closed_stream_says_closed_not_peer_gone_after_the_producer_exits);
    RUN(second_producer_while_the_first_process_lives_gets_busy);
    RUN(second_consumer_while_the_first_process_lives_gets_busy);
    RUN(take_back_does_not_take_a_side_another_live_process_holds);
    RUN(a_dead_producers_side_is_taken_over);
    RUN(a_dead_consumers_side_is_taken_over);
    RUN(a_consumer_killed_while_attaching_is_no_peer_and_its_claim_is_taken_over);
    RUN(detach_lets_another_process_attach_as_that_side);
    RUN(prepare_keeps_a_closed_stream_until_a_consumer_has_read_it);
    RUN(prepare_keeps_an_empty_closed_stream_until_a_consumer_has_seen_its_end);
    RUN(prepare_keeps_messages_a_gone_pair_left_unread);
    RUN(prepare_formats_afresh_a_closed_stream_whose_end_a_consumer_read);
    RUN(prepare_formats_afresh_a_drained_open_ring_whose_processes_are_all_gone);
    RUN(prepare_leaves_a_ring_with_a_live_producer_alone);
    RUN(a_handle_whose_region_was_formatted_anew_reports_corruption_in_its_next_wait);
    RUN(pairs_started_in_any_order_over_a_stale_region_get_exactly_their_stream);
    RUN(wait_any_sleeps_on_rings_whose_producers_are_other_processes_and_loses_nothing);
    RUN(wait_any_reports_the_ring_whose_producer_process_died);
    RUN(wait_any_over_many_rings_with_a_producer_in_another_process_names_no_doorbell);
    RUN(a_producer_whose_main_thread_exited_while_its_threads_run_counts_alive);
    RUN(a_checker_that_cannot_see_proc_judges_no_owner_dead);
    RUN(a_wait_after_a_new_producer_attached_does_not_say_peer_gone);
    RUN(a_child_forked_after_attach_may_not_close_or_detach_the_parents_side);
    RUN(a_parent_that_detaches_after_its_child_adopted_the_side_leaves_it_to_the_child);
    RUN(a_child_may_not_adopt_a_handle_its_parent_detached_and_attached_again);
    RUN(a_child_that_adopts_the_handle_keeps_the_side_after_its_parent_exits);
    RUN(an_epoll_loop_hears_of_the_producers_death_through_its_peer_fd_without_a_timer);
    RUN(a_producer_in_an_event_loop_hears_of_the_consumers_death_through_its_peer_fd);
    RUN(peer_fd_is_refused_for_a_peer_in_this_process_or_no_peer);
    RUN(peer_fd_of_a_producer_already_dead_says_peer_gone);
    RUN(a_new_producer_after_a_death_gets_a_new_peer_fd);
    return harness_summary("liveness");
}
