/* Mixed builds: a peer built with SHARED_RING_NO_OS_WAIT, or one that
   sleeps and wakes through wait hooks, shares a ring with a default build.
   For every pair of (sleeper, waker) flavours, in both directions (the
   consumer waiting for data, the producer waiting for room), the sleeper
   must be woken soon after the waker made progress, not at its timeout. */
#define _GNU_SOURCE
#define SHARED_RING_STATIC
#define SHARED_RING_IMPLEMENTATION
#include "mixed_builds.h"
#include "harness.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdlib.h>
#include <time.h>

#define CAPACITY 256u
#define TIMEOUT_NS 5000000000ull     /* what a lost wake-up would cost */
/* margin: a wake-up takes microseconds; 100 ms allowed (1000x), and a lost
   one costs TIMEOUT_NS (5 s, 50x the bound): under ASan (the slowest build
   that runs this) the wake path is microseconds of work still. */
#define WOKEN_WITHIN_NS 100000000ull /* what we require instead */

static const ring_build default_build = { "default", shared_ring_attach_producer,
                                          shared_ring_attach_consumer, shared_ring_write_bytes,
                                          shared_ring_read, shared_ring_detach_producer };

/* Wait hooks the way a user would write them over a condition variable. */
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hook_cond = PTHREAD_COND_INITIALIZER;
static void cond_wait(void *user, void *addr, uint32_t expected, uint64_t timeout_ns) {
    struct timespec until;
    (void)user;
    clock_gettime(CLOCK_REALTIME, &until);
    if (timeout_ns > 10000000000ull) timeout_ns = 10000000000ull;
    until.tv_sec += (time_t)(timeout_ns / 1000000000u);
    until.tv_nsec += (long)(timeout_ns % 1000000000u);
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&hook_lock);
    if (__atomic_load_n((uint32_t *)addr, __ATOMIC_ACQUIRE) == expected)
        pthread_cond_timedwait(&hook_cond, &hook_lock, &until);
    pthread_mutex_unlock(&hook_lock);
}
static void cond_wake(void *user, void *addr) {
    (void)user;
    (void)addr;
    pthread_mutex_lock(&hook_lock);
    pthread_cond_broadcast(&hook_cond);
    pthread_mutex_unlock(&hook_lock);
}

typedef struct flavour {
    const char *name;
    const ring_build *build;
    int hooks;
} flavour;
static const flavour flavours[] = {
    { "default", &default_build, 0 },
    { "no-os-wait", &no_os_wait_build, 0 },
    { "hooks", &default_build, 1 },
};

static alignas(128) unsigned char region[SHARED_RING_HEADER_SIZE + CAPACITY];
static shared_ring_producer prod;
static shared_ring_consumer cons;
static const flavour *sleeper, *waker;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static void nap_ms(long ms) { nanosleep(&(struct timespec){ 0, ms * 1000000L }, NULL); }

static shared_ring_options options_of(const flavour *f) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.spin_ns = SHARED_RING_OFF; /* sleep at once */
    if (f->hooks) {
        o.wait = cond_wait;
        o.wake = cond_wake;
    }
    return o;
}

static void attach(const flavour *producer_side, const flavour *consumer_side) {
    shared_ring_options po = options_of(producer_side), co = options_of(consumer_side);
    CHECK_EQ(shared_ring_format(region, sizeof region, CAPACITY, 0), SHARED_RING_OK);
    CHECK_EQ(producer_side->build->attach_producer(&prod, region, sizeof region, &po),
             SHARED_RING_OK);
    CHECK_EQ(consumer_side->build->attach_consumer(&cons, region, sizeof region, &co),
             SHARED_RING_OK);
}

static int count_message(void *user, const void *data, size_t len) {
    (void)data;
    (void)len;
    ++*(int *)user;
    return 0;
}

static uint32_t region_u32(size_t off) {
    return __atomic_load_n((uint32_t *)(void *)(region + off), __ATOMIC_ACQUIRE);
}

/* Wait (up to 2 s) until the side whose sleeping word is at `off` sleeps. */
static void until_asleep(size_t off) {
    int i;
    for (i = 0; i < 2000 && region_u32(off) != 1; i++) nap_ms(1); /* 2: attached, awake */
    CHECK_EQ(region_u32(off), 1);
}

static int thread_result;
static uint64_t thread_done_ns;

static void *consumer_waits(void *arg) {
    int n = 0;
    (void)arg;
    thread_result = sleeper->build->read(&cons, count_message, &n, TIMEOUT_NS);
    thread_done_ns = now_ns();
    return NULL;
}

static void *producer_waits(void *arg) {
    char buf[56] = { 0 };
    (void)arg;
    thread_result = sleeper->build->write_bytes(&prod, buf, sizeof buf, TIMEOUT_NS);
    thread_done_ns = now_ns();
    return NULL;
}

static void check_woken_soon(uint64_t progress_ns, const char *who) {
    uint64_t took = thread_done_ns - progress_ns;
    CHECK_EQ(thread_result, who[0] == 'c' ? 1 : SHARED_RING_OK);
    CHECK(took < WOKEN_WITHIN_NS);
    if (took >= WOKEN_WITHIN_NS)
        fprintf(stderr, "  %s sleeping (%s) woken by %s after %.1f ms\n", who, sleeper->name,
                waker->name, (double)took / 1e6);
}

/* One sleeper/waker pairing: `prepare` sets up the ring and makes the
   sleeper's side need the waker (its thread is `sleep_in`, its sleeping
   word at `sleeping_off`); `progress` is the waker's move. */
typedef struct direction {
    const char *who;
    void *(*sleep_in)(void *);
    size_t sleeping_off;
    void (*prepare)(void);
    void (*progress)(void);
} direction;

static void consumer_needs_data(void) { attach(waker, sleeper); }
static void producer_sends(void) {
    CHECK_EQ(waker->build->write_bytes(&prod, "x", 1, 0), SHARED_RING_OK);
}
static void producer_needs_room(void) {
    char buf[56] = { 0 };
    attach(sleeper, waker);
    while (sleeper->build->write_bytes(&prod, buf, sizeof buf, 0) == SHARED_RING_OK) {
    }
}
static void consumer_reads(void) {
    int n = 0;
    CHECK(waker->build->read(&cons, count_message, &n, 0) > 0);
}

/* Every (sleeper, waker) pair of flavours in that direction. */
static void check_every_pair(const direction *d) {
    size_t i, j;
    for (i = 0; i < 3; i++) {
        for (j = 0; j < 3; j++) {
            pthread_t t;
            uint64_t progress;
            sleeper = &flavours[i];
            waker = &flavours[j];
            d->prepare();
            pthread_create(&t, NULL, d->sleep_in, NULL);
            until_asleep(d->sleeping_off);
            progress = now_ns();
            d->progress();
            pthread_join(t, NULL);
            check_woken_soon(progress, d->who);
        }
    }
}

TEST(consumer_of_every_build_is_woken_by_a_producer_of_every_build) {
    static const direction d = { "consumer", consumer_waits, 384, consumer_needs_data,
                                 producer_sends };
    check_every_pair(&d);
}

TEST(producer_of_every_build_is_woken_by_a_consumer_of_every_build) {
    static const direction d = { "producer", producer_waits, 512, producer_needs_room,
                                 consumer_reads };
    check_every_pair(&d);
}

/* A producer built without identities never writes its owner word: its
   departure is read from its attach id and wait_mode word, which every
   build writes. Alive, it is no departure; detached, it is one; the next
   one is a peer again. */
TEST(a_producer_without_identities_is_gone_only_once_it_detached) {
    shared_ring_options co = options_of(&flavours[0]), po = options_of(&flavours[1]);
    int got = 0;
    CHECK_EQ(shared_ring_format(region, sizeof region, CAPACITY, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, sizeof region, &co), SHARED_RING_OK);
    CHECK_EQ(no_os_wait_build.attach_producer(&prod, region, sizeof region, &po), SHARED_RING_OK);
    CHECK_EQ(no_os_wait_build.write_bytes(&prod, "m", 1, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 1000000000u), 1);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 20000000u), SHARED_RING_TIMEOUT);
    CHECK_EQ(no_os_wait_build.detach_producer(&prod), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 1000000000u), SHARED_RING_PEER_GONE);
    /* the next one is a peer again: a wait that finds nothing times out */
    CHECK_EQ(no_os_wait_build.attach_producer(&prod, region, sizeof region, &po), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read(&cons, count_message, &got, 20000000u), SHARED_RING_TIMEOUT);
    CHECK_EQ(no_os_wait_build.detach_producer(&prod), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
}

int main(void) {
    RUN(a_producer_without_identities_is_gone_only_once_it_detached);
    RUN(consumer_of_every_build_is_woken_by_a_producer_of_every_build);
    RUN(producer_of_every_build_is_woken_by_a_consumer_of_every_build);
    return harness_summary("mixed builds");
}
