/* Every result a public function returns is one its documentation lists.
   The lists are read from the header itself (the "Returns:" part of the
   comment above each declaration), so the docs and this test cannot drift
   apart. Each function is then called in every state a handle can be in
   (NULL, unattached, the other side's, fresh, full, claim open, corked,
   closed, corrupt, flagged corrupt by the peer, inside a callback, ...),
   with good and bad arguments. Usage: results PATH/TO/shared_ring.h */
#define _GNU_SOURCE
#define SHARED_RING_SHM
#ifndef TEST_IMPLEMENTATION_ELSEWHERE /* the fast-* builds: in tests/compile/impl.c */
#define SHARED_RING_IMPLEMENTATION
#endif
#include "../shared_ring.h"
#include "harness.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdalign.h>
#include <stdlib.h>
#include <time.h>

/* ---- the documented lists ---------------------------------------------------- */

static const struct {
    const char *name;
    int value;
} result_names[] = {
    { "OK", SHARED_RING_OK },
    { "FULL", SHARED_RING_FULL },
    { "EMPTY", SHARED_RING_EMPTY },
    { "TIMEOUT", SHARED_RING_TIMEOUT },
    { "CLOSED", SHARED_RING_CLOSED },
    { "ERR_ARG", SHARED_RING_ERR_ARG },
    { "ERR_TOO_BIG", SHARED_RING_ERR_TOO_BIG },
    { "ERR_SIZE", SHARED_RING_ERR_SIZE },
    { "ERR_ALIGN", SHARED_RING_ERR_ALIGN },
    { "ERR_MAGIC", SHARED_RING_ERR_MAGIC },
    { "ERR_VERSION", SHARED_RING_ERR_VERSION },
    { "ERR_CORRUPT", SHARED_RING_ERR_CORRUPT },
    { "ERR_STATE", SHARED_RING_ERR_STATE },
    { "ERR_HANDLE", SHARED_RING_ERR_HANDLE },
    { "NOT_FORMATTED", SHARED_RING_NOT_FORMATTED },
    { "ERR_BUSY", SHARED_RING_ERR_BUSY },
    { "PEER_GONE", SHARED_RING_PEER_GONE },
    { "ERR_SYSTEM", SHARED_RING_ERR_SYSTEM },
};
#define N_RESULTS (sizeof result_names / sizeof result_names[0])

typedef struct documented {
    char function[64];
    unsigned negatives; /* bit -r for each listed result <= 0 */
    int min_count;      /* "a count >= N": counts from N up; -1: none */
} documented;

static documented docs[64];
static int n_docs;
static char *header_text;

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    long n;
    char *text;
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = (char *)malloc((size_t)n + 1);
    if (text == NULL || fread(text, 1, (size_t)n, f) != (size_t)n) exit(2);
    text[n] = 0;
    fclose(f);
    return text;
}

static int is_word_char(char ch) {
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
}

/* Parse the results named in [from, to) into d. */
static void parse_list(const char *from, const char *to, documented *d) {
    const char *p;
    size_t i;
    d->negatives = 0;
    d->min_count = -1;
    for (p = from; p < to; p++) {
        if (p > from && is_word_char(p[-1])) continue;
        if (strncmp(p, "count >= ", 9) == 0) d->min_count = atoi(p + 9);
        for (i = 0; i < N_RESULTS; i++) {
            size_t len = strlen(result_names[i].name);
            if (strncmp(p, result_names[i].name, len) == 0 && !is_word_char(p[len]))
                d->negatives |= 1u << -result_names[i].value;
        }
    }
}

/* For each `SHARED_RING_API int shared_ring_X(`: the comment above it
   (shared by a group of declarations), from "Returns (X):" or "Returns:"
   to the next "Returns" or the end of the comment. */
static void parse_header(const char *text) {
    const char *decl = text;
    static const char marker[] = "SHARED_RING_API int shared_ring_";
    while ((decl = strstr(decl, marker)) != NULL) {
        const char *name = decl + strlen(marker), *end = strchr(name, '(');
        const char *close = decl, *open, *from, *to;
        char own[80];
        documented *d = &docs[n_docs++];
        snprintf(d->function, sizeof d->function, "%.*s", (int)(end - name), name);
        while (close > text && strncmp(close, "*/", 2) != 0) close--;
        open = close;
        while (open > text && strncmp(open, "/*", 2) != 0) open--;
        snprintf(own, sizeof own, "Returns (%s):", d->function);
        from = strstr(open, own);
        if (from == NULL || from > close) from = strstr(open, "Returns:");
        if (from == NULL || from > close) {
            fprintf(stderr, "no \"Returns:\" above shared_ring_%s\n", d->function);
            harness_failed++;
            from = close;
        }
        to = strstr(from + 8, "Returns");
        if (to == NULL || to > close) to = close;
        parse_list(from + 7, to, d);
        decl = end;
    }
}

static const documented *doc_of(const char *function) {
    int i;
    for (i = 0; i < n_docs; i++)
        if (strcmp(docs[i].function, function) == 0) return &docs[i];
    return NULL;
}

static int calls_checked;

/* Is r listed for `function`? Report it with the state if not. */
static void check_documented(const char *function, const char *state, int r) {
    const documented *d = doc_of(function);
    int ok;
    calls_checked++;
    if (d == NULL) {
        fprintf(stderr, "  shared_ring_%s: not found in the header\n", function);
        harness_current_failed = 1;
        return;
    }
    ok = r > 0    ? d->min_count >= 0 && r >= d->min_count
         : r == 0 ? (d->negatives & 1u) || d->min_count == 0
                  : r >= SHARED_RING_ERR_SYSTEM && (d->negatives & (1u << -r));
    if (!ok) {
        fprintf(stderr, "  shared_ring_%s in state \"%s\" returned %d (%s), not documented\n",
                function, state, r, shared_ring_result_string(r));
        harness_current_failed = 1;
    }
}

/* ---- states ------------------------------------------------------------------ */

#define CAPACITY 1024u
static alignas(128) unsigned char region[SHARED_RING_HEADER_SIZE + CAPACITY];
static shared_ring_producer prod;
static shared_ring_consumer cons;

static int count_message(void *user, const void *data, size_t len) {
    (void)user;
    (void)data;
    (void)len;
    return 0;
}

static void fresh(void) {
    CHECK_EQ(shared_ring_format(region, sizeof region, CAPACITY, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&prod, region, sizeof region, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, sizeof region, NULL), SHARED_RING_OK);
}

/* The consumer finds a record with an impossible length. */
static void consumer_finds_corruption(void) {
    uint64_t pos;
    memcpy(&pos, region + 256, 8);
    pos = (pos | 1) << 32 | 5000u;
    memcpy(region + SHARED_RING_HEADER_SIZE + (pos >> 32 & (CAPACITY - 1) & ~(uint64_t)7), &pos, 8);
    shared_ring_read_some(&cons, count_message, NULL);
}

static void fill_ring(void) {
    char buf[56] = { 0 };
    while (shared_ring_write_bytes(&prod, buf, sizeof buf, 0) == SHARED_RING_OK) {
    }
}

/* A drainer for the "full" state, so that blocking calls return. */
static void *drain_soon(void *arg) {
    (void)arg;
    nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
    shared_ring_read_some(&cons, count_message, NULL);
    return NULL;
}

/* ---- producer calls ------------------------------------------------------------- */

typedef struct producer_call {
    const char *function;
    int (*call)(shared_ring_producer *p);
} producer_call;

static size_t fill_three(void *user, void *dst, size_t max_len) {
    (void)user;
    memset(dst, 'f', max_len < 3 ? max_len : 3);
    return max_len < 3 ? max_len : 3;
}
static size_t fill_too_much(void *user, void *dst, size_t max_len) {
    (void)user;
    (void)dst;
    return max_len + 1;
}
static int p_write(shared_ring_producer *p) {
    return shared_ring_write(p, 8, fill_three, NULL, SHARED_RING_FOREVER);
}
static int p_write_null(shared_ring_producer *p) {
    return shared_ring_write(p, 8, NULL, NULL, SHARED_RING_FOREVER);
}
static int p_write_overfill(shared_ring_producer *p) {
    return shared_ring_write(p, 8, fill_too_much, NULL, SHARED_RING_FOREVER);
}
static int p_write_no_wait(shared_ring_producer *p) {
    return shared_ring_write(p, 8, fill_three, NULL, 0);
}
static int p_write_huge(shared_ring_producer *p) {
    return shared_ring_write(p, (size_t)1 << 20, fill_three, NULL, 0);
}
static int p_write_timed(shared_ring_producer *p) {
    return shared_ring_write(p, 8, fill_three, NULL, 1000000);
}
static int p_write_bytes(shared_ring_producer *p) {
    return shared_ring_write_bytes(p, "abc", 3, 0);
}
static int p_write_bytes_timed(shared_ring_producer *p) {
    return shared_ring_write_bytes(p, "abc", 3, 1000000);
}
static int p_write_bytes_null(shared_ring_producer *p) {
    return shared_ring_write_bytes(p, NULL, 3, 0);
}
static int p_write_str(shared_ring_producer *p) { return shared_ring_write_str(p, "abc", 0); }
static int p_write_str_null(shared_ring_producer *p) { return shared_ring_write_str(p, NULL, 0); }
static int p_claim(shared_ring_producer *p) {
    void *out;
    int r = shared_ring_claim(p, 8, &out, 0);
    if (r == SHARED_RING_OK) shared_ring_abort(p);
    return r;
}
static int p_claim_null(shared_ring_producer *p) { return shared_ring_claim(p, 8, NULL, 0); }
static int p_commit(shared_ring_producer *p) { return shared_ring_commit(p, 0); }
static int p_commit_too_long(shared_ring_producer *p) { return shared_ring_commit(p, 1u << 20); }
static int p_abort(shared_ring_producer *p) { return shared_ring_abort(p); }
static int p_cork(shared_ring_producer *p) { return shared_ring_cork(p); }
static int p_uncork(shared_ring_producer *p) { return shared_ring_uncork(p); }
static int p_flush(shared_ring_producer *p) { return shared_ring_flush(p); }
static int p_close(shared_ring_producer *p) { return shared_ring_close(p); }
static int p_stats(shared_ring_producer *p) {
    shared_ring_stats st;
    return shared_ring_producer_stats(p, &st);
}
static int p_stats_null(shared_ring_producer *p) { return shared_ring_producer_stats(p, NULL); }
static int p_usage(shared_ring_producer *p) {
    shared_ring_usage u;
    return shared_ring_producer_usage(p, &u);
}
static int p_usage_null(shared_ring_producer *p) { return shared_ring_producer_usage(p, NULL); }
static int p_detach(shared_ring_producer *p) { return shared_ring_detach_producer(p); }
static int p_adopt(shared_ring_producer *p) { return shared_ring_adopt_producer(p); }

static const producer_call producer_calls[] = {
    { "write", p_write },
    { "write", p_write_null },
    { "write", p_write_overfill },
    { "write", p_write_no_wait },
    { "write", p_write_huge },
    { "write", p_write_timed },
    { "write_bytes", p_write_bytes },
    { "write_bytes", p_write_bytes_timed },
    { "write_bytes", p_write_bytes_null },
    { "write_str", p_write_str },
    { "write_str", p_write_str_null },
    { "claim", p_claim },
    { "claim", p_claim_null },
    { "commit", p_commit },
    { "commit", p_commit_too_long },
    { "abort", p_abort },
    { "cork", p_cork },
    { "uncork", p_uncork },
    { "flush", p_flush },
    { "close", p_close },
    { "producer_stats", p_stats },
    { "producer_stats", p_stats_null },
    { "producer_usage", p_usage },
    { "producer_usage", p_usage_null },
    { "detach_producer", p_detach },
    { "adopt_producer", p_adopt },
};
#define N_PRODUCER_CALLS (sizeof producer_calls / sizeof producer_calls[0])

enum producer_state {
    P_NULL,
    P_UNATTACHED,
    P_WRONG_SIDE,
    P_FRESH,
    P_FULL,
    P_CLAIM_OPEN,
    P_CORKED,
    P_CLOSED,
    P_BROKEN,
    P_FLAGGED,
    P_IN_FILL,
    P_STATES
};
static const char *producer_state_names[] = {
    "NULL",
    "unattached",
    "consumer's handle",
    "fresh",
    "full",
    "claim open",
    "corked",
    "closed",
    "broken",
    "flagged corrupt by the consumer",
    "inside fill",
};

static shared_ring_producer unattached_producer;
static const producer_call *call_in_fill;
static int result_in_fill;

static size_t fill_calling(void *user, void *dst, size_t max_len) {
    (void)user;
    (void)dst;
    (void)max_len;
    result_in_fill = call_in_fill->call(&prod);
    return 0;
}

static int run_producer_call(enum producer_state st, const producer_call *call) {
    void *claim;
    fresh();
    switch (st) {
    case P_NULL: return call->call(NULL);
    case P_UNATTACHED:
        memset(&unattached_producer, 0, sizeof unattached_producer);
        return call->call(&unattached_producer);
    case P_WRONG_SIDE: return call->call((shared_ring_producer *)(void *)&cons);
    case P_FULL: {
        pthread_t t;
        int r;
        fill_ring();
        pthread_create(&t, NULL, drain_soon, NULL);
        r = call->call(&prod);
        pthread_join(t, NULL);
        return r;
    }
    case P_CLAIM_OPEN: shared_ring_claim(&prod, 8, &claim, 0); break;
    case P_CORKED: shared_ring_cork(&prod); break;
    case P_CLOSED: shared_ring_close(&prod); break;
    case P_BROKEN:
        consumer_finds_corruption();
        shared_ring_flush(&prod);
        break;
    case P_FLAGGED: consumer_finds_corruption(); break;
    case P_IN_FILL:
        call_in_fill = call;
        result_in_fill = 1;
        shared_ring_write(&prod, 8, fill_calling, NULL, SHARED_RING_FOREVER);
        return result_in_fill;
    default: break;
    }
    return call->call(&prod);
}

TEST(every_producer_call_in_every_state_returns_a_documented_result) {
    int st;
    size_t i;
    for (st = 0; st < P_STATES; st++)
        for (i = 0; i < N_PRODUCER_CALLS; i++)
            check_documented(producer_calls[i].function, producer_state_names[st],
                             run_producer_call((enum producer_state)st, &producer_calls[i]));
}

/* ---- consumer calls --------------------------------------------------------- */

typedef struct consumer_call {
    const char *function;
    int (*call)(shared_ring_consumer *c);
} consumer_call;

static int c_read_some(shared_ring_consumer *c) {
    return shared_ring_read_some(c, count_message, NULL);
}
static int c_read_some_null(shared_ring_consumer *c) {
    return shared_ring_read_some(c, NULL, NULL);
}
static int c_read(shared_ring_consumer *c) { return shared_ring_read(c, count_message, NULL, 0); }
static int c_read_timed(shared_ring_consumer *c) {
    return shared_ring_read(c, count_message, NULL, 1000000);
}
static int c_read_null(shared_ring_consumer *c) { return shared_ring_read(c, NULL, NULL, 0); }
static int c_wait(shared_ring_consumer *c) { return shared_ring_wait(c, 0); }
static int c_wait_timed(shared_ring_consumer *c) { return shared_ring_wait(c, 1000000); }
static int c_peek(shared_ring_consumer *c) {
    shared_ring_message m;
    return shared_ring_peek(c, &m);
}
static int c_peek_null(shared_ring_consumer *c) { return shared_ring_peek(c, NULL); }
static int c_release(shared_ring_consumer *c) { return shared_ring_release(c); }
static int c_stats(shared_ring_consumer *c) {
    shared_ring_stats st;
    return shared_ring_consumer_stats(c, &st);
}
static int c_stats_null(shared_ring_consumer *c) { return shared_ring_consumer_stats(c, NULL); }
static int c_usage(shared_ring_consumer *c) {
    shared_ring_usage u;
    return shared_ring_consumer_usage(c, &u);
}
static int c_usage_null(shared_ring_consumer *c) { return shared_ring_consumer_usage(c, NULL); }
static int c_arm(shared_ring_consumer *c) { return shared_ring_arm(c); }
static int c_detach(shared_ring_consumer *c) { return shared_ring_detach_consumer(c); }
static int c_adopt(shared_ring_consumer *c) { return shared_ring_adopt_consumer(c); }
static int c_wait_any(shared_ring_consumer *c) {
    shared_ring_consumer *set[2] = { NULL, c };
    return shared_ring_wait_any(set, 2, 0);
}
static int c_wait_any_timed(shared_ring_consumer *c) {
    shared_ring_consumer *set[1] = { c };
    return shared_ring_wait_any(set, 1, 1000000);
}

static const consumer_call consumer_calls[] = {
    { "read_some", c_read_some },
    { "read_some", c_read_some_null },
    { "read", c_read },
    { "read", c_read_timed },
    { "read", c_read_null },
    { "wait", c_wait },
    { "wait", c_wait_timed },
    { "peek", c_peek },
    { "peek", c_peek_null },
    { "release", c_release },
    { "consumer_stats", c_stats },
    { "consumer_stats", c_stats_null },
    { "consumer_usage", c_usage },
    { "consumer_usage", c_usage_null },
    { "arm", c_arm },
    { "detach_consumer", c_detach },
    { "adopt_consumer", c_adopt },
    { "wait_any", c_wait_any },
    { "wait_any", c_wait_any_timed },
};
#define N_CONSUMER_CALLS (sizeof consumer_calls / sizeof consumer_calls[0])

enum consumer_state {
    C_NULL,
    C_UNATTACHED,
    C_WRONG_SIDE,
    C_EMPTY,
    C_DATA,
    C_PEEKED,
    C_PADDING_ONLY,
    C_CLOSED_WITH_DATA,
    C_CLOSED,
    C_BROKEN,
    C_IN_READ,
    C_HOOKED_EMPTY,
    C_HOOKED_DATA,
    C_HOOKED_CLOSED,
    C_PEER_GONE,
    C_STATES
};
static const char *consumer_state_names[] = {
    "NULL",
    "unattached",
    "producer's handle",
    "empty",
    "data",
    "peeked",
    "padding only",
    "closed with data",
    "closed and drained",
    "broken",
    "inside read callback",
    "empty, with wait hooks",
    "data, with wait hooks",
    "closed and drained, with wait hooks",
    "producer's process gone",
};

static shared_ring_consumer unattached_consumer;
static const consumer_call *call_in_read;
static int result_in_read;

static int read_calling(void *user, const void *data, size_t len) {
    (void)user;
    (void)data;
    (void)len;
    result_in_read = call_in_read->call(&cons);
    return 0;
}

static void ignore_wait(void *user, void *addr, uint32_t expected, uint64_t timeout_ns) {
    (void)user;
    (void)addr;
    (void)expected;
    (void)timeout_ns;
}
static void ignore_wake(void *user, void *addr) {
    (void)user;
    (void)addr;
}

/* The consumer again, with wait hooks (what an event loop uses). */
static void reattach_consumer_with_hooks(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.wait = ignore_wait;
    o.wake = ignore_wake;
    o.flags = SHARED_RING_TAKE_BACK; /* over the first handle, one per side */
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, sizeof region, &o), SHARED_RING_OK);
}

/* The producer's owner word names a process that has exited: a child
   that adopted the producer's handle, then died. */
static void producer_process_died(void) {
    pid_t child = harness_fork();
    int status = -1;
    if (child == 0) _exit(shared_ring_adopt_producer(&prod) == SHARED_RING_OK ? 0 : 1);
    waitpid(child, &status, 0);
    if (status != 0) abort();
}

static int run_consumer_call(enum consumer_state st, const consumer_call *call) {
    shared_ring_message m;
    void *claim;
    char buf[600] = { 0 }; /* the largest write below */
    fresh();
    switch (st) {
    case C_NULL: return call->call(NULL);
    case C_UNATTACHED:
        memset(&unattached_consumer, 0, sizeof unattached_consumer);
        return call->call(&unattached_consumer);
    case C_WRONG_SIDE: return call->call((shared_ring_consumer *)(void *)&prod);
    case C_DATA: shared_ring_write_bytes(&prod, "abc", 3, 0); break;
    case C_PEEKED:
        shared_ring_write_bytes(&prod, "abc", 3, 0);
        shared_ring_peek(&cons, &m);
        break;
    case C_PADDING_ONLY: /* an aborted claim at the wrap: padding, then nothing */
        shared_ring_write_bytes(&prod, buf, 3 * 200, 0);
        shared_ring_read_some(&cons, count_message, NULL);
        shared_ring_claim(&prod, 400, &claim, 0);
        shared_ring_abort(&prod);
        shared_ring_flush(&prod);
        break;
    case C_CLOSED_WITH_DATA:
        shared_ring_write_bytes(&prod, "abc", 3, 0);
        shared_ring_close(&prod);
        break;
    case C_CLOSED:
        shared_ring_close(&prod);
        shared_ring_read_some(&cons, count_message, NULL);
        break;
    case C_BROKEN: consumer_finds_corruption(); break;
    case C_IN_READ:
        shared_ring_write_bytes(&prod, "abc", 3, 0);
        call_in_read = call;
        result_in_read = 1;
        shared_ring_read_some(&cons, read_calling, NULL);
        return result_in_read;
    case C_HOOKED_EMPTY: reattach_consumer_with_hooks(); break;
    case C_HOOKED_DATA:
        reattach_consumer_with_hooks();
        shared_ring_write_bytes(&prod, "abc", 3, 0);
        break;
    case C_HOOKED_CLOSED:
        reattach_consumer_with_hooks();
        shared_ring_close(&prod);
        break;
    case C_PEER_GONE: producer_process_died(); break;
    default: break;
    }
    return call->call(&cons);
}

TEST(every_consumer_call_in_every_state_returns_a_documented_result) {
    int st;
    size_t i;
    for (st = 0; st < C_STATES; st++)
        for (i = 0; i < N_CONSUMER_CALLS; i++)
            check_documented(consumer_calls[i].function, consumer_state_names[st],
                             run_consumer_call((enum consumer_state)st, &consumer_calls[i]));
}

/* ---- setup calls -------------------------------------------------------------- */

TEST(format_and_attach_on_every_kind_of_region_return_documented_results) {
    static alignas(128) unsigned char other[SHARED_RING_HEADER_SIZE + CAPACITY];
    shared_ring_options bad = SHARED_RING_OPTIONS_INIT;
    shared_ring_consumer *no_ring = NULL;
    shared_ring_owners owners;
    uint32_t v;
    int kind;
    bad.resume_percent = 101;
    check_documented("format", "NULL region", shared_ring_format(NULL, sizeof other, CAPACITY, 0));
    check_documented("format", "misaligned",
                     shared_ring_format(other + 4, sizeof other - 4, CAPACITY, 0));
    check_documented("format", "too small", shared_ring_format(other, 100, CAPACITY, 0));
    check_documented("format", "capacity 1000", shared_ring_format(other, sizeof other, 1000, 0));
    check_documented("format", "max too big",
                     shared_ring_format(other, sizeof other, CAPACITY, CAPACITY));
    for (kind = 0; kind < 9; kind++) {
        unsigned char *r = other;
        size_t size = sizeof other;
        const shared_ring_options *o = NULL;
        shared_ring_format(other, sizeof other, CAPACITY, 0);
        switch (kind) {
        case 0: break;           /* good */
        case 1: r = NULL; break; /* NULL */
        case 2:
            r = other + 4;
            size -= 4;
            break;                              /* misaligned */
        case 3: size = 200; break;              /* shorter than a header */
        case 4: size = sizeof other - 8; break; /* shorter than it says */
        case 5: memset(other, 0, 4); break;     /* not formatted */
        case 6:
            v = 1;
            memcpy(other + 4, &v, 4);
            break; /* layout 1 */
        case 7:
            v = 100000;
            memcpy(other + 16, &v, 4);
            break;                /* max_message too big */
        default: o = &bad; break; /* bad options */
        }
        check_documented("attach_producer", "some region",
                         shared_ring_attach_producer(&prod, r, size, o));
        check_documented("attach_consumer", "some region",
                         shared_ring_attach_consumer(&cons, r, size, o));
        check_documented("attach_producer_wait", "some region",
                         shared_ring_attach_producer_wait(&prod, r, size, o, 0));
        check_documented("attach_consumer_wait", "some region",
                         shared_ring_attach_consumer_wait(&cons, r, size, o, 2000000));
        check_documented("owners_of", "some region", shared_ring_owners_of(r, size, &owners));
        check_documented("owners_of", "NULL out", shared_ring_owners_of(r, size, NULL));
        check_documented("prepare", "some region", shared_ring_prepare(r, size, CAPACITY, 0));
        check_documented("prepare", "capacity 0", shared_ring_prepare(r, size, 0, 0));
    }
    check_documented("attach_producer_wait", "NULL handle",
                     shared_ring_attach_producer_wait(NULL, other, sizeof other, NULL, 0));
    check_documented("attach_consumer_wait", "NULL handle",
                     shared_ring_attach_consumer_wait(NULL, other, sizeof other, NULL, 0));
    check_documented("wait_any", "NULL set", shared_ring_wait_any(NULL, 1, 0));
    check_documented("wait_any", "empty set", shared_ring_wait_any(&no_ring, 0, 0));
    check_documented("wait_any", "only NULL", shared_ring_wait_any(&no_ring, 1, 0));
    check_documented("attach_producer", "NULL handle",
                     shared_ring_attach_producer(NULL, other, sizeof other, NULL));
    check_documented("attach_consumer", "NULL handle",
                     shared_ring_attach_consumer(NULL, other, sizeof other, NULL));
}

TEST(shared_memory_helpers_return_documented_results) {
    char name[64], long_name[300];
    shared_ring_shm a, b;
    size_t size = shared_ring_region_size(CAPACITY, 0);
    snprintf(name, sizeof name, "/shared_ring_results_%d", (int)getpid());
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[0] = '/';
    long_name[sizeof long_name - 1] = 0;
    check_documented("shm_open", "create", shared_ring_shm_open(&a, name, size, 0));
    check_documented("shm_open", "open", shared_ring_shm_open(&b, name, size, 0));
    check_documented("shm_close", "open", shared_ring_shm_close(&b));
    check_documented("shm_open", "other size", shared_ring_shm_open(&b, name, size * 2, 0));
    check_documented("shm_open", "size 0", shared_ring_shm_open(&b, name, 0, 0));
    check_documented("shm_close", "size 0", shared_ring_shm_close(&b));
    check_documented("shm_close", "closed twice", shared_ring_shm_close(&b));
    check_documented("shm_close", "NULL", shared_ring_shm_close(NULL));
    check_documented("shm_map_fd", "good", shared_ring_shm_map_fd(&b, dup(a.fd)));
    check_documented("shm_close", "mapped fd", shared_ring_shm_close(&b));
    check_documented("shm_map_fd", "bad fd", shared_ring_shm_map_fd(&b, -1));
    check_documented("shm_map_fd", "closed fd", shared_ring_shm_map_fd(&b, 1000));
    check_documented("shm_map_fd", "NULL", shared_ring_shm_map_fd(NULL, 0));
    check_documented("shm_close", "created", shared_ring_shm_close(&a));
    check_documented("shm_unlink", "exists", shared_ring_shm_unlink(name));
    check_documented("shm_unlink", "gone", shared_ring_shm_unlink(name));
    check_documented("shm_unlink", "NULL", shared_ring_shm_unlink(NULL));
    check_documented("shm_unlink", "too long", shared_ring_shm_unlink(long_name));
    check_documented("shm_open", "missing, size 0", shared_ring_shm_open(&a, name, 0, 1000000));
    check_documented("shm_open", "NULL name", shared_ring_shm_open(&a, NULL, size, 0));
    check_documented("shm_open", "too long", shared_ring_shm_open(&a, long_name, size, 0));
    check_documented("shm_open", "NULL", shared_ring_shm_open(NULL, name, size, 0));
    check_documented("shm_anonymous", "good", shared_ring_shm_anonymous(&a, size));
    check_documented("shm_close", "anonymous", shared_ring_shm_close(&a));
    check_documented("shm_anonymous", "size 0", shared_ring_shm_anonymous(&a, 0));
    check_documented("shm_anonymous", "NULL", shared_ring_shm_anonymous(NULL, size));
}

TEST(every_int_function_has_a_documented_result_list) {
    static const char *const expected[] = {
        "format",
        "attach_producer",
        "attach_consumer",
        "write",
        "write_bytes",
        "write_str",
        "claim",
        "commit",
        "abort",
        "cork",
        "uncork",
        "flush",
        "close",
        "read_some",
        "read",
        "wait",
        "peek",
        "release",
        "producer_stats",
        "consumer_stats",
        "producer_usage",
        "consumer_usage",
        "arm",
        "attach_producer_wait",
        "attach_consumer_wait",
        "prepare",
        "wait_any",
        "detach_producer",
        "detach_consumer",
        "adopt_producer",
        "adopt_consumer",
        "owners_of",
        "shm_open",
        "shm_anonymous",
        "shm_map_fd",
        "shm_close",
        "shm_unlink",
        "notifier_open",
        "notifier_options",
        "notifier_clear",
        "notifier_close",
    };
    size_t i;
    for (i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const documented *d = doc_of(expected[i]);
        CHECK(d != NULL && (d->negatives != 0 || d->min_count >= 0));
    }
    CHECK_EQ(n_docs, (int)(sizeof expected / sizeof expected[0]));
}

int main(int argc, char **argv) {
    header_text = read_file(argc > 1 ? argv[1] : "shared_ring.h");
    if (header_text == NULL) {
        fprintf(stderr, "results: cannot read the header (give its path)\n");
        return 2;
    }
    /* Only the declarations: the implementation repeats each signature. */
    if (strstr(header_text, "#endif /* SHARED_RING_H */") != NULL)
        *strstr(header_text, "#endif /* SHARED_RING_H */") = 0;
    parse_header(header_text);
    RUN(every_int_function_has_a_documented_result_list);
    RUN(every_producer_call_in_every_state_returns_a_documented_result);
    RUN(every_consumer_call_in_every_state_returns_a_documented_result);
    RUN(format_and_attach_on_every_kind_of_region_return_documented_results);
    RUN(shared_memory_helpers_return_documented_results);
    printf("results: %d calls checked against the lists in the header\n", calls_checked);
    return harness_summary("results");
}
