/* Where two features meet: one deterministic test per rule that an outside
   review found broken at such a seam (the test of each of the eight
   defects failed on the code before its fix; the others guard the same
   rules where they already held). A race is forced, not sampled: this build gives the header's
   scheduling points (SRNG_SCHED_POINT, at each load and store of a control
   word) a hook that runs one step of "the other side" at a chosen point,
   in this thread or in a forked process. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void seams_point(const char *what);
#define SRNG_SCHED_POINT(what) seams_point(what)
#define SHARED_RING_SHM
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

/* ---- the hook: at the `skip`+1-th pass through the point named `at`, run
   `step` once (disarmed first: what it calls passes points too). */
static const char *hook_at;
static int hook_skip;
static void (*hook_step)(void);

static void seams_point(const char *what) {
    void (*step)(void) = hook_step;
    if (step == NULL || strcmp(what, hook_at) != 0 || hook_skip-- > 0) return;
    hook_step = NULL;
    step();
}

static void arm_hook(const char *at, int skip, void (*step)(void)) {
    hook_at = at;
    hook_skip = skip;
    hook_step = step;
}

#define CAPACITY 4096u

static unsigned char *region;
static size_t size;
static shared_ring_producer prod;
static shared_ring_consumer cons;

/* A zeroed, formatted region shared with any child forked later. */
static void fresh_region(void) {
    if (region != NULL) munmap(region, size);
    size = shared_ring_region_size(CAPACITY, 0);
    region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED || shared_ring_format(region, size, CAPACITY, 0) != SHARED_RING_OK)
        abort();
}

/* A fresh region with a producer and a consumer of the default options attached. */
static void fresh_pair(void) {
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, NULL), SHARED_RING_OK);
}

static int count_message(void *user, const void *data, size_t len) {
    (void)data;
    (void)len;
    ++*(int *)user;
    return 0;
}

/* Hooks that make no system call: arm needs both sides attached with a
   pair (the loop's own descriptor would do the sleeping). */
static void no_wait(void *user, void *addr, uint32_t expected, uint64_t timeout_ns) {
    (void)user, (void)addr, (void)expected, (void)timeout_ns;
}
static void no_wake(void *user, void *addr) { (void)user, (void)addr; }
static shared_ring_options hooked(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.wait = no_wait;
    o.wake = no_wake;
    return o;
}

static uint32_t consumer_word(void) {
    return __atomic_load_n((uint32_t *)(region + SRNG_OFF_CONSUMER_SLEEPING), __ATOMIC_RELAXED);
}

/* 1. A ring holds a stream while a record is unreleased at read_pos or its
   close is unseen, whatever a peek saw: close_seen is set from peek_pos,
   which runs ahead of read_pos. */
TEST(prepare_keeps_a_message_peeked_past_the_close_and_never_released) {
    shared_ring_message m;
    int got = 0;
    fresh_pair();
    CHECK_EQ(shared_ring_write_str(&prod, "m", 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_close(&prod), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
    CHECK_EQ(shared_ring_peek(&cons, &m), SHARED_RING_OK);
    CHECK_EQ(shared_ring_peek(&cons, &m), SHARED_RING_CLOSED); /* close_seen, from peek_pos */
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK); /* as if it died: no release */
    CHECK_EQ(shared_ring_prepare(region, size, CAPACITY, 0, 0), 1);  /* kept */
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), 1);
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), SHARED_RING_CLOSED);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    /* read to its end, and the close seen: now prepare formats */
    CHECK_EQ(shared_ring_prepare(region, size, CAPACITY, 0, 0), SHARED_RING_OK);
}

/* 2. Every call that reports a departure looks at the records and the
   closed flag after it learned of it: here the producer publishes, closes
   and detaches between arm's look at the records and its look at the
   producer's owner word. */
static void publish_close_and_detach(void) {
    if (shared_ring_write_str(&prod, "m", 0) != SHARED_RING_OK || shared_ring_close(&prod) != 0 ||
        shared_ring_detach_producer(&prod) != SHARED_RING_OK)
        abort();
}

TEST(arm_reads_what_a_producer_left_before_it_says_peer_gone) {
    shared_ring_options o = hooked();
    int got = 0;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    /* after arm's last look at the records (a second one, past write_pos
       and closed), before its look at the producer's owner word */
    arm_hook("load record", 1, publish_close_and_detach);
    CHECK_EQ(shared_ring_arm(&cons), 1);                  /* ready: a message, not PEER_GONE */
    CHECK(hook_step == NULL);                             /* the step ran inside arm */
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), 1);
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), SHARED_RING_CLOSED);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
}

/* The same rule in a blocking wait: the producer leaves after the wait's
   first look (at the closed flag), before it looks at the owner word. */
TEST(a_wait_reads_what_a_producer_left_before_it_says_peer_gone) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    int got = 0;
    o.spin_ns = SHARED_RING_OFF;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    arm_hook("load closed", 0, publish_close_and_detach);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 100000000u), 1);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 100000000u), SHARED_RING_CLOSED);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
}

/* PEER_GONE is said once; after that arm arms for the next producer, whose
   attach (with a wake hook) wakes the loop: no timer is needed to wait for
   a replacement. */
static int wake_calls;
static void counting_wake(void *user, void *addr) {
    (void)user, (void)addr;
    wake_calls++;
}

TEST(arm_after_peer_gone_arms_for_the_next_producer_whose_attach_wakes_the_loop) {
    shared_ring_options o = hooked();
    int got = 0;
    o.wake = counting_wake;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), SHARED_RING_PEER_GONE);
    CHECK_EQ(shared_ring_arm(&cons), SHARED_RING_OK); /* armed for the next one */
    wake_calls = 0;
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(wake_calls, 1); /* its attach signalled the loop */
    CHECK_EQ(shared_ring_write_str(&prod, "m", 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), 1);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
}

/* A departed side's wake-ups leave with it: its detach takes its wait_mode
   word to NONE, so a sleeper whose next producer's wake-ups may not reach
   it (one without hooks, say) sleeps at most 50 ms at a time, never
   trusting the departed one's hooks for a whole timeout (with recheck_ns
   off, for ever); nor in 1 ms slices, though that producer had chosen to
   publish to it without a fence. */
static uint64_t longest_sleep;
static void longest_wait(void *user, void *addr, uint32_t expected, uint64_t timeout_ns) {
    struct timespec d;
    (void)user, (void)addr, (void)expected;
    if (timeout_ns > longest_sleep) longest_sleep = timeout_ns;
    d.tv_sec = 0;
    d.tv_nsec = (long)(timeout_ns < 10000000u ? timeout_ns : 10000000u);
    nanosleep(&d, NULL);
}

TEST(a_sleeper_never_trusts_the_wake_ups_of_a_producer_that_left) {
    shared_ring_options o = hooked();
    int got = 0;
    fresh_region();
    o.spin_ns = SHARED_RING_OFF;
    o.recheck_ns = SHARED_RING_OFF;
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, &o), SHARED_RING_OK);
    o.wait = longest_wait;
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&prod, "m", 0), SHARED_RING_OK); /* chooses: no fence */
    CHECK_EQ(*(uint64_t *)(void *)(region + SRNG_OFF_PRODUCER_FENCELESS_FOR), cons.s.attach_id);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 0), 1);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 0), SHARED_RING_PEER_GONE);
    longest_sleep = 0;
    /* it waits for a new producer up to the timeout, then says so again */
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 200000000u), SHARED_RING_PEER_GONE);
    CHECK_EQ(longest_sleep, 50000000u);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
}

/* A detach takes back its own wait_mode word only: a take-back that
   finishes between its last look at the side and its move leaves the new
   handle's word (same mode, another attach id) as it stored it. */
static shared_ring_producer successor;
static void take_the_side_back(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.flags = SHARED_RING_TAKE_BACK;
    if (shared_ring_attach_producer(&successor, region, size, &o) != SHARED_RING_OK) abort();
}

TEST(a_detach_raced_by_a_take_back_leaves_the_successors_wait_mode) {
    uint32_t held;
    int got = 0;
    fresh_pair();
    arm_hook("detach: mode", 0, take_the_side_back);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
    CHECK(hook_step == NULL); /* the take-back ran inside the detach */
    held = *(uint32_t *)(void *)(region + SRNG_OFF_PRODUCER_WAIT_MODE);
    CHECK_EQ(held, srng_held_mode(&successor.s));
    CHECK(held != 0u);
    /* The old handle's owner CAS freed the successor's equal word (an ABA the owner word alone
       cannot close); the successor's own detach is still heard, by its wait_mode word. */
    (void)shared_ring_read_some(&cons, count_message, &got);
    CHECK_EQ(shared_ring_detach_producer(&successor), SHARED_RING_OK);
    CHECK_EQ(*(uint32_t *)(void *)(region + SRNG_OFF_PRODUCER_WAIT_MODE), 0);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 300000000u), SHARED_RING_PEER_GONE);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
}

/* A producer that comes and goes between a wait's last look at the
   records and its sleep is heard before the sleep (its attach id new, its
   wait_mode word NONE): PEER_GONE without a sleep (one the detach's swap
   of the sleeping word would end at once). */
static void come_and_go(void) {
    if (shared_ring_attach_producer(&prod, region, size, NULL) != SHARED_RING_OK ||
        shared_ring_detach_producer(&prod) != SHARED_RING_OK)
        abort();
}

/* The consumer's wait (1 s), with `step` run at the first pass through `at`: 1 if it said
   PEER_GONE, the step ran, and it never slept. */
static int waits_gone_without_a_sleep(const char *at, void (*step)(void)) {
    shared_ring_stats before = { 0 }, after = { 0 };
    int r;
    (void)shared_ring_consumer_stats(&cons, &before);
    arm_hook(at, 0, step);
    r = shared_ring_wait(&cons, 1000000000u);
    (void)shared_ring_consumer_stats(&cons, &after);
    return r == SHARED_RING_PEER_GONE && hook_step == NULL && after.sleeps == before.sleeps;
}

TEST(a_producer_that_comes_and_goes_as_a_wait_goes_to_sleep_is_heard_before_the_sleep) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.spin_ns = SHARED_RING_OFF;
    fresh_region();
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    CHECK(waits_gone_without_a_sleep("sleep: last look", come_and_go));
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
}

/* A producer that detaches after wait_any's look at the producers, before
   the set announces itself asleep, finds no sleeper to wake: the set's
   last look, after its announcement, hears it (its word NONE) and says so
   without sleeping. Likewise arm: it says 1 (look again), not "armed". */
static unsigned char *region2;
static shared_ring_producer prod2;
static shared_ring_consumer cons2;
static void detach_the_first_producer(void) {
    if (shared_ring_detach_producer(&prod) != SHARED_RING_OK) abort();
}

TEST(wait_any_hears_a_producer_that_left_before_the_set_announced_its_sleep) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_consumer *set[2] = { &cons, &cons2 };
    shared_ring_stats st = { 0 };
    o.spin_ns = SHARED_RING_OFF;
    fresh_region();
    if (region2 == NULL) {
        region2 = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (region2 == MAP_FAILED) abort();
    }
    CHECK_EQ(shared_ring_format(region2, size, CAPACITY, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&prod2, region2, size, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons2, region2, size, &o), SHARED_RING_OK);
    arm_hook("wait_any: watched", 0, detach_the_first_producer);
    CHECK_EQ(shared_ring_wait_any(set, 2, 300000000u), 0);
    CHECK(hook_step == NULL);
    CHECK_EQ(shared_ring_consumer_stats(&cons, &st), SHARED_RING_OK);
    CHECK_EQ(st.sleeps, 0);
    CHECK_EQ(shared_ring_wait(&cons, 0), SHARED_RING_PEER_GONE);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_consumer(&cons2), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod2), SHARED_RING_OK);
}

TEST(arm_hears_a_producer_that_left_before_it_announced_the_sleep) {
    shared_ring_options o = hooked();
    int got = 0;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    arm_hook("arm: watched", 0, detach_the_first_producer);
    CHECK_EQ(shared_ring_arm(&cons), 1); /* look again: not armed */
    CHECK(hook_step == NULL);
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), SHARED_RING_PEER_GONE);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
}

/* A departure the peer's side words tell is not taken back by the liveness
   judgement of the same look, which finds the peer's process alive (it
   only detached): the wait says PEER_GONE at once, without a sleep. The
   producer is a child; it detaches between the wait's load of its owner
   word (still ATTACHED) and the load of its wait_mode word (NONE). */
static int go_pipe[2], done_pipe[2];
static void the_child_detaches(void) {
    char c = 1;
    if (write(go_pipe[1], &c, 1) != 1 || read(done_pipe[0], &c, 1) != 1) abort();
}

TEST(a_departure_the_side_words_tell_is_not_taken_back_by_a_liveness_judgement) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    pid_t pid;
    char c = 1;
    o.spin_ns = SHARED_RING_OFF;
    fresh_region();
    if (pipe(go_pipe) != 0 || pipe(done_pipe) != 0) abort();
    pid = fork();
    if (pid == 0) {
        if (shared_ring_attach_producer(&prod, region, size, NULL) != SHARED_RING_OK) _exit(1);
        if (write(done_pipe[1], &c, 1) != 1 || read(go_pipe[0], &c, 1) != 1) _exit(2);
        if (shared_ring_detach_producer(&prod) != SHARED_RING_OK) _exit(3);
        if (write(done_pipe[1], &c, 1) != 1) _exit(4);
        for (;;) pause(); /* alive until killed */
    }
    CHECK(read(done_pipe[0], &c, 1) == 1); /* attached */
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    CHECK(waits_gone_without_a_sleep("load owner", the_child_detaches));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    close(go_pipe[0]), close(go_pipe[1]), close(done_pipe[0]), close(done_pipe[1]);
}

/* A peer in the middle of its attach (its claim marked the attach id, its
   wait_mode word not HELD yet) is no departure: a consumer that looks then
   says EMPTY, not PEER_GONE for a producer it never saw; and for a
   producer whose consumer left (said once) it is no new departure: its
   full write still says PEER_GONE (no consumer yet), but as the old news,
   which a wait would not say again before its timeout. */
static int seen_mid_attach;
static void consumer_looks(void) {
    int got = 0;
    seen_mid_attach = shared_ring_read_some(&cons, count_message, &got);
}
static uint32_t told_before_telling;
static void producer_looks(void) {
    (void)srng_peer_left(&prod.s); /* the look a full write makes before it tells */
    told_before_telling = prod.s.gone_told;
    seen_mid_attach = shared_ring_write_str(&prod, "x", 0);
}

TEST(a_peer_in_the_middle_of_its_attach_is_no_departure) {
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, NULL), SHARED_RING_OK);
    arm_hook("load ring id", 0, consumer_looks);
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, NULL), SHARED_RING_OK);
    CHECK(hook_step == NULL);
    CHECK_EQ(seen_mid_attach, SHARED_RING_EMPTY);
    /* the producer's side: its consumer leaves (said once), a new one attaches */
    while (shared_ring_write_str(&prod, "fill", 0) == SHARED_RING_OK) continue;
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&prod, "x", 0), SHARED_RING_PEER_GONE);
    arm_hook("load ring id", 0, producer_looks);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, NULL), SHARED_RING_OK);
    CHECK(hook_step == NULL);
    CHECK_EQ(seen_mid_attach, SHARED_RING_PEER_GONE);
    CHECK_EQ(told_before_telling, 1); /* told already: the look found no news */
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
}

/* The producer's side of "came and went": a consumer that attaches and
   detaches between two looks of a producer blocked on a full ring is heard
   (PEER_GONE at once, not the timeout). */
static void a_consumer_comes_and_goes(void) {
    shared_ring_consumer other;
    if (shared_ring_attach_consumer(&other, region, size, NULL) != SHARED_RING_OK ||
        shared_ring_detach_consumer(&other) != SHARED_RING_OK)
        abort();
}

TEST(a_blocked_producer_hears_a_consumer_that_came_and_went) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.spin_ns = SHARED_RING_OFF;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, &o), SHARED_RING_OK);
    while (shared_ring_write_str(&prod, "fill", 0) == SHARED_RING_OK) continue;
    shared_ring_stats st = { 0 };
    arm_hook("sleep: last look", 0, a_consumer_comes_and_goes);
    CHECK_EQ(shared_ring_write_str(&prod, "x", 1000000000u), SHARED_RING_PEER_GONE);
    CHECK(hook_step == NULL);
    CHECK_EQ(shared_ring_producer_stats(&prod, &st), SHARED_RING_OK);
    CHECK_EQ(st.sleeps, 0); /* at once, before any sleep */
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
}

/* A claim marks the side's attach id with the id it replaces: an attach
   that fails after its claim hides no departure. Here a producer comes,
   writes and goes between two looks of the consumer, then another's attach
   fails after its claim (its region_fd is another file). */
TEST(an_attach_that_fails_after_its_claim_hides_no_departure) {
    shared_ring_options wrong = SHARED_RING_OPTIONS_INIT;
    int got = 0;
    fresh_region();
    wrong.region_fd = memfd_create("not-the-region", 0);
    CHECK(wrong.region_fd >= 0 && ftruncate(wrong.region_fd, (off_t)size) == 0);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&prod, "m", 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
    CHECK(shared_ring_attach_producer(&prod, region, size, &wrong) < 0);
    CHECK(*(uint64_t *)(void *)(region + SRNG_OFF_PRODUCER_ID + SRNG_ID_ATTACH) != 0);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 1000000000u), 1);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 1000000000u), SHARED_RING_PEER_GONE);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    close(wrong.region_fd);
}

/* A side whose attach id says a claim runs holds no peer yet: a producer
   that attaches (and chooses) then fences for nobody (fenceless_for 0). */
static void a_producer_attaches(void) {
    if (shared_ring_attach_producer(&prod, region, size, NULL) != SHARED_RING_OK) abort();
}

TEST(a_producer_chooses_no_fenceless_peer_while_a_consumer_claims) {
    fresh_region();
    arm_hook("load ring id", 0, a_producer_attaches);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, NULL), SHARED_RING_OK);
    CHECK(hook_step == NULL);
    CHECK_EQ(*(uint64_t *)(void *)(region + SRNG_OFF_PRODUCER_FENCELESS_FOR), 0);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
}

/* A parent that detaches its copy of a handle while its child adopts it
   (between the child's move of the owner word and its announce) leaves
   the side's wait_mode word alone: the consumer, looking then, sees no
   departure of a producer that goes on in the child. */
static int adopt_go[2], adopt_done[2];
static void let_the_parent_detach(void) {
    char c = 1;
    if (write(adopt_go[1], &c, 1) != 1 || read(adopt_done[0], &c, 1) != 1) _exit(5);
}

TEST(a_parent_that_detaches_while_its_child_adopts_is_no_departure) {
    pid_t pid;
    char c = 1;
    int got = 0;
    fresh_pair();
    if (pipe(adopt_go) != 0 || pipe(adopt_done) != 0) abort();
    pid = fork();
    if (pid == 0) {
        arm_hook("move owner", 0, let_the_parent_detach);
        if (shared_ring_adopt_producer(&prod) != SHARED_RING_OK) _exit(1);
        if (write(adopt_go[1], &c, 1) != 1) _exit(2); /* adopted */
        for (;;) pause();
    }
    CHECK(read(adopt_go[0], &c, 1) == 1); /* the child moved the owner word */
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK); /* only dropped */
    CHECK(*(uint32_t *)(void *)(region + SRNG_OFF_PRODUCER_WAIT_MODE) != 0u);
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), SHARED_RING_EMPTY);
    CHECK(write(adopt_done[1], &c, 1) == 1);
    CHECK(read(adopt_go[0], &c, 1) == 1); /* adopted */
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), SHARED_RING_EMPTY);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    close(adopt_go[0]), close(adopt_go[1]), close(adopt_done[0]), close(adopt_done[1]);
}

/* A peer that keeps changing its side words (hostile, or attaching and
   detaching without end) never keeps a timed wait past its timeout: each
   last look that finds news counts against it. */
static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static uint64_t flip_until;
static const char *flip_at;
static void flip_the_producer_id(void) {
    uint64_t *id = (uint64_t *)(void *)(region + SRNG_OFF_PRODUCER_ID + SRNG_ID_ATTACH);
    __atomic_store_n(id, *id + 1u, __ATOMIC_RELEASE);
    if (now_ns() < flip_until) arm_hook(flip_at, 0, flip_the_producer_id);
}
static int flipped_wait_took_under_a_second(int any) {
    shared_ring_consumer *set[1] = { &cons };
    uint64_t start = now_ns();
    int r;
    flip_until = start + 3000000000u; /* 3 s: a wait that ignores its timeout runs that long */
    flip_at = any ? "wait_any: watched" : "sleep: last look";
    arm_hook(flip_at, 0, flip_the_producer_id);
    r = any ? shared_ring_wait_any(set, 1, 10000000u) : shared_ring_wait(&cons, 10000000u);
    hook_step = NULL;
    /* margin: 10 ms asked, 1 s allowed (100x), 3 s if the timeout is ignored */
    return r == SHARED_RING_TIMEOUT && now_ns() - start < 1000000000u;
}

TEST(side_words_that_never_stop_changing_keep_no_wait_past_its_timeout) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.spin_ns = SHARED_RING_OFF;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    CHECK(flipped_wait_took_under_a_second(0));
    CHECK(flipped_wait_took_under_a_second(1));
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
}

/* 3. fenceless_for names an attach id: a side whose id differs is a new
   peer to the side that chose it. A producer that chose to publish without
   a fence to a consumer that only naps keeps that choice until it sees the
   next consumer's word non-zero; that consumer's arm, not promised a
   wake-up yet, leaves its "look at me" in the word, so that the producer's
   next publish chooses again and the arm after it is promised. */
TEST(arm_over_a_replaced_consumer_is_promised_after_the_producers_next_publish) {
    shared_ring_options o = hooked(), naps = SHARED_RING_OPTIONS_INIT;
    int got = 0;
    naps.flags = SHARED_RING_POLL_ONLY;
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &naps), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&prod, "a", 0), SHARED_RING_OK); /* chooses: no fence */
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), 1);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_arm(&cons), 1);               /* not promised: look again */
    CHECK_EQ(consumer_word(), SRNG_LOOK_AT_ME);        /* still asks the producer */
    CHECK_EQ(shared_ring_write_str(&prod, "b", 0), SHARED_RING_OK); /* chooses again */
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), 1);
    CHECK_EQ(shared_ring_arm(&cons), 0); /* armed */
    CHECK_EQ(consumer_word(), 1u);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
}

/* 4. The peer fd follows the peer's owner word: a loop asks for it before
   each sleep, and once the process it watched no longer holds the side (a
   child adopted it), or a call said PEER_GONE of it, the handle closes it
   there (after opening the adopter's), so the loop is not woken for good
   by a descriptor that has served. */
static int pipe_to_test[2], pipe_to_producer[2];

static void tell(int fd) {
    if (write(fd, "x", 1) != 1) abort();
}
static void hear(int fd) {
    char c;
    if (read(fd, &c, 1) != 1) abort();
}

static void producer_that_hands_over(void) {
    int adopted[2];
    if (pipe(adopted) != 0 ||
        shared_ring_attach_producer(&prod, region, size, NULL) != SHARED_RING_OK ||
        shared_ring_write_str(&prod, "m", 0) != SHARED_RING_OK)
        _exit(1);
    tell(pipe_to_test[1]);    /* attached: the consumer asks for our fd */
    hear(pipe_to_producer[0]);
    if (harness_fork() == 0) { /* the child takes the side over */
        if (shared_ring_adopt_producer(&prod) != SHARED_RING_OK) _exit(1);
        tell(adopted[1]);
        hear(pipe_to_producer[0]); /* lives until the test is done with it */
        _exit(0);
    }
    hear(adopted[0]);
    _exit(0); /* the attaching process exits, the adopter lives on */
}

TEST(the_peer_fd_of_an_adopted_producer_is_replaced_not_left_readable) {
#ifdef SRNG_HAVE_PEER_FD
    struct epoll_event ev = { .events = EPOLLIN }, out;
    pid_t first;
    int ep = epoll_create1(0), fd, old_fd, got = 0, status = -1;
    fresh_region();
    if (pipe(pipe_to_test) != 0 || pipe(pipe_to_producer) != 0 || ep < 0) abort();
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, NULL), SHARED_RING_OK);
    first = harness_fork();
    if (first == 0) producer_that_hands_over();
    hear(pipe_to_test[0]);
    fd = shared_ring_consumer_peer_fd(&cons);
    CHECK(fd >= 0);
    ev.data.fd = fd;
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
    tell(pipe_to_producer[1]);
    waitpid(first, &status, 0); /* the attacher is gone, its child holds the side */
    CHECK_EQ(status, 0);
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), 1);
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), SHARED_RING_EMPTY); /* not gone */
    old_fd = fd;
    fd = shared_ring_consumer_peer_fd(&cons); /* before the sleep: the adopter's */
    CHECK(fd >= 0 && fd != old_fd);
    CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0); /* the stale descriptor is out of the loop */
    ev.data.fd = fd;
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0);
    CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
    CHECK_EQ(shared_ring_consumer_peer_fd(&cons), fd); /* the same while the adopter lives */
    tell(pipe_to_producer[1]); /* the adopter exits without detaching: a death */
    CHECK_EQ(epoll_wait(ep, &out, 1, 5000), 1);
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), SHARED_RING_PEER_GONE);
    /* a loop that goes on for the next producer asks again: the served
       descriptor is closed, so its sleep is not cut short for good */
    CHECK_EQ(shared_ring_consumer_peer_fd(&cons), SHARED_RING_PEER_GONE);
    CHECK_EQ(epoll_wait(ep, &out, 1, 0), 0);
    while (wait(NULL) > 0) continue;
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    close(ep);
#else
    printf("  SKIP: no process descriptors here\n");
#endif
}

/* 5. An aligned claim whose record and largest filler fit in half the ring
   fits at every write position of an empty ring; a longer one is refused
   (ERR_TOO_BIG) the same way at every position, never FULL for ever. */
static void claim_at_every_position(size_t align) {
    const size_t longest = CAPACITY / 2u - align, max = shared_ring_producer_max_message(&prod);
    size_t off;
    int got;
    for (off = 0; off < CAPACITY; off += 8) {
        void *at;
        int r = shared_ring_claim_aligned(&prod, longest, align, &at, 0);
        CHECK_EQ(r, SHARED_RING_OK);
        if (r != SHARED_RING_OK) return; /* one report, not a lap of them */
        CHECK_EQ((uintptr_t)at % align, 0);
        CHECK_EQ(shared_ring_abort(&prod), SHARED_RING_OK);
        if (longest < max)
            CHECK_EQ(shared_ring_claim_aligned(&prod, max, align, &at, 0), SHARED_RING_ERR_TOO_BIG);
        CHECK_EQ(shared_ring_write_bytes(&prod, "", 0, 0), SHARED_RING_OK); /* 8 bytes on */
        got = 0;
        CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), 1);
    }
}

TEST(an_aligned_claim_that_fits_half_the_ring_fits_at_every_position_of_an_empty_ring) {
    fresh_pair();
    claim_at_every_position(16);
    claim_at_every_position(32);
    claim_at_every_position(64);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
}

/* 6. Two openers that find one new object unsized and size it differently:
   not both told OK (one gets ERR_SIZE). The other opener runs, in a child,
   between the creator's shm_open and its sizing. */
static char shm_name[64];
static int other_opener_status = -1;

static void open_small_in_a_child(void) {
    pid_t child = harness_fork();
    if (child == 0) {
        shared_ring_shm shm;
        int r = shared_ring_shm_open(&shm, shm_name, 65536u, 0);
        _exit(r == SHARED_RING_OK ? 0 : r == SHARED_RING_ERR_SIZE ? 1 : 2);
    }
    waitpid(child, &other_opener_status, 0);
}

TEST(two_openers_sizing_one_new_object_differently_are_not_both_told_ok) {
    shared_ring_shm shm;
    int r;
    snprintf(shm_name, sizeof shm_name, "/shared_ring_seams_%d", (int)getpid());
    shared_ring_shm_unlink(shm_name);
    arm_hook("shm: created", 0, open_small_in_a_child);
    r = shared_ring_shm_open(&shm, shm_name, 131072u, 0);
    CHECK(hook_step == NULL);
    CHECK(WIFEXITED(other_opener_status));
    CHECK(WEXITSTATUS(other_opener_status) != 2);
    CHECK(r == SHARED_RING_OK || r == SHARED_RING_ERR_SIZE);
    CHECK((r == SHARED_RING_OK) + (WEXITSTATUS(other_opener_status) == 0) == 1);
    if (r == SHARED_RING_OK) shared_ring_shm_close(&shm);
    shared_ring_shm_unlink(shm_name);
}

/* 7. A read that waited never answers EMPTY: its wait saw a record; if the
   record is gone when it is read (the region written under the reader),
   that is corruption. */
static void rewrite_the_header(void) {
    __atomic_store_n((uint64_t *)(region + SHARED_RING_HEADER_SIZE), 0u, __ATOMIC_RELAXED);
}

TEST(a_read_whose_record_vanishes_after_its_wait_says_corrupt_not_empty) {
    int got = 0;
    fresh_pair();
    CHECK_EQ(shared_ring_write_str(&prod, "m", 0), SHARED_RING_OK);
    arm_hook("load record", 0, rewrite_the_header); /* right after the wait's look */
    /* the function, not the inline path: with the message there that one does not wait */
    CHECK_EQ((shared_ring_read)(&cons, count_message, &got, 1000000000u), SHARED_RING_ERR_CORRUPT);
    CHECK_EQ(got, 0);
    CHECK(hook_step == NULL);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
}

/* 8. A format under a live handle is ERR_CORRUPT at its next wait, before
   any record: one of the old ring may lie at the handle's position. */
TEST(a_format_under_a_handle_with_an_unread_record_is_corrupt_at_its_next_wait) {
    int got = 0;
    fresh_pair();
    CHECK_EQ(shared_ring_write_str(&prod, "a", 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &got), 1);
    CHECK_EQ(shared_ring_write_str(&prod, "b", 0), SHARED_RING_OK); /* unread, past 0 */
    CHECK_EQ(shared_ring_format(region, size, CAPACITY, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_wait(&cons, 0), SHARED_RING_ERR_CORRUPT);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 0), SHARED_RING_ERR_CORRUPT);
    CHECK_EQ(got, 1);
}

TEST(a_format_under_a_producer_is_corrupt_at_its_next_wait_for_room) {
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_format(region, size, CAPACITY, 0), SHARED_RING_OK);
    while (shared_ring_write_str(&prod, "m", 0) == SHARED_RING_OK) continue; /* to the slow path */
    CHECK_EQ(shared_ring_write_str(&prod, "m", 0), SHARED_RING_ERR_CORRUPT);
}

/* ... and at the next look of a wait that sleeps through the format: each
   sleep ends within recheck_ns, and the wait looks at the ring id before it
   sleeps again. */
static void *format_once_the_consumer_sleeps(void *arg) {
    (void)arg;
    while (consumer_word() != 1u) usleep(1000);
    usleep(5000);
    if (shared_ring_format(region, size, CAPACITY, 0) != SHARED_RING_OK) abort();
    return NULL;
}

TEST(a_format_under_a_sleeping_consumer_is_corrupt_at_its_next_look) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    pthread_t t;
    o.spin_ns = SHARED_RING_OFF;
    o.recheck_ns = 20000000u; /* 20 ms */
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    pthread_create(&t, NULL, format_once_the_consumer_sleeps, NULL);
    CHECK_EQ(shared_ring_wait(&cons, 10000000000u), SHARED_RING_ERR_CORRUPT); /* not TIMEOUT */
    pthread_join(t, NULL);
}

/* wait_any and arm look at the ring id first too. */
TEST(wait_any_and_arm_report_a_format_under_a_handle_before_any_record) {
    shared_ring_options o = hooked();
    shared_ring_consumer *set[1] = { &cons };
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&prod, "a", 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&prod, "b", 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_release(&cons), 0);
    {
        shared_ring_message m;
        CHECK_EQ(shared_ring_peek(&cons, &m), SHARED_RING_OK); /* "b" stays unread */
        CHECK_EQ(shared_ring_release(&cons), 1);
    }
    CHECK_EQ(shared_ring_format(region, size, CAPACITY, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_arm(&cons), SHARED_RING_ERR_CORRUPT);
    fresh_region();
    CHECK_EQ(shared_ring_attach_producer(&prod, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&prod, "a", 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&prod, "b", 0), SHARED_RING_OK);
    {
        shared_ring_message m;
        CHECK_EQ(shared_ring_peek(&cons, &m), SHARED_RING_OK);
        CHECK_EQ(shared_ring_release(&cons), 1);
    }
    CHECK_EQ(shared_ring_format(region, size, CAPACITY, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_wait_any(set, 1, 0), 0); /* reported ready... */
    CHECK_EQ(shared_ring_read_some(&cons, count_message, &(int){ 0 }), SHARED_RING_ERR_CORRUPT);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    RUN(prepare_keeps_a_message_peeked_past_the_close_and_never_released);
    RUN(arm_reads_what_a_producer_left_before_it_says_peer_gone);
    RUN(a_wait_reads_what_a_producer_left_before_it_says_peer_gone);
    RUN(arm_after_peer_gone_arms_for_the_next_producer_whose_attach_wakes_the_loop);
    RUN(arm_over_a_replaced_consumer_is_promised_after_the_producers_next_publish);
    RUN(a_sleeper_never_trusts_the_wake_ups_of_a_producer_that_left);
    RUN(a_detach_raced_by_a_take_back_leaves_the_successors_wait_mode);
    RUN(a_producer_that_comes_and_goes_as_a_wait_goes_to_sleep_is_heard_before_the_sleep);
    RUN(wait_any_hears_a_producer_that_left_before_the_set_announced_its_sleep);
    RUN(arm_hears_a_producer_that_left_before_it_announced_the_sleep);
    RUN(a_departure_the_side_words_tell_is_not_taken_back_by_a_liveness_judgement);
    RUN(a_peer_in_the_middle_of_its_attach_is_no_departure);
    RUN(a_blocked_producer_hears_a_consumer_that_came_and_went);
    RUN(an_attach_that_fails_after_its_claim_hides_no_departure);
    RUN(side_words_that_never_stop_changing_keep_no_wait_past_its_timeout);
    RUN(a_producer_chooses_no_fenceless_peer_while_a_consumer_claims);
    RUN(a_parent_that_detaches_while_its_child_adopts_is_no_departure);
    RUN(the_peer_fd_of_an_adopted_producer_is_replaced_not_left_readable);
    RUN(an_aligned_claim_that_fits_half_the_ring_fits_at_every_position_of_an_empty_ring);
    RUN(two_openers_sizing_one_new_object_differently_are_not_both_told_ok);
    RUN(a_read_whose_record_vanishes_after_its_wait_says_corrupt_not_empty);
    RUN(a_format_under_a_handle_with_an_unread_record_is_corrupt_at_its_next_wait);
    RUN(a_format_under_a_producer_is_corrupt_at_its_next_wait_for_room);
    RUN(a_format_under_a_sleeping_consumer_is_corrupt_at_its_next_look);
    RUN(wait_any_and_arm_report_a_format_under_a_handle_before_any_record);
    return harness_summary("seams");
}
