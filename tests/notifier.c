/* The notifier (SHARED_RING_NOTIFIER): a descriptor per side that the
   peer's wake-ups make readable, for event loops and blocking calls alike;
   between threads, and between processes that inherited it. Built twice:
   with eventfds (Linux) and with pipes (SHARED_RING_NOTIFIER_PIPES, the
   other POSIX systems' way). */
#define _GNU_SOURCE
#define SHARED_RING_NOTIFIER
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAPACITY 1024u

static unsigned char *region;
static size_t size;
static shared_ring_notifier n;
static shared_ring_producer p;
static shared_ring_consumer c;

/* A fresh ring (shared with forked children) and notifier, both sides
   attached with the notifier's options. */
static void setup(void) {
    shared_ring_options po = { 0 }, co = { 0 };
    size = shared_ring_region_size(CAPACITY, 0);
    if (region == NULL)
        region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED || shared_ring_format(region, size, CAPACITY, 0) != SHARED_RING_OK)
        abort();
    if (shared_ring_notifier_open(&n) != SHARED_RING_OK) abort();
    po.spin_ns = co.spin_ns = SHARED_RING_OFF; /* sleep at once: through the notifier */
    CHECK_EQ(shared_ring_notifier_options(&n, SHARED_RING_PRODUCER_END, &po), SHARED_RING_OK);
    CHECK_EQ(shared_ring_notifier_options(&n, SHARED_RING_CONSUMER_END, &co), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, &po), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, &co), SHARED_RING_OK);
}

static void teardown(void) {
    shared_ring_detach_producer(&p);
    shared_ring_detach_consumer(&c);
    CHECK_EQ(shared_ring_notifier_close(&n), SHARED_RING_OK);
}

/* Is fd readable within ms? */
static int readable(int fd, int ms) {
    struct pollfd pfd = { fd, POLLIN, 0 };
    return poll(&pfd, 1, ms) == 1 && (pfd.revents & POLLIN) != 0;
}

static int count(void *user, const void *data, size_t len) {
    (void)data;
    (void)len;
    ++*(int *)user;
    return 0;
}

TEST(a_publish_makes_an_armed_consumers_descriptor_readable) {
    int got = 0;
    setup();
    CHECK_EQ(shared_ring_arm(&c), SHARED_RING_OK);
    CHECK(!readable(n.fd[SHARED_RING_CONSUMER_END], 0));
    CHECK_EQ(shared_ring_write_str(&p, "x", 0), SHARED_RING_OK);
    CHECK(readable(n.fd[SHARED_RING_CONSUMER_END], 1000));
    CHECK_EQ(shared_ring_notifier_clear(&n, SHARED_RING_CONSUMER_END), SHARED_RING_OK);
    CHECK(!readable(n.fd[SHARED_RING_CONSUMER_END], 0));
    CHECK_EQ(shared_ring_read_some(&c, count, &got), 1);
    teardown();
}

TEST(a_consumer_not_armed_gets_no_signal) {
    setup();
    CHECK_EQ(shared_ring_write_str(&p, "x", 0), SHARED_RING_OK);
    CHECK(!readable(n.fd[SHARED_RING_CONSUMER_END], 0)); /* nobody slept: no system call */
    teardown();
}

static void *write_later(void *arg) {
    struct timespec d = { 0, 50000000 };
    (void)arg;
    nanosleep(&d, NULL);
    shared_ring_write_str(&p, "late", 0);
    return NULL;
}

TEST(a_consumer_blocked_in_read_is_woken_through_its_descriptor) {
    pthread_t t;
    int got = 0;
    setup();
    pthread_create(&t, NULL, write_later, NULL);
    CHECK_EQ(shared_ring_read(&c, count, &got, 5000000000u), 1);
    pthread_join(t, NULL);
    teardown();
}

static void *write_until_room(void *arg) {
    *(int *)arg = shared_ring_write_bytes(&p, "0123456789abcdef", 16, 5000000000u);
    return NULL;
}

TEST(a_producer_blocked_on_a_full_ring_is_woken_through_its_descriptor) {
    pthread_t t;
    int got = 0, r = 1;
    setup();
    while (shared_ring_write_bytes(&p, "0123456789abcdef", 16, 0) == SHARED_RING_OK) {
    }
    pthread_create(&t, NULL, write_until_room, &r);
    usleep(50000); /* the producer sleeps on its end */
    while (shared_ring_read_some(&c, count, &got) > 0) {
    }
    pthread_join(t, NULL);
    CHECK_EQ(r, SHARED_RING_OK);
    teardown();
}

TEST(an_unknown_end_is_refused) {
    shared_ring_options o = { 0 };
    CHECK_EQ(shared_ring_notifier_options(&n, 2, &o), SHARED_RING_ERR_ARG);
    CHECK_EQ(shared_ring_notifier_options(&n, -1, &o), SHARED_RING_ERR_ARG);
    CHECK_EQ(shared_ring_notifier_options(NULL, 0, &o), SHARED_RING_ERR_ARG);
    CHECK(o.wait == NULL && o.wake == NULL);
    CHECK_EQ(shared_ring_notifier_clear(&n, 2), SHARED_RING_ERR_ARG);
}

/* A forked producer inherits the notifier; the parent's loop sleeps in
   poll on its end between reads. Every message arrives. */
TEST(a_producer_process_that_inherited_the_notifier_wakes_the_consumers_loop) {
    enum { MESSAGES = 20000 };
    int got = 0, r = 0, status = -1, sleeps = 0;
    pid_t child;
    setup();
    child = harness_fork();
    if (child == 0) {
        int i;
        if (shared_ring_adopt_producer(&p) != SHARED_RING_OK) _exit(1);
        for (i = 0; i < MESSAGES; i++)
            if (shared_ring_write_bytes(&p, &i, sizeof i, 5000000000u) != SHARED_RING_OK) _exit(1);
        _exit(shared_ring_close(&p) == SHARED_RING_OK ? 0 : 1);
    }
    for (;;) {
        r = shared_ring_read_some(&c, count, &got);
        if (r == SHARED_RING_EMPTY) r = shared_ring_arm(&c);
        if (r >= 1) continue;
        if (r != SHARED_RING_OK) break;
        if (!readable(n.fd[SHARED_RING_CONSUMER_END], 5000)) break; /* a lost wake-up */
        shared_ring_notifier_clear(&n, SHARED_RING_CONSUMER_END);
        sleeps++;
    }
    CHECK_EQ(r, SHARED_RING_CLOSED);
    CHECK_EQ(got, MESSAGES);
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("  %d messages, the loop slept %d times\n", got, sleeps);
    teardown();
}

int main(void) {
    alarm(60);
    RUN(a_publish_makes_an_armed_consumers_descriptor_readable);
    RUN(a_consumer_not_armed_gets_no_signal);
    RUN(a_consumer_blocked_in_read_is_woken_through_its_descriptor);
    RUN(a_producer_blocked_on_a_full_ring_is_woken_through_its_descriptor);
    RUN(an_unknown_end_is_refused);
    RUN(a_producer_process_that_inherited_the_notifier_wakes_the_consumers_loop);
#ifdef SHARED_RING_NOTIFIER_PIPES
    return harness_summary("notifier (pipes)");
#else
    return harness_summary("notifier (eventfd)");
#endif
}
