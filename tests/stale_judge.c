/* A judge on a stale owner word: a prepare or an attach loads a dead
   holder's word, a rival prepare (another description holding the byte)
   takes it before the judge reads the file and the identity slot. The
   judge must not answer "alive" for the word it loaded. Deterministic:
   the rival moves at the "load owner" scheduling point. */
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

static void hook(const char *what) {
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

int main(void) {
    alarm(60);
    RUN(prepare_does_not_keep_a_ring_for_a_dead_producer_judged_on_a_stale_word);
    RUN(attach_is_not_refused_busy_for_a_dead_consumer_judged_on_a_stale_word);
    return harness_summary("stale_judge");
}
