/* Judgements made on a stale look, each forced at a scheduling point:
   - a prepare or an attach loads a dead holder's word, a rival prepare
     (another description holding the byte) takes it before the judge
     reads the file and the identity slot: the judge must not answer
     "alive" for the word it loaded ("load owner");
   - a prepare that saw garbage where the magic is, before a rival
     formatted and a producer attached, must judge the producer's word,
     not take it as garbage ("lock");
   - TAKE_BACK must not take this process's own prepare's word: the
     format would run under the attached handle ("load owner");
   - a claim whose lock failed must not take a word whose holder left and
     came back (the same word) while it tested the byte ("test byte",
     "byte tested");
   - a handle an attach took the side back from must not, once the attach
     is ATTACHED with the same word, pass for the side's holder until the
     new attach id is out ("move owner"), nor because it looked before a
     take-back that ran during its detach's publish ("publish"). */
#define _GNU_SOURCE
#include <string.h>
static void hook(const char *what);
#define SRNG_SCHED_POINT(what) hook(what)
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAPACITY 4096u
static unsigned char *region;
static size_t size;
static int region_fd = -1, rival_fd = -1;
static shared_ring_options opts;
static int armed, release_next;
static unsigned armed_off;
static uint64_t stale_word, rival_word;

static uint64_t word_at(unsigned off) {
    return __atomic_load_n((uint64_t *)(void *)(region + off), __ATOMIC_ACQUIRE);
}

static void rival_release(void) {
    __atomic_store_n((uint64_t *)(void *)(region + armed_off), 0, __ATOMIC_RELEASE);
    close(rival_fd);
    rival_fd = -1;
}

static void (*at_point)(const char *what); /* a test's own move, if set */

static void hook(const char *what) {
    if (at_point != NULL) {
        at_point(what);
        return;
    }
    if (release_next && strcmp(what, "lock") == 0) {
        release_next = 0;
        rival_release();
        return;
    }
    if (!armed || strcmp(what, "load owner") != 0 || word_at(armed_off) != stale_word) return;
    armed = 0;
    /* the rival prepare, which took the byte first, takes the word now */
    __atomic_store_n((uint64_t *)(void *)(region + armed_off), rival_word, __ATOMIC_RELEASE);
    srng_write_identity(region, armed_off, rival_word);
    release_next = 1;
}

static void fresh(void) {
    if (region != NULL) munmap(region, size);
    if (region_fd >= 0) close(region_fd);
    size = shared_ring_region_size(CAPACITY, 0);
    region_fd = memfd_create("stale", MFD_CLOEXEC);
    if (region_fd < 0 || ftruncate(region_fd, (off_t)size) != 0) abort();
    region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, region_fd, 0);
    if (region == MAP_FAILED) abort();
    if (shared_ring_format(region, size, CAPACITY, 0) != SHARED_RING_OK) abort();
    opts = shared_ring_default_options();
    opts.region_fd = region_fd;
}

/* A process that attached as that side and died holding it. */
static void dead_holder(int producer) {
    pid_t pid = harness_fork();
    if (pid == 0) {
        shared_ring_producer p;
        shared_ring_consumer c;
        int r = producer ? shared_ring_attach_producer(&p, region, size, &opts)
                         : shared_ring_attach_consumer(&c, region, size, &opts);
        _exit(r == SHARED_RING_OK ? 0 : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    if (st != 0) abort();
}

/* The rival: a live process's FORMATTING word (LOCKED), its byte held by a
   description of ours other than the judge's. */
static pid_t arm_rival(unsigned off) {
    char path[64];
    pid_t pid = harness_fork();
    if (pid == 0) {
        for (;;) pause();
    }
    uint64_t number = srng_mix(srng_process_number() ^ (uint32_t)pid) & 0xFFFFFFFFu;
    rival_word = srng_in_state(number << 32 | (uint32_t)pid, SRNG_FORMATTING) | SRNG_OWNER_LOCKED;
    snprintf(path, sizeof path, "/proc/self/fd/%d", region_fd);
    rival_fd = open(path, O_RDWR | O_CLOEXEC);
    if (rival_fd < 0 || srng_lock_byte(rival_fd, off) != 1) abort();
    armed_off = off;
    stale_word = word_at(off);
    armed = 1;
    return pid;
}

static void end_rival(pid_t pid) {
    armed = 0;
    if (release_next) { release_next = 0; rival_release(); }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

TEST(prepare_does_not_keep_a_ring_for_a_dead_producer_judged_on_a_stale_word) {
    shared_ring_owners before, after;
    pid_t rival;
    fresh();
    dead_holder(1);
    shared_ring_owners_of(region, size, 0, &before);
    rival = arm_rival(SRNG_OFF_PRODUCER_ID);
    CHECK_EQ(shared_ring_prepare(region, size, CAPACITY, 0, region_fd), SHARED_RING_OK);
    shared_ring_owners_of(region, size, 0, &after);
    CHECK(after.ring_id != before.ring_id); /* formatted afresh */
    end_rival(rival);
}

TEST(attach_is_not_refused_busy_for_a_dead_consumer_judged_on_a_stale_word) {
    shared_ring_consumer c;
    pid_t rival;
    fresh();
    dead_holder(0);
    rival = arm_rival(SRNG_OFF_CONSUMER_ID);
    CHECK_EQ(shared_ring_attach_consumer_wait(&c, region, size, &opts, 2000000000u), SHARED_RING_OK);
    end_rival(rival);
}

/* What the rival's format and the producer's attach leave for the test. */
static shared_ring_producer live_producer;
static int moved;

/* At the prepare's first lock: a rival formats the region and a producer
   (its own description) attaches, all before the prepare's look. */
static void format_and_attach(const char *what) {
    if (moved || strcmp(what, "lock") != 0) return;
    moved = 1;
    at_point = NULL;
    if (shared_ring_format(region, size, CAPACITY, 0) != SHARED_RING_OK ||
        shared_ring_attach_producer(&live_producer, region, size, &opts) != SHARED_RING_OK)
        abort();
}

TEST(prepare_judges_a_word_written_after_the_garbage_it_first_saw) {
    uint64_t producer_word;
    int kept;
    fresh();
    /* another layout's magic: its owner words mean nothing */
    __atomic_store_n((uint32_t *)(void *)(region + SRNG_OFF_MAGIC), 0x0BADF00Du, __ATOMIC_RELEASE);
    moved = 0;
    at_point = format_and_attach;
    kept = shared_ring_prepare(region, size, CAPACITY, 0, region_fd);
    at_point = NULL;
    CHECK(moved);
    producer_word = word_at(SRNG_OFF_PRODUCER_ID);
    CHECK_EQ(kept, 1); /* a live producer is attached: the ring is kept */
    CHECK(producer_word == live_producer.s.owner);
    CHECK_EQ(shared_ring_write_bytes(&live_producer, "m", 1, 0), SHARED_RING_OK);
    shared_ring_detach_producer(&live_producer);
}

static int taken_back = 1, written = 1;

/* Once prepare holds both words, another thread of this process attaches
   with TAKE_BACK; it writes a message once the format has begun. */
static void take_back_under_prepare(const char *what) {
    shared_ring_options o = opts;
    if (moved && taken_back == SHARED_RING_OK && strcmp(what, "format: magic cleared") == 0) {
        at_point = NULL;
        written = shared_ring_write_bytes(&live_producer, "m", 1, 0);
        return;
    }
    if (moved || strcmp(what, "load owner") != 0 ||
        (word_at(SRNG_OFF_PRODUCER_ID) & SRNG_OWNER_STATE) != SRNG_FORMATTING ||
        (word_at(SRNG_OFF_CONSUMER_ID) & SRNG_OWNER_STATE) != SRNG_FORMATTING)
        return;
    moved = 1;
    o.flags = SHARED_RING_TAKE_BACK;
    taken_back = shared_ring_attach_producer(&live_producer, region, size, &o);
    if (taken_back != SHARED_RING_OK) at_point = NULL;
}

static int count_one(void *user, const void *data, size_t len) {
    (void)data, (void)len;
    ++*(int *)user;
    return 0;
}

TEST(take_back_does_not_take_a_side_its_own_process_is_formatting) {
    shared_ring_consumer c;
    int prepared, got = 0;
    fresh();
    moved = 0;
    taken_back = written = 1;
    at_point = take_back_under_prepare;
    prepared = shared_ring_prepare(region, size, CAPACITY, 0, region_fd);
    at_point = NULL;
    CHECK(moved);
    /* Refused (a prepare holds the side for a moment), or else what it
       wrote must be there to read: a format under it would lose it. */
    if (taken_back != SHARED_RING_OK) {
        CHECK_EQ(taken_back, SHARED_RING_NOT_FORMATTED);
        CHECK_EQ(prepared, SHARED_RING_OK);
        return;
    }
    CHECK_EQ(written, SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &opts), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, count_one, &got), 1);
    CHECK_EQ(got, 1);
    shared_ring_detach_consumer(&c);
    shared_ring_detach_producer(&live_producer);
}

/* The holders that come and go: held[rounds] is attached now. */
static shared_ring_producer held[3];
static int rounds, attached_again = SHARED_RING_OK;

/* Between a claim's look at the byte and its move: the holder detaches
   before each look, and the same process attaches again after it, so the
   word is the one the claim loaded. Twice at most (a second look at the
   byte must not be trusted either). */
static void leave_and_come_back(const char *what) {
    if (rounds < 2 && strcmp(what, "test byte") == 0) {
        if (shared_ring_detach_producer(&held[rounds]) != SHARED_RING_OK) abort();
        moved = 1;
    } else if (moved && strcmp(what, "byte tested") == 0) {
        void (*self)(const char *) = at_point;
        moved = 0;
        at_point = NULL;
        rounds++;
        if (attached_again == SHARED_RING_OK)
            attached_again = shared_ring_attach_producer(&held[rounds], region, size, &opts);
        at_point = self;
    }
}

TEST(a_claim_does_not_take_a_word_that_left_and_came_back_while_it_looked) {
    shared_ring_producer claim;
    int claimed;
    fresh();
    CHECK_EQ(shared_ring_attach_producer(&held[0], region, size, &opts), SHARED_RING_OK);
    moved = 0;
    rounds = 0;
    attached_again = SHARED_RING_OK;
    at_point = leave_and_come_back;
    claimed = shared_ring_attach_producer(&claim, region, size, &opts);
    at_point = NULL;
    CHECK(rounds >= 1);
    CHECK_EQ(attached_again, SHARED_RING_OK);
    /* the side is the last holder's: the claim must not have taken it */
    CHECK_EQ(claimed, SHARED_RING_ERR_BUSY);
    CHECK(word_at(SRNG_OFF_PRODUCER_ID) == held[rounds].s.owner);
    shared_ring_detach_producer(&held[rounds]);
    if (claimed == SHARED_RING_OK) shared_ring_detach_producer(&claim);
}

static int formatted_while_held;

/* The rival prepare holds the producer's word and byte until the claim
   naps between tries; a format before then ran under it. */
static void rival_prepare_until_a_nap(const char *what) {
    if (strcmp(what, "format: magic cleared") == 0 && rival_fd >= 0) formatted_while_held = 1;
    if (strcmp(what, "nap") == 0 && rival_fd >= 0) rival_release();
}

TEST(prepare_judges_a_word_whose_byte_was_held_though_it_saw_garbage) {
    pid_t rival;
    int prepared;
    fresh();
    /* another layout's magic: unjudged words, unless a byte is held */
    __atomic_store_n((uint32_t *)(void *)(region + SRNG_OFF_MAGIC), 0x0BADF00Du, __ATOMIC_RELEASE);
    rival = arm_rival(SRNG_OFF_PRODUCER_ID); /* a live prepare's word and byte */
    armed = 0;
    __atomic_store_n((uint64_t *)(void *)(region + SRNG_OFF_PRODUCER_ID), rival_word,
                     __ATOMIC_RELEASE);
    formatted_while_held = 0;
    at_point = rival_prepare_until_a_nap;
    prepared = shared_ring_prepare(region, size, CAPACITY, 0, region_fd);
    at_point = NULL;
    CHECK_EQ(prepared, SHARED_RING_OK);
    CHECK(!formatted_while_held);
    end_rival(rival);
}

/* The rival lets go of the byte once the claim, refused the lock, has
   loaded the word. */
static void let_go_after_the_load(const char *what) {
    if (strcmp(what, "load owner") == 0 && rival_fd >= 0) {
        close(rival_fd);
        rival_fd = -1;
    }
}

TEST(a_claim_refused_the_lock_takes_it_once_free_and_judges_a_dead_holder_gone) {
    shared_ring_consumer c;
    pid_t rival;
    int r;
    fresh();
    dead_holder(0);
    /* a pid this namespace cannot place: only the lock can judge it */
    __atomic_store_n((uint64_t *)(void *)(region + SRNG_OFF_CONSUMER_ID + SRNG_ID_SLOT +
                                          SRNG_SLOT_NS),
                     12345u, __ATOMIC_RELEASE);
    rival = arm_rival(SRNG_OFF_CONSUMER_ID); /* holds the byte, not the word */
    armed = 0;
    at_point = let_go_after_the_load;
    r = shared_ring_attach_consumer(&c, region, size, &opts);
    at_point = NULL;
    CHECK_EQ(r, SHARED_RING_OK);
    if (r == SHARED_RING_OK) shared_ring_detach_consumer(&c);
    end_rival(rival);
}

/* A handle of this process that a TAKE_BACK attach took the side from,
   kept by a careless part of the program. Without region_fd no LOCKED
   bit tells the two handles' words apart. */
static shared_ring_producer lost_handle;
static int lost_detached = -100;

/* Once the new attach moved the word back to ATTACHED, before it
   published its attach id: the careless part detaches the lost handle. */
static void detach_the_lost_handle(const char *what) {
    uint64_t w = word_at(SRNG_OFF_PRODUCER_ID);
    if (strcmp(what, "move owner") != 0 || w == 0 ||
        (w & SRNG_OWNER_STATE) != SRNG_ATTACHED)
        return;
    at_point = NULL;
    lost_detached = shared_ring_detach_producer(&lost_handle);
}

/* The side is `holder`'s alone: its word, no other attach; its detach
   frees it. */
static void check_the_side_stays_with(shared_ring_producer *holder) {
    shared_ring_producer other;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    CHECK(word_at(SRNG_OFF_PRODUCER_ID) == holder->s.owner);
    CHECK_EQ(shared_ring_attach_producer(&other, region, size, &o), SHARED_RING_ERR_BUSY);
    CHECK_EQ(shared_ring_detach_producer(holder), SHARED_RING_OK);
    CHECK(word_at(SRNG_OFF_PRODUCER_ID) == 0);
}

TEST(a_lost_handle_detached_before_the_new_attach_id_is_out_leaves_the_side) {
    shared_ring_producer p;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT; /* no region_fd: no lock */
    int r;
    fresh();
    CHECK_EQ(shared_ring_attach_producer(&lost_handle, region, size, &o), SHARED_RING_OK);
    o.flags = SHARED_RING_TAKE_BACK;
    lost_detached = -100;
    at_point = detach_the_lost_handle;
    r = shared_ring_attach_producer(&p, region, size, &o);
    at_point = NULL;
    CHECK_EQ(r, SHARED_RING_OK);
    CHECK_EQ(lost_detached, SHARED_RING_OK);
    if (r == SHARED_RING_OK) check_the_side_stays_with(&p);
}

static shared_ring_producer taker;
static int take_back_result = -100;

/* While the handle's detach publishes what its cork held back, another
   part of the program takes the side back, to the end of its attach. */
static void take_back_during_the_publish(const char *what) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    if (strcmp(what, "publish") != 0) return;
    at_point = NULL;
    o.flags = SHARED_RING_TAKE_BACK;
    take_back_result = shared_ring_attach_producer(&taker, region, size, &o);
}

TEST(a_detach_that_loses_its_side_while_it_publishes_leaves_the_side) {
    shared_ring_producer p;
    shared_ring_consumer c;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT; /* no region_fd: no lock */
    int r, got = 0;
    fresh();
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_cork(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_bytes(&p, "held", 4, 0), SHARED_RING_OK);
    take_back_result = -100;
    at_point = take_back_during_the_publish;
    r = shared_ring_detach_producer(&p);
    at_point = NULL;
    CHECK_EQ(r, SHARED_RING_OK);
    CHECK_EQ(take_back_result, SHARED_RING_OK);
    if (take_back_result == SHARED_RING_OK) check_the_side_stays_with(&taker);
    /* what the cork held went out before the side changed hands */
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, count_one, &got), 1);
    CHECK_EQ(got, 1);
    shared_ring_detach_consumer(&c);
}

int main(void) {
    alarm(60);
    RUN(prepare_does_not_keep_a_ring_for_a_dead_producer_judged_on_a_stale_word);
    RUN(attach_is_not_refused_busy_for_a_dead_consumer_judged_on_a_stale_word);
    RUN(prepare_judges_a_word_written_after_the_garbage_it_first_saw);
    RUN(take_back_does_not_take_a_side_its_own_process_is_formatting);
    RUN(a_claim_does_not_take_a_word_that_left_and_came_back_while_it_looked);
    RUN(prepare_judges_a_word_whose_byte_was_held_though_it_saw_garbage);
    RUN(a_claim_refused_the_lock_takes_it_once_free_and_judges_a_dead_holder_gone);
    RUN(a_lost_handle_detached_before_the_new_attach_id_is_out_leaves_the_side);
    RUN(a_detach_that_loses_its_side_while_it_publishes_leaves_the_side);
    return harness_summary("stale_judge");
}
