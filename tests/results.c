/* Every result a public function returns is one its documentation lists.
   The lists are read from the header itself (the "Returns:" part of the
   comment above each declaration), so the docs and this test cannot drift
   apart. Each function is then called in every state a handle can be in
   (NULL, unattached, the other side's, fresh, full, claim open, corked,
   closed, corrupt, flagged corrupt by the peer, inside a callback, ...),
   with good and bad arguments. Usage: results PATH/TO/shared_ring.h */
#define _GNU_SOURCE
#define SHARED_RING_SHM
#define SHARED_RING_NOTIFIER
#ifndef TEST_IMPLEMENTATION_ELSEWHERE /* the fast-* builds: in tests/compile/impl.c */
#define SHARED_RING_IMPLEMENTATION
#endif
#include "../shared_ring.h"
#include "harness.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
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
    { "ERR_ACCESS", SHARED_RING_ERR_ACCESS },
};
#define N_RESULTS (sizeof result_names / sizeof result_names[0])

typedef struct documented {
    char function[64];
    unsigned negatives; /* bit -r for each listed result <= 0 */
    int min_count;      /* "a count >= N": counts from N up; -1: none */
    unsigned seen;      /* bit -r for each result this test got */
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
        if (strncmp(p, "descriptor >= ", 14) == 0) d->min_count = atoi(p + 14);
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

/* A refusal no call below makes (n above INT_MAX, with this number): set
   right before each call, so that a why() still saying it after a refused
   call shows the call left why() as it was. */
#define MARK_N ((size_t)INT_MAX + 4321u)
static char marker_text[200];
static void mark(void) {
    shared_ring_consumer *none = NULL;
    shared_ring_wait_any(&none, MARK_N, 0);
}

/* A refused call's why(): set by that call (not the mark), not empty. */
static void check_why(const char *function, const char *state, int r) {
    const char *why = shared_ring_why();
    if (why[0] == 0 || strcmp(why, marker_text) == 0) {
        fprintf(stderr, "  shared_ring_%s in state \"%s\" returned %s, why() says \"%s\"\n",
                function, state, shared_ring_result_string(r), why);
        harness_current_failed = 1;
    }
}

/* Is r listed for `function`? Report it with the state if not. why_set:
   whether why() was checked (-1: check it here). */
static void check_result(const char *function, const char *state, int r, int why_set) {
    documented *d = (documented *)doc_of(function);
    int ok;
    calls_checked++;
    if (d == NULL) {
        fprintf(stderr, "  shared_ring_%s: not found in the header\n", function);
        harness_current_failed = 1;
        return;
    }
    ok = r > 0    ? d->min_count >= 0 && r >= d->min_count
         : r == 0 ? (d->negatives & 1u) || d->min_count == 0
                  : r >= SHARED_RING_ERR_ACCESS && (d->negatives & (1u << -r));
    if (!ok) {
        fprintf(stderr, "  shared_ring_%s in state \"%s\" returned %d (%s), not documented\n",
                function, state, r, shared_ring_result_string(r));
        harness_current_failed = 1;
    }
    if (r < 0 && r >= SHARED_RING_ERR_ACCESS) {
        d->seen |= 1u << -r;
        if (why_set < 0) check_why(function, state, r);
        else if (!why_set) {
            fprintf(stderr, "  shared_ring_%s in state \"%s\": why() was not set\n", function, state);
            harness_current_failed = 1;
        }
    }
}
static void check_documented(const char *function, const char *state, int r) {
    check_result(function, state, r, -1);
}

/* Mark, make the call, check its result: the mark comes after any setup
   the arguments need. */
#define CHECK_CALL(function, state, call) (mark(), check_documented(function, state, (call)))

/* ---- states ------------------------------------------------------------------ */

#define CAPACITY 1024u
#define REGION_SIZE (SHARED_RING_HEADER_SIZE + CAPACITY)
/* Shared with forked children: a child that adopts a handle and dies must
   leave its owner word where this process looks. */
static unsigned char *region;
static int region_fd;                /* a memfd: the kernel's locks judge who lives */
static shared_ring_options with_file; /* the defaults, with region_fd */
static shared_ring_producer prod;
static shared_ring_consumer cons;

static int count_message(void *user, const void *data, size_t len) {
    (void)user;
    (void)data;
    (void)len;
    return 0;
}

/* The handles of the last state are dropped as a program that formats
   under them would lose them; their descriptions (and the locks on them)
   are closed here, or the new attaches would find the sides held. */
static int lost_lock = -1; /* a handle taken back holds it */
static void drop_locks(shared_ring_side *s) {
    if (s->magic != 0 && s->lock_fd > 0) close(s->lock_fd);
    if (s->magic != 0 && s->peer_fd > 0) close(s->peer_fd);
}

static void fresh(void) {
    drop_locks(&prod.s);
    drop_locks(&cons.s);
    if (lost_lock > 0) close(lost_lock);
    lost_lock = -1;
    memset(&prod, 0, sizeof prod);
    memset(&cons, 0, sizeof cons);
    CHECK_EQ(shared_ring_format(region, REGION_SIZE, CAPACITY, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&prod, region, REGION_SIZE, &with_file), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, REGION_SIZE, &with_file), SHARED_RING_OK);
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
static int p_write_bytes_huge(shared_ring_producer *p) {
    static const char big[CAPACITY] = { 0 };
    return shared_ring_write_bytes(p, big, sizeof big, 0);
}
static int p_write_str(shared_ring_producer *p) { return shared_ring_write_str(p, "abc", 0); }
static int p_write_str_timed(shared_ring_producer *p) {
    return shared_ring_write_str(p, "abc", 1000000);
}
static int p_write_str_long(shared_ring_producer *p) {
    static char long_str[CAPACITY];
    memset(long_str, 'x', sizeof long_str - 1); /* longer than max_message */
    return shared_ring_write_str(p, long_str, 0);
}
static int p_write_str_null(shared_ring_producer *p) { return shared_ring_write_str(p, NULL, 0); }
static int p_claim(shared_ring_producer *p) {
    void *out;
    int r = shared_ring_claim(p, 8, &out, 0);
    if (r == SHARED_RING_OK) shared_ring_abort(p);
    return r;
}
static int p_claim_null(shared_ring_producer *p) { return shared_ring_claim(p, 8, NULL, 0); }
static int p_claim_timed(shared_ring_producer *p) {
    void *out;
    int r = shared_ring_claim(p, 8, &out, 1000000);
    if (r == SHARED_RING_OK) shared_ring_abort(p);
    return r;
}
static int p_claim_huge(shared_ring_producer *p) {
    void *out;
    return shared_ring_claim(p, CAPACITY, &out, 0);
}
static int p_claim_aligned(shared_ring_producer *p) {
    void *out;
    int r = shared_ring_claim_aligned(p, 8, 32, &out, 0);
    if (r == SHARED_RING_OK) shared_ring_abort(p);
    return r;
}
static int p_claim_aligned_timed(shared_ring_producer *p) {
    void *out;
    int r = shared_ring_claim_aligned(p, 8, 64, &out, 1000000);
    if (r == SHARED_RING_OK) shared_ring_abort(p);
    return r;
}
static int p_claim_aligned_24(shared_ring_producer *p) {
    void *out;
    return shared_ring_claim_aligned(p, 8, 24, &out, 0);
}
static int p_claim_aligned_null(shared_ring_producer *p) {
    return shared_ring_claim_aligned(p, 8, 16, NULL, 0);
}
static int p_claim_aligned_huge(shared_ring_producer *p) {
    void *out;
    return shared_ring_claim_aligned(p, CAPACITY, 16, &out, 0);
}
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
static int p_peer_fd(shared_ring_producer *p) { return shared_ring_producer_peer_fd(p); }
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
    { "write_bytes", p_write_bytes_huge },
    { "write_str", p_write_str },
    { "write_str", p_write_str_timed },
    { "write_str", p_write_str_null },
    { "write_str", p_write_str_long },
    { "claim", p_claim },
    { "claim", p_claim_timed },
    { "claim", p_claim_null },
    { "claim", p_claim_huge },
    { "claim_aligned", p_claim_aligned },
    { "claim_aligned", p_claim_aligned_timed },
    { "claim_aligned", p_claim_aligned_24 },
    { "claim_aligned", p_claim_aligned_null },
    { "claim_aligned", p_claim_aligned_huge },
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
    { "producer_peer_fd", p_peer_fd },
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
    P_PEER_GONE,
    P_ADOPTED_ELSEWHERE,
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
    "full, the consumer's process gone",
    "adopted by a child that exited",
};

static shared_ring_producer unattached_producer;
static const producer_call *call_in_fill;
static int result_in_fill;

static size_t fill_calling(void *user, void *dst, size_t max_len) {
    (void)user;
    (void)dst;
    (void)max_len;
    mark();
    result_in_fill = call_in_fill->call(&prod);
    return 0;
}

/* The owner word of `prod` / `cons` names a process that has exited: a
   child that adopted the handle, then died. */
static void side_process_died(int producer) {
    pid_t child = harness_fork();
    int status = -1;
    if (child == 0)
        _exit((producer ? shared_ring_adopt_producer(&prod) : shared_ring_adopt_consumer(&cons)) ==
                      SHARED_RING_OK
                  ? 0
                  : 1);
    waitpid(child, &status, 0);
    if (status != 0) abort();
}

static int run_producer_call(enum producer_state st, const producer_call *call) {
    void *claim;
    fresh();
    switch (st) {
    case P_NULL: return mark(), call->call(NULL);
    case P_UNATTACHED:
        memset(&unattached_producer, 0, sizeof unattached_producer);
        return mark(), call->call(&unattached_producer);
    case P_WRONG_SIDE: return mark(), call->call((shared_ring_producer *)(void *)&cons);
    case P_FULL: {
        pthread_t t;
        int r;
        fill_ring();
        pthread_create(&t, NULL, drain_soon, NULL);
        mark();
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
    case P_PEER_GONE:
        fill_ring();
        side_process_died(0);
        break;
    case P_ADOPTED_ELSEWHERE: side_process_died(1); break;
    default: break;
    }
    mark();
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
static int c_peer_fd(shared_ring_consumer *c) { return shared_ring_consumer_peer_fd(c); }
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
    { "consumer_peer_fd", c_peer_fd },
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
    C_PEER_DETACHED,
    C_HOOKED_PEER_DETACHED,
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
    "producer detached",
    "producer detached, with wait hooks",
};

static shared_ring_consumer unattached_consumer;
static const consumer_call *call_in_read;
static int result_in_read;

static int read_calling(void *user, const void *data, size_t len) {
    (void)user;
    (void)data;
    (void)len;
    mark();
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
    o.region_fd = region_fd;
    lost_lock = cons.s.lock_fd; /* the first handle's, lost: fresh() closes it */
    CHECK_EQ(shared_ring_attach_consumer(&cons, region, REGION_SIZE, &o), SHARED_RING_OK);
}


static int run_consumer_call(enum consumer_state st, const consumer_call *call) {
    shared_ring_message m;
    void *claim;
    char buf[600] = { 0 }; /* the largest write below */
    fresh();
    switch (st) {
    case C_NULL: return mark(), call->call(NULL);
    case C_UNATTACHED:
        memset(&unattached_consumer, 0, sizeof unattached_consumer);
        return mark(), call->call(&unattached_consumer);
    case C_WRONG_SIDE: return mark(), call->call((shared_ring_consumer *)(void *)&prod);
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
    case C_PEER_GONE: side_process_died(1); break;
    case C_PEER_DETACHED: shared_ring_detach_producer(&prod); break;
    case C_HOOKED_PEER_DETACHED:
        reattach_consumer_with_hooks();
        shared_ring_detach_producer(&prod);
        break;
    default: break;
    }
    mark();
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
    shared_ring_options bad = SHARED_RING_OPTIONS_INIT, bad_fd = SHARED_RING_OPTIONS_INIT;
    shared_ring_consumer *no_ring = NULL;
    shared_ring_owners owners;
    uint32_t v;
    int kind;
    bad.resume_percent = 101;
    bad_fd.region_fd = 1;
    CHECK_CALL("format", "NULL region", shared_ring_format(NULL, sizeof other, CAPACITY, 0));
    CHECK_CALL("format", "misaligned",
                     shared_ring_format(other + 4, sizeof other - 4, CAPACITY, 0));
    CHECK_CALL("format", "too small", shared_ring_format(other, 100, CAPACITY, 0));
    CHECK_CALL("format", "capacity 1000", shared_ring_format(other, sizeof other, 1000, 0));
    CHECK_CALL("format", "max too big",
                     shared_ring_format(other, sizeof other, CAPACITY, CAPACITY));
    for (kind = 0; kind < 11; kind++) {
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
        case 8:
            v = 0x12345678;
            memcpy(other, &v, 4);
            break;                /* something else */
        case 9: o = &bad; break; /* bad options */
        default: o = &bad_fd; break; /* a region_fd that is no regular file */
        }
        CHECK_CALL("attach_producer", "some region",
                         shared_ring_attach_producer(&prod, r, size, o));
        CHECK_CALL("attach_consumer", "some region",
                         shared_ring_attach_consumer(&cons, r, size, o));
        CHECK_CALL("attach_producer_wait", "some region",
                         shared_ring_attach_producer_wait(&prod, r, size, o, kind == 5 ? 2000000 : 0));
        CHECK_CALL("attach_consumer_wait", "some region",
                         shared_ring_attach_consumer_wait(&cons, r, size, o, kind == 5 ? 0 : 2000000));
        CHECK_CALL("owners_of", "some region", shared_ring_owners_of(r, size, 0, &owners));
        CHECK_CALL("owners_of", "NULL out", shared_ring_owners_of(r, size, 0, NULL));
        CHECK_CALL("prepare", "some region", shared_ring_prepare(r, size, CAPACITY, 0, 0));
        CHECK_CALL("prepare", "capacity 0", shared_ring_prepare(r, size, 0, 0, 0));
    }
    CHECK_CALL("attach_producer_wait", "NULL handle",
                     shared_ring_attach_producer_wait(NULL, other, sizeof other, NULL, 0));
    CHECK_CALL("attach_consumer_wait", "NULL handle",
                     shared_ring_attach_consumer_wait(NULL, other, sizeof other, NULL, 0));
    CHECK_CALL("wait_any", "NULL set", shared_ring_wait_any(NULL, 1, 0));
    CHECK_CALL("wait_any", "empty set", shared_ring_wait_any(&no_ring, 0, 0));
    CHECK_CALL("wait_any", "only NULL", shared_ring_wait_any(&no_ring, 1, 0));
    CHECK_CALL("attach_producer", "NULL handle",
                     shared_ring_attach_producer(NULL, other, sizeof other, NULL));
    CHECK_CALL("attach_consumer", "NULL handle",
                     shared_ring_attach_consumer(NULL, other, sizeof other, NULL));
    memset(other, 0, sizeof other);
    CHECK_CALL("attach_producer_wait", "not formatted, no wait",
               shared_ring_attach_producer_wait(&prod, other, sizeof other, NULL, 0));
    CHECK_CALL("attach_consumer_wait", "not formatted, 2 ms",
               shared_ring_attach_consumer_wait(&cons, other, sizeof other, NULL, 2000000));
}

TEST(a_second_handle_of_a_side_and_a_stopped_prepare_are_refused_busy) {
    shared_ring_producer second_p = { 0 };
    shared_ring_consumer second_c = { 0 };
    uint64_t word;
    fresh();
    CHECK_CALL("attach_producer", "attached", shared_ring_attach_producer(&second_p, region, REGION_SIZE, NULL));
    CHECK_CALL("attach_consumer", "attached", shared_ring_attach_consumer(&second_c, region, REGION_SIZE, NULL));
    /* A live process (this one) holding the producer's word FORMATTING:
       the state bits (30-31) of our own attached word set to 2. */
    memcpy(&word, region + 640, 8);
    word = (word & ~(uint64_t)0xC0000000u) | 0x80000000u;
    memcpy(region + 640, &word, 8);
    CHECK_CALL("prepare", "held for a format by a live process",
               shared_ring_prepare(region, REGION_SIZE, CAPACITY, 0, 0));
    memset(region, 0, REGION_SIZE);
}

/* A second child's adopt, once a first child adopted the side and exited:
   the call and its why() run in the second child, which reports both. */
static void adopt_in_a_second_child(int producer) {
    pid_t child;
    int status = -1;
    fresh();
    side_process_died(producer);
    child = harness_fork();
    if (child == 0) {
        int r;
        mark();
        r = producer ? shared_ring_adopt_producer(&prod) : shared_ring_adopt_consumer(&cons);
        _exit(r >= 0 ? 0 : shared_ring_why()[0] == 0 || strcmp(shared_ring_why(), marker_text) == 0 ? 100 : -r);
    }
    waitpid(child, &status, 0);
    if (!WIFEXITED(status)) abort();
    status = WEXITSTATUS(status);
    check_result(producer ? "adopt_producer" : "adopt_consumer", "adopted by another child already",
                 status == 100 ? -1 : -status, status != 100);
}

TEST(an_aligned_claim_on_a_region_not_that_aligned_is_refused) {
    static alignas(128) unsigned char other[SHARED_RING_HEADER_SIZE + CAPACITY + 64];
    shared_ring_producer p = { 0 };
    void *out;
    CHECK_EQ(shared_ring_format(other + 8, REGION_SIZE, CAPACITY, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&p, other + 8, REGION_SIZE, NULL), SHARED_RING_OK);
    CHECK_CALL("claim_aligned", "region 8 bytes off", shared_ring_claim_aligned(&p, 8, 16, &out, 0));
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
}

/* A descriptor of a 100-byte file: smaller than a ring's header. */
static int small_file(void) {
    char path[] = "/tmp/shared_ring_results_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) abort();
    unlink(path);
    if (ftruncate(fd, 100) != 0) abort();
    return fd;
}

/* Lower the descriptor limit to what is open now (1), or put it back (0):
   the OS then refuses every new descriptor (EMFILE). */
static void with_no_descriptors_left(int on) {
    static struct rlimit saved;
    struct rlimit now;
    if (on) {
        int fd = dup(0); /* the lowest free descriptor: every one below is open */
        if (fd < 0 || getrlimit(RLIMIT_NOFILE, &saved) != 0) abort();
        close(fd);
        now = saved;
        now.rlim_cur = (rlim_t)fd;
        if (setrlimit(RLIMIT_NOFILE, &now) != 0) abort();
    } else if (setrlimit(RLIMIT_NOFILE, &saved) != 0) {
        abort();
    }
}

/* The peer of this process's handle, live in a child; the handle asks for
   its descriptor with none left to give: the OS refuses (pidfd_open). */
static void peer_fd_with_no_descriptor_left(int producer_here) {
    harness_teller t;
    pid_t child;
    fresh();
    if (producer_here) CHECK_EQ(shared_ring_detach_consumer(&cons), SHARED_RING_OK);
    else CHECK_EQ(shared_ring_detach_producer(&prod), SHARED_RING_OK);
    child = harness_fork_telling(&t);
    if (child == 0) {
        shared_ring_producer p;
        shared_ring_consumer c;
        harness_tell(&t, (producer_here ? shared_ring_attach_consumer(&c, region, REGION_SIZE, NULL)
                                        : shared_ring_attach_producer(&p, region, REGION_SIZE, NULL)) ==
                             SHARED_RING_OK);
        for (;;) pause();
    }
    if (!harness_told_ok(&t)) abort();
    with_no_descriptors_left(1);
    if (producer_here)
        CHECK_CALL("producer_peer_fd", "a live consumer process, no descriptor left",
                   shared_ring_producer_peer_fd(&prod));
    else
        CHECK_CALL("consumer_peer_fd", "a live producer process, no descriptor left",
                   shared_ring_consumer_peer_fd(&cons));
    with_no_descriptors_left(0);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

TEST(peer_fd_with_no_descriptor_left_is_a_system_error) {
    peer_fd_with_no_descriptor_left(0);
    peer_fd_with_no_descriptor_left(1);
}

TEST(an_adopt_after_another_childs_is_refused_busy) {
    adopt_in_a_second_child(1);
    adopt_in_a_second_child(0);
}

TEST(shared_memory_helpers_return_documented_results) {
    char name[64], long_name[300];
    shared_ring_shm a, b;
    size_t size = shared_ring_region_size(CAPACITY, 0);
    snprintf(name, sizeof name, "/shared_ring_results_%d", (int)getpid());
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[0] = '/';
    long_name[sizeof long_name - 1] = 0;
    CHECK_CALL("shm_open", "create", shared_ring_shm_open(&a, name, size, 0));
    CHECK_CALL("shm_open", "open", shared_ring_shm_open(&b, name, size, 0));
    CHECK_CALL("shm_close", "open", shared_ring_shm_close(&b));
    CHECK_CALL("shm_open", "other size", shared_ring_shm_open(&b, name, size * 2, 0));
    CHECK_CALL("shm_open", "size 0", shared_ring_shm_open(&b, name, 0, 0));
    CHECK_CALL("shm_close", "size 0", shared_ring_shm_close(&b));
    CHECK_CALL("shm_close", "closed twice", shared_ring_shm_close(&b));
    CHECK_CALL("shm_close", "NULL", shared_ring_shm_close(NULL));
    CHECK_CALL("shm_map_fd", "good", shared_ring_shm_map_fd(&b, dup(a.fd)));
    CHECK_CALL("shm_close", "mapped fd", shared_ring_shm_close(&b));
    CHECK_CALL("shm_map_fd", "bad fd", shared_ring_shm_map_fd(&b, -1));
    CHECK_CALL("shm_map_fd", "closed fd", shared_ring_shm_map_fd(&b, 1000));
    CHECK_CALL("shm_map_fd", "a 100-byte file", shared_ring_shm_map_fd(&b, small_file()));
    CHECK_CALL("shm_map_fd", "NULL", shared_ring_shm_map_fd(NULL, 0));
    CHECK_CALL("shm_close", "created", shared_ring_shm_close(&a));
    CHECK_CALL("shm_unlink", "exists", shared_ring_shm_unlink(name));
    CHECK_CALL("shm_unlink", "gone", shared_ring_shm_unlink(name));
    CHECK_CALL("shm_unlink", "NULL", shared_ring_shm_unlink(NULL));
    CHECK_CALL("shm_unlink", "too long", shared_ring_shm_unlink(long_name));
    CHECK_CALL("shm_open", "missing, size 0", shared_ring_shm_open(&a, name, 0, 1000000));
    CHECK_CALL("shm_open", "missing, size 0, no wait", shared_ring_shm_open(&a, name, 0, 0));
    CHECK_CALL("shm_open", "a name with a second slash", shared_ring_shm_open(&a, "/a/b", size, 0));
    CHECK_CALL("shm_open", "NULL name", shared_ring_shm_open(&a, NULL, size, 0));
    CHECK_CALL("shm_open", "too long", shared_ring_shm_open(&a, long_name, size, 0));
    CHECK_CALL("shm_open", "NULL", shared_ring_shm_open(NULL, name, size, 0));
    CHECK_CALL("shm_anonymous", "good", shared_ring_shm_anonymous(&a, size));
    CHECK_CALL("shm_prefault", "mapped", shared_ring_shm_prefault(&a));
    CHECK_CALL("shm_close", "anonymous", shared_ring_shm_close(&a));
    CHECK_CALL("shm_prefault", "closed", shared_ring_shm_prefault(&a));
    CHECK_CALL("shm_prefault", "NULL", shared_ring_shm_prefault(NULL));
    CHECK_CALL("shm_anonymous", "size 0", shared_ring_shm_anonymous(&a, 0));
    CHECK_CALL("shm_anonymous", "NULL", shared_ring_shm_anonymous(NULL, size));
    /* an object others may write (they could inject messages) */
    {
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        CHECK(fd >= 0 && fchmod(fd, 0666) == 0 && ftruncate(fd, (off_t)size) == 0);
        if (fd >= 0) close(fd);
        CHECK_CALL("shm_open", "open to others", shared_ring_shm_open(&a, name, size, 0));
        shm_unlink(name);
    }
    CHECK_EQ(shared_ring_shm_anonymous(&a, size), SHARED_RING_OK);
    close(a.fd); /* behind its back: its close of fd fails */
    CHECK_CALL("shm_close", "descriptor closed already", shared_ring_shm_close(&a));
    with_no_descriptors_left(1);
    CHECK_CALL("shm_anonymous", "no descriptor left", shared_ring_shm_anonymous(&a, size));
    with_no_descriptors_left(0);
}

TEST(notifier_calls_return_documented_results) {
    shared_ring_notifier n, named;
    char fifo_name[64], fifo_path[96];
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    snprintf(fifo_name, sizeof fifo_name, "/shared_ring_results_%d", (int)getpid());
    snprintf(fifo_path, sizeof fifo_path, "/dev/shm%s.consumer-wake", fifo_name);
    CHECK_CALL("notifier_open", "NULL", shared_ring_notifier_open(NULL));
    CHECK_CALL("notifier_open", "good", shared_ring_notifier_open(&n));
    CHECK_CALL("notifier_options", "NULL", shared_ring_notifier_options(NULL, 0, &o));
    CHECK_CALL("notifier_options", "NULL options", shared_ring_notifier_options(&n, 0, NULL));
    CHECK_CALL("notifier_options", "end 2", shared_ring_notifier_options(&n, 2, &o));
    CHECK_CALL("notifier_options", "good", shared_ring_notifier_options(&n, 1, &o));
    CHECK_CALL("notifier_clear", "NULL", shared_ring_notifier_clear(NULL, 0));
    CHECK_CALL("notifier_clear", "end -1", shared_ring_notifier_clear(&n, -1));
    CHECK_CALL("notifier_clear", "good", shared_ring_notifier_clear(&n, 0));
    CHECK_CALL("notifier_close", "NULL", shared_ring_notifier_close(NULL));
    CHECK_CALL("notifier_open_named", "NULL", shared_ring_notifier_open_named(NULL, "/x"));
    CHECK_CALL("notifier_open_named", "NULL name", shared_ring_notifier_open_named(&named, NULL));
    CHECK_CALL("notifier_open_named", "no slash", shared_ring_notifier_open_named(&named, "x"));
    CHECK_CALL("notifier_open_named", "two slashes", shared_ring_notifier_open_named(&named, "/a/b"));
    CHECK_CALL("notifier_open_named", "good", shared_ring_notifier_open_named(&named, fifo_name));
    CHECK_CALL("notifier_close", "named", shared_ring_notifier_close(&named));
    CHECK_CALL("notifier_unlink", "good", shared_ring_notifier_unlink(fifo_name));
    CHECK_CALL("notifier_unlink", "gone", shared_ring_notifier_unlink(fifo_name));
    CHECK_CALL("notifier_unlink", "NULL", shared_ring_notifier_unlink(NULL));
    /* a FIFO others may write: they could wake us at will */
    CHECK(mkfifo(fifo_path, 0600) == 0 && chmod(fifo_path, 0622) == 0);
    CHECK_CALL("notifier_open_named", "a FIFO others may write",
               shared_ring_notifier_open_named(&named, fifo_name));
    CHECK(unlink(fifo_path) == 0);
    with_no_descriptors_left(1);
    CHECK_CALL("notifier_open_named", "no descriptor left", shared_ring_notifier_open_named(&named, fifo_name));
    with_no_descriptors_left(0);
    shared_ring_notifier_unlink(fifo_name);
    close(n.fd[0]); /* behind its back: its close fails */
    CHECK_CALL("notifier_close", "descriptor closed already", shared_ring_notifier_close(&n));
    with_no_descriptors_left(1);
    CHECK_CALL("notifier_open", "no descriptor left", shared_ring_notifier_open(&n));
    with_no_descriptors_left(0);
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
        "claim_aligned",
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
        "consumer_peer_fd",
        "producer_peer_fd",
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
        "shm_prefault",
        "notifier_open",
        "notifier_options",
        "notifier_clear",
        "notifier_close",
        "notifier_open_named",
        "notifier_unlink",
    };
    size_t i;
    for (i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const documented *d = doc_of(expected[i]);
        CHECK(d != NULL && (d->negatives != 0 || d->min_count >= 0));
    }
    CHECK_EQ(n_docs, (int)(sizeof expected / sizeof expected[0]));
}

/* Known gaps: a documented result this test cannot bring about, and why. */
static const struct {
    const char *function, *result, *why;
} not_walked[] = {
    { "", "", "" }, /* none now */
};

static const char *result_name(int r) {
    size_t i;
    for (i = 0; i < N_RESULTS; i++)
        if (result_names[i].value == r) return result_names[i].name;
    return "?";
}

static int known_gap(const char *function, int r) {
    size_t i;
    for (i = 0; i < sizeof not_walked / sizeof not_walked[0]; i++)
        if (strcmp(not_walked[i].function, function) == 0 &&
            strcmp(not_walked[i].result, result_name(r)) == 0)
            return 1;
    return 0;
}

TEST(every_documented_refusal_was_walked_and_said_why) {
    int i, k;
    for (i = 0; i < n_docs; i++)
        for (k = 1; k <= -SHARED_RING_ERR_ACCESS; k++) {
            if (!(docs[i].negatives & (1u << k)) || (docs[i].seen & (1u << k))) continue;
            if (known_gap(docs[i].function, -k)) continue;
            fprintf(stderr, "  shared_ring_%s: %s is documented, but no call here returned it\n",
                    docs[i].function, result_name(-k));
            harness_current_failed = 1;
        }
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
    region_fd = memfd_create("results", MFD_CLOEXEC);
    if (region_fd < 0 || ftruncate(region_fd, REGION_SIZE) != 0) return 2;
    region = (unsigned char *)mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
                                   region_fd, 0);
    if (region == (unsigned char *)MAP_FAILED) return 2;
    with_file = shared_ring_default_options();
    with_file.region_fd = region_fd;
    mark();
    snprintf(marker_text, sizeof marker_text, "%s", shared_ring_why());
    RUN(every_int_function_has_a_documented_result_list);
    RUN(every_producer_call_in_every_state_returns_a_documented_result);
    RUN(every_consumer_call_in_every_state_returns_a_documented_result);
    RUN(format_and_attach_on_every_kind_of_region_return_documented_results);
    RUN(a_second_handle_of_a_side_and_a_stopped_prepare_are_refused_busy);
    RUN(an_adopt_after_another_childs_is_refused_busy);
    RUN(peer_fd_with_no_descriptor_left_is_a_system_error);
    RUN(an_aligned_claim_on_a_region_not_that_aligned_is_refused);
    RUN(shared_memory_helpers_return_documented_results);
    RUN(notifier_calls_return_documented_results);
    RUN(every_documented_refusal_was_walked_and_said_why);
    printf("results: %d calls checked against the lists in the header\n", calls_checked);
    return harness_summary("results");
}
