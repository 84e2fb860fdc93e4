/* The header's inline fast path (shared_ring_write_bytes, claim, commit,
   shared_ring_read_some and shared_ring_read in a file that does not
   compile the implementation): it gives the same results as the implementation in
   every case it leaves to it, in the same call. Built with the
   implementation in tests/impl.c. */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

/* The inline path's fences (SRNG_FENCE: in this file, where the inline
   functions are compiled; the implementation's are in tests/impl.c) seen
   from outside: each is made, and while a test watches, it is counted
   with the positions it found stored. */
static const unsigned char *fence_watch; /* the watched region, or NULL */
static int fences;
static uint64_t fence_write_pos, fence_read_pos;
static void fast_fence(void) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (fence_watch == NULL) return;
    fences++;
    memcpy(&fence_write_pos, fence_watch + 128, 8);
    memcpy(&fence_read_pos, fence_watch + 256, 8);
}
#define SRNG_FENCE() fast_fence()

/* The implementation's write prefetches, recorded by tests/impl.c (the instruction never runs). */
extern const void *test_prefetched[64];
extern int test_prefetches;

#include "../shared_ring.h"
#include "harness.h"

#include <unistd.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef SRNG_FAST_PATH
#error "this compiler has no fast path to test"
#endif

#define CAPACITY 1024u

static _Alignas(128) unsigned char region[SHARED_RING_HEADER_SIZE + CAPACITY];
static shared_ring_producer p;
static shared_ring_consumer c;

static void setup(void) {
    shared_ring_options o = { 0 };
    o.spin_ns = SHARED_RING_OFF; /* sleepers sleep at once */
    memset(region, 0, sizeof region);
    if (shared_ring_format(region, sizeof region, CAPACITY, 0) != SHARED_RING_OK ||
        shared_ring_attach_producer(&p, region, sizeof region, &o) != SHARED_RING_OK ||
        shared_ring_attach_consumer(&c, region, sizeof region, &o) != SHARED_RING_OK)
        abort();
}

typedef struct seen {
    int count, stop_after, reentered;
    size_t lens[256];
} seen;

static int record(void *user, const void *data, size_t len) {
    seen *s = user;
    (void)data;
    if (s->count < 256) s->lens[s->count] = len;
    s->count++;
    return s->stop_after != 0 && s->count == s->stop_after;
}

TEST(a_batch_that_crosses_the_lap_end_is_read_in_one_call) {
    seen s = { 0 };
    char msg[100] = { 0 };
    int i;
    setup();
    for (i = 0; i < 8; i++) CHECK_EQ(shared_ring_write_bytes(&p, msg, 100, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 8); /* 8 x 112 bytes: near the end */
    s.count = 0;
    for (i = 0; i < 3; i++) CHECK_EQ(shared_ring_write_bytes(&p, msg, 100, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 3); /* padding, then offset 0, one call */
    CHECK_EQ(s.count, 3);
}

TEST(a_bad_record_after_good_ones_is_err_corrupt_in_the_same_call) {
    seen s = { 0 };
    uint64_t bad = ((uint64_t)(48u + 1u) << 32) | 5000u; /* published at 48, longer than allowed */
    setup();
    CHECK_EQ(shared_ring_write_bytes(&p, "one", 3, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_bytes(&p, "two", 3, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_bytes(&p, "three", 5, 0), SHARED_RING_OK);
    memcpy(region + SHARED_RING_HEADER_SIZE + 48, &bad, 8); /* a hostile producer's next header */
    CHECK_EQ(shared_ring_read_some(&c, record, &s), SHARED_RING_ERR_CORRUPT);
    CHECK_EQ(s.count, 3); /* the good ones were delivered first */
    CHECK_EQ(shared_ring_read_some(&c, record, &s), SHARED_RING_ERR_CORRUPT); /* sticky */
}

/* The inline read's own bound: a record must end within one capacity of
   read_pos, which peeked (unreleased) messages hold back. Here read_pos is
   504 and peek_pos 1032, in the next lap: a record of 504 bytes there
   would end at 1536, beyond 1528. */
TEST(a_record_ending_beyond_a_capacity_past_read_pos_is_err_corrupt_inline_too) {
    seen s = { 0 };
    char big[496] = { 0 };
    shared_ring_message m;
    uint64_t forged = ((uint64_t)(1032u | 1u) << 32) | 496u, read_pos;
    int i;
    setup();
    CHECK_EQ(shared_ring_write_bytes(&p, big, sizeof big, 0), SHARED_RING_OK); /* [0, 504) */
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 1);
    CHECK_EQ(shared_ring_write_bytes(&p, big, sizeof big, 0), SHARED_RING_OK); /* [504, 1008) */
    for (i = 0; i < 3; i++) /* [1008, 1016), [1016, 1024), [1024, 1032) */
        CHECK_EQ(shared_ring_write_bytes(&p, "", 0, 0), SHARED_RING_OK);
    for (i = 0; i < 4; i++) CHECK_EQ(shared_ring_peek(&c, &m), SHARED_RING_OK);
    memcpy(&read_pos, region + 256, 8);
    CHECK(read_pos == 504);
    memcpy(region + SHARED_RING_HEADER_SIZE + 8, &forged, 8);
    s.count = 0;
    CHECK_EQ(shared_ring_read_some(&c, record, &s), SHARED_RING_ERR_CORRUPT);
    CHECK_EQ(s.count, 0);
}

/* Does the CPU have PREFETCHW? Asked here, not of the header. */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
static int cpu_has_prefetchw(void) {
    unsigned a, b, c, d;
    return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 8)) != 0;
}
#else
static int cpu_has_prefetchw(void) { return 0; }
#endif

static size_t fill_64(void *user, void *dst, size_t max_len) {
    (void)user;
    memset(dst, 'f', 64);
    return max_len >= 64 ? 64 : max_len + 1;
}

/* After a 24-byte message, read (the producer has chosen its barrier: it saw the consumer's
   attach), thirteen 64-byte messages (72-byte records) by write_bytes (inline), by write (the
   implementation's path) or corked, each published by uncork: a publish that fences prefetches,
   for writing, the line 512 bytes past its record while that whole line lies in the known free
   room (984 bytes at first, 72 less a record: the first 5 records; at the 6th, 552 bytes hold
   the line's start but not its end). An unfenced publish (to a consumer in this process)
   prefetches nothing. The producer is told its CPU has PREFETCHW, which the recorder never runs,
   so this holds on every CPU; its attach asked the CPU (checked against CPUID here). */
static void write_thirteen_and_check_the_prefetches(int how) {
    static const char msg[64];
    seen s = { 0 };
    int i, expect_from;
    CHECK_EQ(p.prefetch_w, cpu_has_prefetchw());
    p.prefetch_w = 1;
    CHECK_EQ(shared_ring_write_bytes(&p, msg, 24, 0), SHARED_RING_OK); /* [0, 32) */
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 1);
    expect_from = p.s.fenceless ? 0 : 5;
    __atomic_store_n(&test_prefetches, 0, __ATOMIC_RELAXED);
    for (i = 1; i <= 13; i++) {
        if (how == 2) CHECK_EQ(shared_ring_cork(&p), SHARED_RING_OK);
        CHECK_EQ(how == 1 ? shared_ring_write(&p, sizeof msg, fill_64, NULL, 0)
                          : shared_ring_write_bytes(&p, msg, sizeof msg, 0),
                 SHARED_RING_OK);
        if (how == 2) CHECK_EQ(shared_ring_uncork(&p), SHARED_RING_OK);
        CHECK_EQ(__atomic_load_n(&test_prefetches, __ATOMIC_RELAXED),
                 i < expect_from ? i : expect_from);
        if (i <= expect_from)
            CHECK(test_prefetched[i - 1] == region + SHARED_RING_HEADER_SIZE + 32 + 72 * i + 512);
    }
}

TEST(a_fenced_inline_write_prefetches_the_line_512_bytes_on_within_the_free_room) {
    setup();
    write_thirteen_and_check_the_prefetches(0);
}

TEST(a_fenced_write_with_a_fill_callback_prefetches_the_line_512_bytes_on_within_the_free_room) {
    setup();
    write_thirteen_and_check_the_prefetches(1);
}

TEST(a_fenced_uncork_prefetches_the_line_512_bytes_on_within_the_free_room) {
    setup();
    write_thirteen_and_check_the_prefetches(2);
}

static int call_back_in(void *user, const void *data, size_t len) {
    seen *s = user;
    (void)data;
    (void)len;
    s->reentered = shared_ring_read_some(&c, record, s);
    s->count++;
    return 0;
}

TEST(a_callback_that_calls_back_into_its_handle_gets_err_state) {
    seen s = { 0 };
    setup();
    CHECK_EQ(shared_ring_write_bytes(&p, "x", 1, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, call_back_in, &s), 1);
    CHECK_EQ(s.reentered, SHARED_RING_ERR_STATE);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), SHARED_RING_EMPTY); /* open again after */
}

TEST(a_callback_that_says_stop_ends_the_batch_and_the_rest_comes_next) {
    seen s = { 0 };
    int i;
    setup();
    for (i = 0; i < 5; i++) CHECK_EQ(shared_ring_write_bytes(&p, "abc", 3, 0), SHARED_RING_OK);
    s.stop_after = 2;
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 2);
    s.stop_after = 0;
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 3);
}

TEST(fast_writes_and_reads_are_counted_in_the_stats) {
    shared_ring_stats ps, cs;
    seen s = { 0 };
    setup();
    CHECK_EQ(shared_ring_write_bytes(&p, "hello", 5, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_bytes(&p, "hi", 2, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 2);
    CHECK_EQ(shared_ring_producer_stats(&p, &ps), SHARED_RING_OK);
    CHECK_EQ(shared_ring_consumer_stats(&c, &cs), SHARED_RING_OK);
    CHECK(ps.messages == 2 && ps.bytes == 7 && ps.largest == 5);
    CHECK(cs.messages == 2 && cs.bytes == 7 && cs.largest == 5);
}

TEST(what_the_fast_path_leaves_gets_the_implementations_results) {
    shared_ring_producer unattached;
    seen s = { 0 };
    char big[600] = { 0 };
    memset(&unattached, 0, sizeof unattached);
    setup();
    CHECK_EQ(shared_ring_write_bytes(NULL, "x", 1, 0), SHARED_RING_ERR_HANDLE);
    CHECK_EQ(shared_ring_write_bytes(&unattached, "x", 1, 0), SHARED_RING_ERR_HANDLE);
    CHECK_EQ(shared_ring_write_bytes(&p, NULL, 1, 0), SHARED_RING_ERR_ARG);
    CHECK_EQ(shared_ring_write_bytes(&p, NULL, 0, 0), SHARED_RING_OK); /* an empty message */
    CHECK_EQ(shared_ring_write_bytes(&p, big, sizeof big, 0), SHARED_RING_ERR_TOO_BIG);
    CHECK_EQ(shared_ring_read_some(&c, NULL, NULL), SHARED_RING_ERR_ARG);
    CHECK_EQ(shared_ring_read_some(NULL, record, &s), SHARED_RING_ERR_HANDLE);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 1);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), SHARED_RING_EMPTY);
    CHECK_EQ(shared_ring_close(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_bytes(&p, "x", 1, 0), SHARED_RING_CLOSED);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), SHARED_RING_CLOSED);
}

TEST(a_pointer_to_the_function_is_the_implementation) {
    int (*write)(shared_ring_producer *, const void *, size_t, uint64_t) = shared_ring_write_bytes;
    int (*read)(shared_ring_consumer *, shared_ring_read_fn, void *) = shared_ring_read_some;
    int (*blocking_read)(shared_ring_consumer *, shared_ring_read_fn, void *, uint64_t) =
        shared_ring_read;
    seen s = { 0 };
    setup();
    CHECK_EQ(write(&p, "x", 1, 0), SHARED_RING_OK);
    CHECK_EQ(read(&c, record, &s), 1);
    CHECK_EQ(write(&p, "y", 1, 0), SHARED_RING_OK);
    CHECK_EQ(blocking_read(&c, record, &s, 0), 1);
}

static void watch_fences(void);

/* A blocking read that finds messages there neither waits nor counts a
   wait: it reads them all inline, as read_some does. Inline is seen from
   outside only in the fenced build (the producer is not fenceless there):
   the fence after its read_pos store is this file's, which the
   implementation's is not. */
TEST(a_blocking_read_with_messages_there_reads_them_all_inline) {
    seen s = { 0 };
    shared_ring_stats st;
    uint64_t read_pos;
    setup();
    CHECK_EQ(shared_ring_write_bytes(&p, "a", 1, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_bytes(&p, "bb", 2, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_bytes(&p, "ccc", 3, 0), SHARED_RING_OK);
    watch_fences();
    CHECK_EQ(shared_ring_read(&c, record, &s, SHARED_RING_FOREVER), 3);
    fence_watch = NULL;
    CHECK_EQ(s.count, 3);
    CHECK(s.lens[0] == 1 && s.lens[1] == 2 && s.lens[2] == 3);
    memcpy(&read_pos, region + 256, 8);
    CHECK(read_pos == 3 * 16);
    CHECK_EQ(shared_ring_consumer_stats(&c, &st), SHARED_RING_OK);
    CHECK(st.messages == 3 && st.waits == 0);
    if (c.s.fenceless) {
        CHECK_EQ(fences, 0);
    } else {
        CHECK_EQ(fences, 1);
        CHECK(fence_read_pos == read_pos);
    }
}

/* While it trails, a blocking read holds off first (the implementation's
   work): one message in a hold-off is a sparse stream, and trailing ends. */
TEST(a_trailing_blocking_read_holds_off_and_a_sparse_stream_ends_the_trailing) {
    seen s = { 0 };
    setup();
    CHECK_EQ(shared_ring_write_bytes(&p, "x", 1, 0), SHARED_RING_OK);
    c.trailing = 1; /* as a run of quick waits would have made it */
    CHECK_EQ(shared_ring_read(&c, record, &s, SHARED_RING_FOREVER), 1);
    CHECK_EQ(c.trailing, 0u);
}

/* Padding published (a claim at the lap's end, then a flush) with its
   record still open, behind a peeked message: the fast path stops at the
   padding, the implementation passes it and waits for the record, as a
   blocking read does; not EMPTY. Timed out, it has released nothing: the
   peeked message is still held. */
TEST(a_blocking_read_that_finds_only_padding_waits_for_the_record_after_it) {
    seen s = { 0 };
    char msg[100] = { 0 };
    shared_ring_message m;
    shared_ring_stats st;
    void *dst;
    uint64_t read_pos;
    int i;
    setup();
    for (i = 0; i < 7; i++) CHECK_EQ(shared_ring_write_bytes(&p, msg, 100, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 7); /* read_pos 784 */
    CHECK_EQ(shared_ring_write_bytes(&p, msg, 100, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_peek(&c, &m), SHARED_RING_OK); /* held: 784 to 896 */
    CHECK_EQ(shared_ring_claim(&p, 200, &dst, 0), SHARED_RING_OK); /* padding, then at 0 */
    CHECK_EQ(shared_ring_flush(&p), SHARED_RING_OK);
    s.count = 0;
    CHECK_EQ(shared_ring_read(&c, record, &s, 1000000u), SHARED_RING_TIMEOUT);
    CHECK_EQ(s.count, 0);
    memcpy(&read_pos, region + 256, 8);
    CHECK(read_pos == 784);
    CHECK_EQ(shared_ring_consumer_stats(&c, &st), SHARED_RING_OK);
    CHECK(st.waits == 1);
    memset(dst, 'y', 200);
    CHECK_EQ(shared_ring_commit(&p, 200), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read(&c, record, &s, 0), 1);
    CHECK(s.lens[0] == 200);
    memcpy(&read_pos, region + 256, 8);
    CHECK(read_pos == 1024 + 208);
}

/* A format under a live handle (misuse) leaves the old ring's records in
   the data area: a blocking read with one at its position says
   ERR_CORRUPT, as its wait always did, and delivers nothing of it. */
TEST(a_blocking_read_over_a_region_formatted_anew_is_corrupt_not_the_old_message) {
    seen s = { 0 };
    setup();
    CHECK_EQ(shared_ring_write_bytes(&p, "a", 1, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 1);
    CHECK_EQ(shared_ring_write_bytes(&p, "b", 1, 0), SHARED_RING_OK); /* unread, past 0 */
    CHECK_EQ(shared_ring_format(region, sizeof region, CAPACITY, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read(&c, record, &s, 0), SHARED_RING_ERR_CORRUPT);
    CHECK_EQ(s.count, 1);
}

static void *write_later(void *arg) {
    struct timespec d = { 0, 30000000 };
    (void)arg;
    nanosleep(&d, NULL);
    shared_ring_write_bytes(&p, "late", 4, 0);
    return NULL;
}

TEST(a_consumer_asleep_is_woken_by_a_fast_write) {
    seen s = { 0 };
    pthread_t t;
    setup();
    pthread_create(&t, NULL, write_later, NULL);
    CHECK_EQ(shared_ring_read(&c, record, &s, 5000000000u), 1); /* sleeps: spin off */
    pthread_join(t, NULL);
}

static void *read_later(void *arg) {
    struct timespec d = { 0, 30000000 };
    seen *s = arg;
    nanosleep(&d, NULL);
    while (shared_ring_read_some(&c, record, s) > 0) {
    }
    return NULL;
}

TEST(a_producer_asleep_for_room_is_woken_by_a_fast_read) {
    seen s = { 0 };
    char msg[48] = { 0 };
    pthread_t t;
    setup();
    while (shared_ring_write_bytes(&p, msg, sizeof msg, 0) == SHARED_RING_OK) {
    }
    pthread_create(&t, NULL, read_later, &s);
    CHECK_EQ(shared_ring_write_bytes(&p, msg, sizeof msg, 5000000000u), SHARED_RING_OK);
    pthread_join(t, NULL);
}

TEST(a_fast_claim_and_commit_publish_what_was_built_in_place) {
    seen s = { 0 };
    shared_ring_stats st;
    void *dst = NULL;
    setup();
    CHECK_EQ(shared_ring_claim(&p, 40, &dst, 0), SHARED_RING_OK);
    CHECK(dst == region + SHARED_RING_HEADER_SIZE + 8);
    memset(dst, 'x', 40);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), SHARED_RING_EMPTY); /* not before commit */
    CHECK_EQ(shared_ring_commit(&p, 30), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 1);
    CHECK_EQ(s.lens[0], 30);
    CHECK_EQ(shared_ring_write_bytes(&p, "after", 5, 0), SHARED_RING_OK); /* open again */
    CHECK_EQ(shared_ring_producer_stats(&p, &st), SHARED_RING_OK);
    CHECK_EQ(st.messages, 2);
    CHECK_EQ(st.bytes, 35);
}

TEST(while_a_fast_claim_is_open_writes_and_claims_are_refused_and_close_too) {
    void *dst, *again = region;
    setup();
    CHECK_EQ(shared_ring_claim(&p, 8, &dst, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_bytes(&p, "x", 1, 0), SHARED_RING_ERR_STATE);
    CHECK_EQ(shared_ring_claim(&p, 8, &again, 0), SHARED_RING_ERR_STATE);
    CHECK(again == NULL);
    CHECK_EQ(shared_ring_close(&p), SHARED_RING_ERR_STATE);
    CHECK_EQ(shared_ring_abort(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_commit(&p, 0), SHARED_RING_ERR_STATE); /* no claim now */
    CHECK_EQ(shared_ring_write_bytes(&p, "x", 1, 0), SHARED_RING_OK);
}

TEST(a_fast_commit_longer_than_the_claim_is_too_big_and_keeps_the_claim) {
    seen s = { 0 };
    void *dst;
    setup();
    CHECK_EQ(shared_ring_claim(&p, 8, &dst, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_commit(&p, 9), SHARED_RING_ERR_TOO_BIG);
    CHECK_EQ(shared_ring_commit(&p, 8), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 1);
}

TEST(a_commit_after_the_ring_was_found_corrupt_is_refused) {
    void *dst;
    uint32_t one = 1;
    setup();
    CHECK_EQ(shared_ring_claim(&p, 8, &dst, 0), SHARED_RING_OK);
    memcpy(region + 264, &one, 4); /* the consumer's corrupt flag */
    CHECK_EQ(shared_ring_flush(&p), SHARED_RING_ERR_CORRUPT);
    CHECK_EQ(shared_ring_commit(&p, 8), SHARED_RING_ERR_CORRUPT);
    CHECK_EQ(shared_ring_abort(&p), SHARED_RING_OK); /* allowed on a corrupt ring */
}

TEST(a_claim_in_a_cork_is_committed_by_the_implementation_and_published_at_uncork) {
    seen s = { 0 };
    void *dst;
    setup();
    CHECK_EQ(shared_ring_cork(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_claim(&p, 8, &dst, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_commit(&p, 8), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), SHARED_RING_EMPTY);
    CHECK_EQ(shared_ring_uncork(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 1);
}

/* `pending` holds the header the implementation keeps back while it
   publishes a record in two steps (corked, or fenced before the fast path
   knew how to fence): the inline path never touches it. */
#define UNTOUCHED 0x5555555555555555u

TEST(a_write_and_a_commit_go_inline_with_a_fence_or_without) {
    seen s = { 0 };
    void *dst;
    setup();
#ifdef SHARED_RING_NO_MEMBARRIER
    CHECK_EQ(p.s.fenceless, 0); /* this build publishes with a fence */
#endif
    CHECK_EQ(shared_ring_write_bytes(&p, "first", 5, 0), SHARED_RING_OK); /* learns the room */
    p.pending = UNTOUCHED;
    CHECK_EQ(shared_ring_write_bytes(&p, "second", 6, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_claim(&p, 16, &dst, 0), SHARED_RING_OK);
    memcpy(dst, "third", 5);
    CHECK_EQ(shared_ring_commit(&p, 5), SHARED_RING_OK);
    CHECK(p.pending == UNTOUCHED);
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 3);
    CHECK_EQ(s.lens[1], 6);
    CHECK_EQ(s.lens[2], 5);
}

static void watch_fences(void) {
    fences = 0;
    fence_write_pos = fence_read_pos = UINT64_MAX;
    fence_watch = region;
}

TEST(an_inline_write_fences_after_storing_write_pos_unless_the_consumer_is_fenceless) {
    uint64_t write_pos;
    setup();
    CHECK_EQ(shared_ring_write_bytes(&p, "first", 5, 0), SHARED_RING_OK); /* answers the attach */
    watch_fences();
    CHECK_EQ(shared_ring_write_bytes(&p, "second", 6, 0), SHARED_RING_OK);
    fence_watch = NULL;
    memcpy(&write_pos, region + 128, 8);
    if (p.s.fenceless) {
        CHECK_EQ(fences, 0); /* the consumer's membarrier fences for it */
    } else {
        CHECK_EQ(fences, 1);
        CHECK(fence_write_pos == write_pos);
    }
}

TEST(an_inline_read_fences_after_storing_read_pos_unless_the_producer_is_fenceless) {
    seen s = { 0 };
    uint64_t read_pos;
    setup();
    CHECK_EQ(shared_ring_write_bytes(&p, "x", 1, 0), SHARED_RING_OK);
    watch_fences();
    CHECK_EQ(shared_ring_read_some(&c, record, &s), 1);
    fence_watch = NULL;
    memcpy(&read_pos, region + 256, 8);
    CHECK(read_pos != 0);
    if (c.s.fenceless) {
        CHECK_EQ(fences, 0);
    } else {
        CHECK_EQ(fences, 1);
        CHECK(fence_read_pos == read_pos);
    }
}

/* The cork took the handle out of direct publishing; its uncork, with
   nothing to publish, puts it back: no fence per message for nothing. */
TEST(an_empty_cork_leaves_inline_writes_to_a_fenceless_consumer_unfenced) {
    setup();
    CHECK_EQ(shared_ring_write_bytes(&p, "first", 5, 0), SHARED_RING_OK); /* answers the attach */
    CHECK_EQ(shared_ring_cork(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_uncork(&p), SHARED_RING_OK);
    watch_fences();
    CHECK_EQ(shared_ring_write_bytes(&p, "second", 6, 0), SHARED_RING_OK);
    fence_watch = NULL;
    if (p.s.fenceless) CHECK_EQ(fences, 0);
}

int main(void) {
    alarm(60);
    RUN(a_batch_that_crosses_the_lap_end_is_read_in_one_call);
    RUN(a_bad_record_after_good_ones_is_err_corrupt_in_the_same_call);
    RUN(a_record_ending_beyond_a_capacity_past_read_pos_is_err_corrupt_inline_too);
    RUN(a_callback_that_calls_back_into_its_handle_gets_err_state);
    RUN(a_callback_that_says_stop_ends_the_batch_and_the_rest_comes_next);
    RUN(fast_writes_and_reads_are_counted_in_the_stats);
    RUN(what_the_fast_path_leaves_gets_the_implementations_results);
    RUN(a_pointer_to_the_function_is_the_implementation);
    RUN(a_blocking_read_with_messages_there_reads_them_all_inline);
    RUN(a_trailing_blocking_read_holds_off_and_a_sparse_stream_ends_the_trailing);
    RUN(a_blocking_read_that_finds_only_padding_waits_for_the_record_after_it);
    RUN(a_blocking_read_over_a_region_formatted_anew_is_corrupt_not_the_old_message);
    RUN(a_consumer_asleep_is_woken_by_a_fast_write);
    RUN(a_producer_asleep_for_room_is_woken_by_a_fast_read);
    RUN(a_fast_claim_and_commit_publish_what_was_built_in_place);
    RUN(a_write_and_a_commit_go_inline_with_a_fence_or_without);
    RUN(while_a_fast_claim_is_open_writes_and_claims_are_refused_and_close_too);
    RUN(a_fast_commit_longer_than_the_claim_is_too_big_and_keeps_the_claim);
    RUN(a_commit_after_the_ring_was_found_corrupt_is_refused);
    RUN(a_claim_in_a_cork_is_committed_by_the_implementation_and_published_at_uncork);
    RUN(an_inline_write_fences_after_storing_write_pos_unless_the_consumer_is_fenceless);
    RUN(an_inline_read_fences_after_storing_read_pos_unless_the_producer_is_fenceless);
    RUN(an_empty_cork_leaves_inline_writes_to_a_fenceless_consumer_unfenced);
    RUN(a_fenced_inline_write_prefetches_the_line_512_bytes_on_within_the_free_room);
    RUN(a_fenced_write_with_a_fill_callback_prefetches_the_line_512_bytes_on_within_the_free_room);
    RUN(a_fenced_uncork_prefetches_the_line_512_bytes_on_within_the_free_room);
    return harness_summary("fast path");
}
