/* clock_gettime can fail (a seccomp filter, a broken vDSO), or stand still
   (a frozen virtual clock): timed waits must still end. This program replaces
   clock_gettime for the library linked into it and makes it fail or stop
   on demand. Linux, native build only
   (with -D_TIME_BITS=64 libc calls another symbol). */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int clock_fails, clock_stands_still;
static time_t frozen_at; /* where the clock stands: 30 s ahead of the kernel's at first use */

int clock_gettime(clockid_t id, struct timespec *ts) {
    if (clock_fails) {
        errno = EINVAL;
        return -1;
    }
    if (clock_stands_still) {
        /* Ahead of the kernel's clock, as a faked one can be: a sleep whose deadline came from
           it (an absolute timeout) would last those 30 s. */
        if (frozen_at == 0 && syscall(SYS_clock_gettime, id, ts) == 0) frozen_at = ts->tv_sec + 30;
        ts->tv_sec = frozen_at;
        ts->tv_nsec = 0;
        return 0;
    }
    return (int)syscall(SYS_clock_gettime, id, ts);
}

#define SHARED_RING_IMPLEMENTATION
#define SHARED_RING_SHM
#include "../shared_ring.h"
#include "harness.h"

#include <stdalign.h>
#include <stdio.h>
#include <string.h>

static alignas(128) unsigned char region[SHARED_RING_HEADER_SIZE + 1024];

static void attach(shared_ring_producer *p, shared_ring_consumer *c) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.spin_ns = 1000;
    CHECK_EQ(shared_ring_format(region, sizeof region, 1024, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(p, region, sizeof region, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(c, region, sizeof region, &o), SHARED_RING_OK);
}

static int count_one(void *user, const void *data, size_t len) {
    (void)user;
    (void)data;
    (void)len;
    return 0;
}

static uint64_t seconds_now(void) {
    struct timespec ts;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts); /* past the failing wrapper */
    return (uint64_t)ts.tv_sec;
}

/* A 50 ms wait on an empty ring times out within 5 s while *fault is set,
   and counts (at least) the 50 ms it waited. */
static void timed_wait_ends_while(int *fault) {
    shared_ring_producer p;
    shared_ring_consumer c;
    shared_ring_stats st = { 0 };
    uint64_t start = seconds_now();
    attach(&p, &c);
    *fault = 1;
    CHECK_EQ(shared_ring_wait(&c, 50000000), SHARED_RING_TIMEOUT);
    *fault = 0;
    /* margin: 50 ms expected, 5 s allowed (100x); whole seconds, so the
       bound is 4-5 s: the time is one timed sleep, slowed by no emulator */
    CHECK(seconds_now() - start <= 5); /* inexact, but it ends */
    CHECK_EQ(shared_ring_consumer_stats(&c, &st), SHARED_RING_OK);
    /* a lower bound: a slow machine only waits longer */
    CHECK(st.wait_ns >= 50000000);
}

/* A 50 ms write to a full ring times out within 5 s while *fault is set. */
static void timed_write_ends_while(int *fault) {
    shared_ring_producer p;
    shared_ring_consumer c;
    char buf[56] = { 0 };
    uint64_t start = seconds_now();
    attach(&p, &c);
    while (shared_ring_write_bytes(&p, buf, sizeof buf, 0) == SHARED_RING_OK) {
    }
    *fault = 1;
    CHECK_EQ(shared_ring_write_bytes(&p, buf, sizeof buf, 50000000), SHARED_RING_TIMEOUT);
    *fault = 0;
    CHECK(seconds_now() - start <= 5);
}

TEST(timed_wait_ends_while_the_clock_fails) { timed_wait_ends_while(&clock_fails); }

TEST(timed_write_ends_while_the_clock_fails) { timed_write_ends_while(&clock_fails); }

TEST(trailing_hold_off_ends_while_the_clock_stands_still) {
    shared_ring_producer p;
    shared_ring_consumer c;
    uint64_t start = seconds_now();
    int n = 0;
    attach(&p, &c);
    CHECK_EQ(shared_ring_write_bytes(&p, "x", 1, 0), SHARED_RING_OK);
    c.trailing = 1; /* as after 16 quick waits (private state) */
    clock_stands_still = 1;
    n = shared_ring_read(&c, count_one, &n, SHARED_RING_FOREVER);
    clock_stands_still = 0;
    CHECK_EQ(n, 1);
    CHECK(seconds_now() - start <= 5);
}

/* The waits below would never time out if they trusted a clock that stands
   still: each counts its sleeps at their requested length instead.
   Margins of every `seconds_now() - start <= N` here: each wait sleeps
   about its timeout (50 ms) before it ends, 60-100x inside N (3 or 5 s,
   read in whole seconds, so N-1 at least); the time is sleeps, and this
   test runs natively only. What the bounds catch is a wait that never
   ends. */

TEST(timed_wait_ends_while_the_clock_stands_still) { timed_wait_ends_while(&clock_stands_still); }

TEST(a_long_spin_ends_while_the_clock_stands_still) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_producer p;
    shared_ring_consumer c;
    uint64_t start = seconds_now();
    o.spin_ns = 4000000000u; /* 4 s of spinning, by a clock that never moves */
    CHECK_EQ(shared_ring_format(region, sizeof region, 1024, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&p, region, sizeof region, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, sizeof region, &o), SHARED_RING_OK);
    clock_stands_still = 1;
    CHECK_EQ(shared_ring_wait(&c, 50000000), SHARED_RING_TIMEOUT);
    clock_stands_still = 0;
    CHECK(seconds_now() - start <= 3);
}

TEST(timed_write_ends_while_the_clock_stands_still) { timed_write_ends_while(&clock_stands_still); }

TEST(timed_wait_any_ends_while_the_clock_stands_still) {
    shared_ring_producer p;
    shared_ring_consumer c;
    shared_ring_consumer *rings[1] = { &c };
    uint64_t start = seconds_now();
    attach(&p, &c);
    clock_stands_still = 1;
    CHECK_EQ(shared_ring_wait_any(rings, 1, 50000000), SHARED_RING_TIMEOUT);
    clock_stands_still = 0;
    CHECK(seconds_now() - start <= 5);
}

TEST(attach_wait_ends_while_the_clock_stands_still) {
    shared_ring_consumer c;
    uint64_t start = seconds_now();
    memset(region, 0, sizeof region); /* never formatted */
    clock_stands_still = 1;
    CHECK_EQ(shared_ring_attach_consumer_wait(&c, region, sizeof region, NULL, 50000000),
             SHARED_RING_TIMEOUT);
    clock_stands_still = 0;
    CHECK(seconds_now() - start <= 5);
}

TEST(shm_open_wait_ends_while_the_clock_stands_still) {
    shared_ring_shm shm;
    char name[64];
    uint64_t start = seconds_now();
    snprintf(name, sizeof name, "/shared_ring-clock-%d", (int)getpid());
    shared_ring_shm_unlink(name);
    clock_stands_still = 1;
    /* size 0: open one that exists; none does, so it waits */
    CHECK_EQ(shared_ring_shm_open(&shm, name, 0, 50000000), SHARED_RING_TIMEOUT);
    clock_stands_still = 0;
    CHECK(seconds_now() - start <= 5);
}

int main(void) {
    RUN(timed_wait_ends_while_the_clock_fails);
    RUN(timed_write_ends_while_the_clock_fails);
    RUN(trailing_hold_off_ends_while_the_clock_stands_still);
    RUN(timed_wait_ends_while_the_clock_stands_still);
    RUN(a_long_spin_ends_while_the_clock_stands_still);
    RUN(timed_write_ends_while_the_clock_stands_still);
    RUN(timed_wait_any_ends_while_the_clock_stands_still);
    RUN(attach_wait_ends_while_the_clock_stands_still);
    RUN(shm_open_wait_ends_while_the_clock_stands_still);
    return harness_summary("clock_fail");
}
