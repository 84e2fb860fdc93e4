/* The Linux futex wait, seen from the system call: every futex call goes
   through a recorder (the implementation's SRNG_SYSCALL seam), which
   checks what the kernel is given and can make the call fail. Built
   natively and, in make matrix, for i386 and armhf with -D_TIME_BITS=64,
   where libc's struct timespec and the kernel's classic one differ. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

static long recording_syscall(long nr, ...);
#define SRNG_SYSCALL recording_syscall
/* The clock, too, can be made to misbehave: see clock_mode. */
static uint64_t test_clock_ns(void);
#define SHARED_RING_NOW_NS() test_clock_ns()
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

#include <pthread.h>
#include <stdalign.h>
#include <time.h>

/* ---- the clock ------------------------------------------------------------- */

enum { CLOCK_TRUE, CLOCK_JUMPS_1MS_PER_READ, CLOCK_RUNS_BACKWARDS };
static int clock_mode;
static uint64_t clock_skew; /* added (or taken) per read in the odd modes */

static uint64_t true_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t test_clock_ns(void) {
    if (clock_mode == CLOCK_JUMPS_1MS_PER_READ) clock_skew += 1000000u;
    if (clock_mode == CLOCK_RUNS_BACKWARDS) return ((uint64_t)1 << 62) - (clock_skew += 1000000u);
    return true_now_ns() + clock_skew;
}

/* ---- the recorder ---------------------------------------------------------- */

static long futex_waits;     /* FUTEX_WAIT calls made */
static long futex_wakes;     /* FUTEX_WAKE calls made on wake_word */
static long process_barriers; /* membarrier(PRIVATE_EXPEDITED) calls made */
static long waits_before_barrier = -1; /* futex_waits at the first of them */
static const void *wake_word;
static long long_waits;      /* with a timeout over 1 s while the clock is odd */
static long futex_refusals;  /* of which the kernel refused (EINVAL, ...) */
static int fail_futex_waits; /* make every FUTEX_WAIT fail with EINVAL */
static int refuse_clock;     /* the kernel's clock call fails (ENOSYS), as seccomp may make it */
static int64_t first_timeout_sec = -1, first_timeout_nsec = -1; /* first call's */

static int is_futex(long nr) {
#ifdef SYS_futex_time64
    if (nr == SYS_futex_time64) return 1;
#endif
    return nr == SYS_futex;
}

/* The timeout as the kernel will read it: two 64-bit fields for
   futex_time64, two `long`s for the classic call. */
static void record_timeout(long nr, const void *ts) {
    if (ts == NULL || first_timeout_sec != -1) return;
#ifdef SYS_futex_time64
    if (nr == SYS_futex_time64) {
        const int64_t *t = (const int64_t *)ts;
        first_timeout_sec = t[0];
        first_timeout_nsec = t[1];
        return;
    }
#endif
    (void)nr;
    first_timeout_sec = ((const long *)ts)[0];
    first_timeout_nsec = ((const long *)ts)[1];
}

static long recording_syscall(long nr, ...) {
    long a[6], r;
    int i, is_wait;
    va_list ap;
    va_start(ap, nr);
    for (i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
#ifdef SRNG_HAVE_WAITV
    if (nr == SRNG_SYS_CLOCK64 && refuse_clock) {
        errno = ENOSYS;
        return -1;
    }
#endif
    is_wait = is_futex(nr) && (int)a[1] == 0; /* FUTEX_WAIT */
    if (is_futex(nr) && (a[1] & 127) == 1 && (const void *)a[0] == wake_word) /* FUTEX_WAKE */
        __atomic_fetch_add(&futex_wakes, 1, __ATOMIC_RELAXED);
#ifdef SYS_membarrier
    if (nr == SYS_membarrier && (int)a[0] == 1 << 3) { /* MEMBARRIER_CMD_PRIVATE_EXPEDITED */
        if (__atomic_fetch_add(&process_barriers, 1, __ATOMIC_RELAXED) == 0)
            waits_before_barrier = futex_waits;
    }
#endif
    if (is_wait) {
        __atomic_fetch_add(&futex_waits, 1, __ATOMIC_RELAXED);
        record_timeout(nr, (const void *)a[3]);
        if (clock_mode != CLOCK_TRUE && (a[3] == 0 || first_timeout_sec > 0)) {
            long_waits++; /* would sleep far past the timeout: don't */
            errno = ETIMEDOUT;
            return -1;
        }
        if (fail_futex_waits) {
            errno = EINVAL;
            return -1;
        }
    }
    r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (is_wait && r == -1 && errno != EAGAIN && errno != ETIMEDOUT && errno != EINTR)
        __atomic_fetch_add(&futex_refusals, 1, __ATOMIC_RELAXED);
    return r;
}

/* ---- fixture -------------------------------------------------------------- */

static alignas(128) unsigned char region[SHARED_RING_HEADER_SIZE + 1024];
static shared_ring_producer prod;
static shared_ring_consumer cons;

static void setup(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.recheck_ns = SHARED_RING_OFF; /* these tests look at the raw timeouts the OS is given */
    o.spin_ns = SHARED_RING_OFF;    /* straight to the futex */
    CHECK_EQ(shared_ring_format(region, sizeof region, 1024, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&prod, region, sizeof region, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, sizeof region, &o), SHARED_RING_OK);
    futex_waits = futex_refusals = long_waits = 0;
    fail_futex_waits = 0;
    clock_mode = CLOCK_TRUE;
    clock_skew = 0;
    first_timeout_sec = first_timeout_nsec = -1;
}

static uint64_t now_ns(void) { return true_now_ns(); }

static void *write_after_30ms(void *arg) {
    (void)arg;
    nanosleep(&(struct timespec){ 0, 30000000 }, NULL);
    shared_ring_write_bytes(&prod, "x", 1, 0);
    return NULL;
}

/* ---- tests -------------------------------------------------------------------- */

static int skip_message(void *user, const void *data, size_t len) {
    (void)user, (void)data, (void)len;
    return 0;
}

/* A consumer whose producer publishes to it without a fence (this process: membarrier, where the
   kernel has it and /proc places the consumer here) makes every CPU of the process fence before
   its last look, and only then sleeps; else the producer's fenceless publish could be missed by
   that look and never woken for. */
TEST(a_sleeper_its_producer_publishes_to_without_a_fence_calls_membarrier_before_sleeping) {
    int fenceless;
    setup();
    CHECK_EQ(shared_ring_write_str(&prod, "a", 0), SHARED_RING_OK); /* answers the attach */
    CHECK_EQ(shared_ring_read_some(&cons, skip_message, NULL), 1);
    fenceless = (int)prod.s.fenceless; /* the producer's choice for this consumer */
    if (!fenceless)
        printf("os_wait: the producer fences here (no membarrier): checked that none is made\n");
    process_barriers = 0;
    waits_before_barrier = -1;
    CHECK_EQ(shared_ring_wait(&cons, 20000000u), SHARED_RING_TIMEOUT); /* slept */
    CHECK_EQ(process_barriers >= 1, fenceless);
    if (fenceless) {
        CHECK_EQ(waits_before_barrier, 0); /* before the first sleep */
        CHECK(futex_waits >= 1);
    }
}

/* A real-time side's calls make no system call, but its detach is not one of them: a consumer
   asleep on its word gets the wake-up call (else it would hear of the detach only at its next
   slice). */
TEST(a_realtime_producers_detach_wakes_a_consumer_asleep_on_its_word) {
    shared_ring_options rt = SHARED_RING_OPTIONS_INIT;
    uint32_t *sleeping = (uint32_t *)(region + SRNG_OFF_CONSUMER_SLEEPING);
    rt.flags = SHARED_RING_REALTIME;
    CHECK_EQ(shared_ring_format(region, sizeof region, 1024, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&prod, region, sizeof region, &rt), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, sizeof region, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&prod, "a", 0), SHARED_RING_OK); /* answers the attach */
    __atomic_store_n(sleeping, 1u, __ATOMIC_SEQ_CST); /* the consumer, asleep */
    wake_word = sleeping;
    futex_wakes = 0;
    CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
    wake_word = NULL;
    CHECK_EQ(futex_wakes, 1);
    CHECK_EQ(__atomic_load_n(sleeping, __ATOMIC_SEQ_CST), 0u);
    CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
}

TEST(futex_wait_is_given_the_timeout_in_the_kernels_own_layout) {
    uint64_t start;
    setup();
    start = now_ns();
    CHECK_EQ(shared_ring_wait(&cons, 200000000), SHARED_RING_TIMEOUT);
    CHECK(now_ns() - start >= 200000000); /* a lower bound: slowness only adds */
    CHECK_EQ(first_timeout_sec, 0);
    /* margin: the timeout left after a 50 us spin; 50 ms allowed (1000x the
       spin, which is timed by the clock, so no slower under qemu or ASan) */
    CHECK(first_timeout_nsec > 150000000 && first_timeout_nsec <= 200000000);
    CHECK(futex_waits <= 3); /* one sleep, not thousands of short ones */
    CHECK_EQ(futex_refusals, 0);
}

TEST(timeout_beyond_a_32_bit_time_t_is_clamped_not_refused) {
    pthread_t t;
    setup();
    pthread_create(&t, NULL, write_after_30ms, NULL);
    /* 95 years: more seconds than a 32-bit time_t holds */
    CHECK_EQ(shared_ring_wait(&cons, 3000000000000000000ull), SHARED_RING_OK);
    pthread_join(t, NULL);
    CHECK(first_timeout_sec >= 0x7FFFFFFF);
    CHECK_EQ(futex_refusals, 0);
    CHECK(futex_waits <= 3);
}

TEST(forever_waits_without_a_timeout) {
    pthread_t t;
    setup();
    pthread_create(&t, NULL, write_after_30ms, NULL);
    CHECK_EQ(shared_ring_wait(&cons, SHARED_RING_FOREVER), SHARED_RING_OK);
    pthread_join(t, NULL);
    CHECK_EQ(first_timeout_sec, -1); /* no timespec was passed */
    CHECK(futex_waits >= 1 && futex_waits <= 3);
}

TEST(failing_futex_wait_naps_and_is_counted_instead_of_spinning) {
    shared_ring_stats st;
    uint64_t start;
    setup();
    fail_futex_waits = 1;
    start = now_ns();
    CHECK_EQ(shared_ring_wait(&cons, 100000000), SHARED_RING_TIMEOUT);
    CHECK(now_ns() - start >= 100000000); /* a lower bound: slowness only adds */
    /* 1 ms naps: about 100 calls in 100 ms (a busy loop makes 10^5+) */
    CHECK(futex_waits >= 10 && futex_waits <= 300);
    CHECK_EQ(shared_ring_consumer_stats(&cons, &st), SHARED_RING_OK);
    CHECK_EQ(st.wait_failures, (uint64_t)futex_waits);
}

TEST(failing_futex_wait_still_sees_data_within_a_nap) {
    pthread_t t;
    setup();
    fail_futex_waits = 1;
    pthread_create(&t, NULL, write_after_30ms, NULL);
    CHECK_EQ(shared_ring_wait(&cons, 5000000000ull), SHARED_RING_OK);
    pthread_join(t, NULL);
    CHECK(futex_waits <= 300);
}

/* A thread preempted during the spin phase wakes up past its timeout: the
   wait must end, not sleep for "timeout - elapsed" wrapped to 584 years. */
TEST(wait_already_past_its_timeout_after_spinning_times_out_at_once) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.recheck_ns = SHARED_RING_OFF; /* these tests look at the raw timeouts the OS is given */
    setup();
    o.spin_ns = 2000;
    o.flags = SHARED_RING_TAKE_BACK; /* over setup's handle, one per side */
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, sizeof region, &o), SHARED_RING_OK);
    clock_mode = CLOCK_JUMPS_1MS_PER_READ; /* every look at the clock: 1 ms later */
    CHECK_EQ(shared_ring_wait(&cons, 20000), SHARED_RING_TIMEOUT);
    CHECK_EQ(long_waits, 0);
}

TEST(clock_running_backwards_ends_a_timed_wait) {
    uint64_t start;
    setup();
    clock_mode = CLOCK_RUNS_BACKWARDS;
    start = now_ns();
    CHECK_EQ(shared_ring_wait(&cons, 10000000), SHARED_RING_TIMEOUT);
    /* margin: 10 ms of timeout, 1 s allowed (100x); what it guards against
       is a wait that never ends */
    CHECK(now_ns() - start < 1000000000u);
    CHECK_EQ(long_waits, 0);
}

#ifdef SRNG_HAVE_WAITV
/* wait_any's futex_waitv takes its deadline from the kernel's clock call. Refused (seccomp, a
   32-bit kernel before 5.1), wait_any sleeps as it does without futex_waitv, here on the doorbell
   its in-process producers ring, and for good: not in 1 ms slices at every call. The process
   remembers the refusal, so this test runs last. */
TEST(wait_any_whose_clock_call_is_refused_sleeps_as_without_futex_waitv) {
    static alignas(128) unsigned char second[SHARED_RING_HEADER_SIZE + 1024];
    shared_ring_producer p2;
    shared_ring_consumer c2;
    shared_ring_consumer *set[2];
    shared_ring_stats st;
    setup();
    set[0] = &cons;
    set[1] = &c2;
    CHECK_EQ(shared_ring_format(second, sizeof second, 1024, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&p2, second, sizeof second, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&c2, second, sizeof second, NULL), SHARED_RING_OK);
    refuse_clock = 1;
    CHECK_EQ(shared_ring_wait_any(set, 2, 300000000u), SHARED_RING_TIMEOUT);
    refuse_clock = 0;
    CHECK_EQ(shared_ring_consumer_stats(&cons, &st), SHARED_RING_OK);
    /* margin: about 7 sleeps of up to 50 ms on the doorbell in 300 ms; 1 ms slices make about
       300, 40 leaves room for early wake-ups on a loaded machine */
    CHECK(st.sleeps < 40);
    CHECK_EQ(shared_ring_detach_consumer(&c2), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&p2), SHARED_RING_OK);
}
#endif

int main(void) {
    RUN(a_realtime_producers_detach_wakes_a_consumer_asleep_on_its_word);
    RUN(a_sleeper_its_producer_publishes_to_without_a_fence_calls_membarrier_before_sleeping);
    RUN(futex_wait_is_given_the_timeout_in_the_kernels_own_layout);
    RUN(timeout_beyond_a_32_bit_time_t_is_clamped_not_refused);
    RUN(forever_waits_without_a_timeout);
    RUN(failing_futex_wait_naps_and_is_counted_instead_of_spinning);
    RUN(failing_futex_wait_still_sees_data_within_a_nap);
    RUN(wait_already_past_its_timeout_after_spinning_times_out_at_once);
    RUN(clock_running_backwards_ends_a_timed_wait);
#ifdef SRNG_HAVE_WAITV
    RUN(wait_any_whose_clock_call_is_refused_sleeps_as_without_futex_waitv); /* last: remembered */
#endif
    printf("os_wait: time_t is %u bits\n", (unsigned)(sizeof(time_t) * 8));
    return harness_summary("os_wait");
}
