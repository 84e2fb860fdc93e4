/* The macOS wait branch's timeouts, run on Linux against tests/ulock_stub.c
   (build with -D__APPLE__; see make matrix). __ulock_wait takes a 32-bit
   count of microseconds in which 0 means "no timeout": a longer timeout
   must be clamped, never turned into 0. */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

#include <pthread.h>
#include <stdalign.h>
#include <time.h>

extern uint32_t ulock_stub_last_timeout_us;
extern long ulock_stub_waits;

static alignas(128) unsigned char region[SHARED_RING_HEADER_SIZE + 1024];
static shared_ring_producer prod;
static shared_ring_consumer cons;

static void setup(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.recheck_ns = SHARED_RING_OFF; /* these tests look at the raw timeouts the OS is given */
    o.spin_ns = SHARED_RING_OFF;
    CHECK_EQ(shared_ring_format(region, sizeof region, 1024, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&prod, region, sizeof region, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, sizeof region, &o), SHARED_RING_OK);
    ulock_stub_last_timeout_us = 12345u;
    ulock_stub_waits = 0;
}

static void *write_after_30ms(void *arg) {
    (void)arg;
    nanosleep(&(struct timespec){ 0, 30000000 }, NULL);
    shared_ring_write_bytes(&prod, "x", 1, 0);
    return NULL;
}

static uint32_t wait_and_get_ulock_timeout(uint64_t timeout_ns) {
    pthread_t t;
    setup();
    pthread_create(&t, NULL, write_after_30ms, NULL);
    CHECK_EQ(shared_ring_wait(&cons, timeout_ns), SHARED_RING_OK);
    pthread_join(t, NULL);
    return __atomic_load_n(&ulock_stub_last_timeout_us, __ATOMIC_RELAXED);
}

TEST(waits_go_through_ulock) {
    CHECK(strcmp(shared_ring_wait_method(), "ulock") == 0);
    wait_and_get_ulock_timeout(SHARED_RING_FOREVER);
    CHECK(ulock_stub_waits >= 1);
}

TEST(timeout_above_71_minutes_is_clamped_not_made_endless) {
    uint32_t us = wait_and_get_ulock_timeout(2ull * 3600 * 1000000000); /* 2 hours */
    CHECK_EQ(us, UINT32_MAX);
}

TEST(sub_microsecond_timeout_is_not_made_endless) {
    setup();
    CHECK_EQ(shared_ring_wait(&cons, 500), SHARED_RING_TIMEOUT);
    CHECK_EQ(ulock_stub_last_timeout_us, 1);
}

TEST(timeout_is_rounded_up_to_whole_microseconds) {
    uint32_t us = wait_and_get_ulock_timeout(3000000001ull); /* 3 s + 1 ns */
    CHECK(us > 2900000u && us <= 3000001u);
}

TEST(forever_passes_no_timeout) { CHECK_EQ(wait_and_get_ulock_timeout(SHARED_RING_FOREVER), 0); }

TEST(short_timeout_times_out_on_time) {
    struct timespec a, b;
    setup();
    clock_gettime(CLOCK_MONOTONIC, &a);
    CHECK_EQ(shared_ring_wait(&cons, 20000000), SHARED_RING_TIMEOUT);
    clock_gettime(CLOCK_MONOTONIC, &b);
    /* a lower bound: slowness only adds */
    CHECK((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) >= 20000000L);
}

int main(void) {
    RUN(waits_go_through_ulock);
    RUN(timeout_above_71_minutes_is_clamped_not_made_endless);
    RUN(sub_microsecond_timeout_is_not_made_endless);
    RUN(timeout_is_rounded_up_to_whole_microseconds);
    RUN(forever_passes_no_timeout);
    RUN(short_timeout_times_out_on_time);
    return harness_summary("ulock timeouts");
}
