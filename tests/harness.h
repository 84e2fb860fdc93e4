/* Minimal test harness: TEST(name) defines a test, RUN(name) runs it, and
   harness_summary() prints "N passed, N failed" and gives the exit status.
   With HARNESS_FAIL_FAST in the environment the program exits at the first
   failed test (tests/mutants.sh: one failure decides, the rest is time). */
#ifndef TESTS_HARNESS_H
#define TESTS_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_passed, harness_failed, harness_current_failed;
static const char *harness_current;

#define TEST(name) static void name(void)

#define CHECK(cond)                                                                \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "  %s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, \
                    harness_current, #cond);                                       \
            harness_current_failed = 1;                                            \
        }                                                                          \
    } while (0)

#define CHECK_EQ(actual, expected)                                                               \
    do {                                                                                         \
        long long harness_a = (long long)(actual), harness_e = (long long)(expected);            \
        if (harness_a != harness_e) {                                                            \
            fprintf(stderr, "  %s:%d: %s: %s is %lld, expected %s (%lld)\n", __FILE__, __LINE__, \
                    harness_current, #actual, harness_a, #expected, harness_e);                  \
            harness_current_failed = 1;                                                          \
        }                                                                                        \
    } while (0)

#define RUN(name) harness_run(#name, name)

static void harness_run(const char *name, void (*fn)(void)) {
    harness_current = name;
    harness_current_failed = 0;
    fn();
    if (harness_current_failed) {
        harness_failed++;
        fprintf(stderr, "FAIL %s\n", name);
        if (getenv("HARNESS_FAIL_FAST") != NULL) exit(1);
    } else {
        harness_passed++;
    }
}

static int harness_summary(const char *suite) {
    printf("%s: %d passed, %d failed\n", suite, harness_passed, harness_failed);
    return harness_failed == 0 ? 0 : 1;
}

#ifndef _WIN32
#include <poll.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>
/* fork(), aborting the test program when it fails: a -1 taken for a
   child's pid would turn a test's kill(child, SIGKILL) into kill(-1, ...),
   which signals every process the test may signal. */
static inline pid_t harness_fork(void) {
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        abort();
    }
    return pid;
}

/* A child that tells its parent one thing, once, over a pipe (that its
   attach returned OK, say): only then may the parent kill it and count on
   a peer, not a claim. Each side closes the end it does not use, so a
   child that exits unheard ends the parent's wait at once. */
typedef struct harness_teller {
    int fd[2];
} harness_teller;

static inline pid_t harness_fork_telling(harness_teller *t) {
    pid_t pid;
    if (pipe(t->fd) != 0) abort();
    pid = harness_fork();
    close(t->fd[pid == 0 ? 0 : 1]);
    return pid;
}

/* Child: tell `ok` (nonzero: it went as it should). */
static inline void harness_tell(harness_teller *t, int ok) {
    char said = ok ? 1 : 0;
    if (write(t->fd[1], &said, 1) != 1) _exit(6);
}

/* Parent: 1 when the child told OK within 10 s; 0 when it told otherwise,
   exited unheard or stayed silent. Closes the parent's end. */
static inline int harness_told_ok(harness_teller *t) {
    struct pollfd pfd;
    char said = 0;
    int ok;
    pfd.fd = t->fd[0];
    pfd.events = POLLIN;
    ok = poll(&pfd, 1, 10000) == 1 && read(t->fd[0], &said, 1) == 1 && said == 1;
    close(t->fd[0]);
    return ok;
}
#endif

#if defined(SHARED_RING_IMPLEMENTATION) && defined(SRNG_HAVE_IDENTITY) && defined(__linux__)
/* Write `owner` into the owner word of the side whose block is at id_off,
   as a process of our pid namespace would have: with an identity slot
   that names it. */
static inline void harness_fake_owner(unsigned char *region, unsigned id_off, uint64_t owner) {
    srng_write_identity(region, id_off, owner);
    memcpy(region + id_off, &owner, 8);
}
#endif

#endif
