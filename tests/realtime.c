/* A real-time side (SHARED_RING_REALTIME) makes no system call. Its thread
   runs under a seccomp filter that allows nothing but clock_nanosleep (its
   own pacing) and exit: any other system call raises SIGSYS, whose handler
   records the call's number and ends the process. The thread is an audio
   callback's shape: every 500 us it reads control messages from ring A
   (read_some, peek + release), and writes 32-byte meters to ring B
   (write_bytes, write_str, write and claim with timeout 0, claim_aligned,
   commit, abort, cork, uncork, flush), and reads both sides' stats and
   usage, for as long as its peer
   goes through three generations:
     1. default options: its consumer sleeps in read, its producer blocks
        on the full ring A; then it detaches;
     2. POLL_ONLY: it naps; then it detaches (threads), or is killed with
        SIGKILL while it writes (processes);
     3. default options again, taking the side over (processes: from the
        dead one): it closes A, which ends the run.
   In threads (peer threads in the real-time thread's process) and between
   processes, there with and without the real-time handle's peer fd asked
   for. Every message arrives once, in order, whole (each generation
   numbers its own). Where seccomp filters cannot be installed: SKIP. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

#if defined(__x86_64__) && !defined(__ILP32__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define NATIVE_ARCH AUDIT_ARCH_I386
#endif

#define CAP_A 16384u  /* control messages, up to 8 KiB: fills often */
#define CAP_B 4096u   /* meters */
#define GENERATIONS 3
#define PHASE_NS 400000000ull

/* Shared by every process of a run. */
#define SIZE_A (CAP_A + SHARED_RING_HEADER_SIZE)
#define SIZE_B (CAP_B + SHARED_RING_HEADER_SIZE)

/* The rings map memfds of their own (options.region_fd names them: the
   kernel's locks tell a killed peer's death, and let the next take over). */
typedef struct shared {
    unsigned char *a, *b; /* mapped before the forks: the same in every process */
    int fd_a, fd_b;
    volatile int bad_syscall;     /* the call that raised SIGSYS, or -1 */
    volatile int skip;            /* 1: no seccomp here */
    volatile int done;            /* the real-time thread saw A closed */
    volatile int unexpected;      /* results no call should give */
    volatile int last_unexpected; /* the last of them */
    volatile int bad_messages;    /* out of order, torn, or of no generation */
    volatile int published[GENERATIONS + 1]; /* per generation: OK writes */
    volatile int delivered[GENERATIONS + 1];
    volatile int meters_read, meters_full, iterations, peer_gone_heard;
    volatile uint32_t rt_wakes;   /* stats.wakes of the real-time handles,
                                     less what their attach made */
} shared;

static shared *sh;

/* ---- the real-time thread ------------------------------------------------------ */

static void on_sigsys(int sig, siginfo_t *si, void *ctx) {
    (void)sig, (void)ctx;
    sh->bad_syscall = si->si_syscall;
    syscall(SYS_exit_group, 99);
}

static int install_filter(void) {
#ifdef NATIVE_ARCH
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_nanosleep, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
#else
    return -1;
#endif
}

/* A control message: generation, its number in that generation, then a
   pattern over the whole length. */
static size_t control_length(int seq) { return 16u + (size_t)(seq * 7919) % 8169u; } /* to 8184 */
static void fill_control(unsigned char *m, size_t len, int gen, int seq) {
    size_t i;
    m[0] = (unsigned char)gen;
    memcpy(m + 4, &seq, 4);
    for (i = 8; i < len; i++) m[i] = (unsigned char)(i * 31u + (unsigned)seq);
}

static int next_seq[GENERATIONS + 1];

static int check_control(void *user, const void *data, size_t len) {
    const unsigned char *m = data;
    int gen, seq;
    size_t i;
    (void)user;
    if (len < 8) goto bad;
    gen = m[0];
    memcpy(&seq, m + 4, 4);
    if (gen < 1 || gen > GENERATIONS || seq != next_seq[gen] || len != control_length(seq)) goto bad;
    for (i = 8; i < len; i++)
        if (m[i] != (unsigned char)(i * 31u + (unsigned)seq)) goto bad;
    next_seq[gen]++;
    sh->delivered[gen]++;
    return 0;
bad:
    sh->bad_messages++;
    return 0;
}

static void expect(int r, int ok1, int ok2, int ok3) {
    if (r != ok1 && r != ok2 && r != ok3) {
        sh->unexpected++;
        sh->last_unexpected = r;
    }
}

static size_t fill_meter(void *user, void *dst, size_t max_len) {
    (void)user;
    memset(dst, 0x5a, max_len);
    return max_len;
}

static shared_ring_consumer rt_a;
static shared_ring_producer rt_b;
static uint64_t attach_wakes; /* wake-ups the attaches made (they may) */

static void *realtime_thread(void *arg) {
    struct timespec tick = { 0, 500000 };
    unsigned char meter[32];
    int i;
    (void)arg;
    if (install_filter() != 0) {
        sh->skip = 1;
        sh->done = 1;
        return NULL;
    }
    memset(meter, 0x5a, sizeof meter);
    for (i = 0; !sh->done; i++) {
        shared_ring_stats st;
        shared_ring_usage use;
        uint64_t wakes;
        void *at;
        int r = shared_ring_read_some(&rt_a, check_control, NULL);
        if (r == SHARED_RING_CLOSED) sh->done = 1;
        if (r == SHARED_RING_PEER_GONE) sh->peer_gone_heard++;
        if (r < 0) expect(r, SHARED_RING_EMPTY, SHARED_RING_PEER_GONE, SHARED_RING_CLOSED);
        if (i % 7 == 0) {
            shared_ring_message m;
            r = shared_ring_peek(&rt_a, &m);
            if (r == SHARED_RING_OK) check_control(NULL, m.data, m.len);
            else expect(r, SHARED_RING_EMPTY, SHARED_RING_PEER_GONE, SHARED_RING_CLOSED);
            expect(shared_ring_release(&rt_a) >= 0 ? 0 : -1, 0, 0, 0);
        }
        r = shared_ring_write_bytes(&rt_b, meter, sizeof meter, 0);
        if (r == SHARED_RING_FULL) sh->meters_full++;
        else expect(r, SHARED_RING_OK, SHARED_RING_OK, SHARED_RING_OK);
        if (i % 5 == 0 && (r = shared_ring_claim(&rt_b, 32, &at, 0)) == SHARED_RING_OK) {
            memcpy(at, meter, 32);
            expect(i % 10 == 0 ? shared_ring_abort(&rt_b) : shared_ring_commit(&rt_b, 32), 0, 0, 0);
        }
        if (i % 11 == 0) {
            expect(shared_ring_cork(&rt_b), 0, 0, 0);
            (void)shared_ring_write_bytes(&rt_b, meter, 16, 0);
            (void)shared_ring_write_str(&rt_b, "meter", 0);
            expect(shared_ring_uncork(&rt_b), 0, 0, 0);
        }
        if (i % 13 == 0) expect(shared_ring_flush(&rt_b), 0, 0, 0);
        if (i % 17 == 0) {
            r = shared_ring_write(&rt_b, 32, fill_meter, NULL, 0);
            if (r != SHARED_RING_FULL) expect(r, 0, 0, 0);
            r = shared_ring_claim_aligned(&rt_b, 32, 32, &at, 0);
            if (r == SHARED_RING_OK) expect(shared_ring_commit(&rt_b, 32), 0, 0, 0);
            else expect(r, SHARED_RING_FULL, SHARED_RING_FULL, SHARED_RING_FULL);
        }
        expect(shared_ring_consumer_stats(&rt_a, &st), 0, 0, 0);
        wakes = st.wakes;
        expect(shared_ring_producer_stats(&rt_b, &st), 0, 0, 0);
        sh->rt_wakes = (uint32_t)(wakes + st.wakes - attach_wakes);
        expect(shared_ring_consumer_usage(&rt_a, &use), 0, 0, 0);
        expect(shared_ring_producer_usage(&rt_b, &use), 0, 0, 0);
        sh->iterations = i + 1;
        clock_nanosleep(CLOCK_MONOTONIC, 0, &tick, NULL);
    }
    for (;;) clock_nanosleep(CLOCK_MONOTONIC, 0, &tick, NULL); /* the process ends it */
    return NULL;
}

/* ---- the peer: producer of A, consumer of B ---------------------------------------- */

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

typedef struct peer_args {
    int gen;
    uint32_t flags;
    int last; /* the last generation: close A at the end */
    int result;
} peer_args;

static int count_meter(void *user, const void *data, size_t len) {
    (void)user, (void)data;
    if (len == 32 || len == 16 || len == 5) sh->meters_read++;
    return 0;
}

static void *peer_producer(void *arg) {
    peer_args *pa = arg;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_producer p;
    unsigned char m[8192 + 16];
    uint64_t until = now_ns() + PHASE_NS;
    int seq = 0;
    o.flags = pa->flags;
    o.region_fd = sh->fd_a;
    pa->result = 0;
    if (shared_ring_attach_producer_wait(&p, sh->a, SIZE_A, &o, 5000000000u) != 0) {
        pa->result = 1;
        return NULL;
    }
    while (now_ns() < until) {
        size_t len = control_length(seq);
        int r;
        fill_control(m, len, pa->gen, seq);
        r = shared_ring_write_bytes(&p, m, len, 2000000000u); /* blocks on a full ring */
        if (r != SHARED_RING_OK) {
            fprintf(stderr, "  generation %d: write_bytes said %s (%s)\n", pa->gen,
                    shared_ring_result_string(r), shared_ring_why());
            pa->result = 2;
            break;
        }
        sh->published[pa->gen] = ++seq;
        if (seq % 16 == 0) usleep(300);
    }
    if (pa->last && shared_ring_close(&p) != 0) pa->result = 3;
    if (shared_ring_detach_producer(&p) != 0) pa->result = 4;
    return NULL;
}

static void *peer_consumer(void *arg) {
    peer_args *pa = arg;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_consumer c;
    uint64_t until = now_ns() + PHASE_NS;
    o.flags = pa->flags;
    o.region_fd = sh->fd_b;
    pa->result = 0;
    if (shared_ring_attach_consumer_wait(&c, sh->b, SIZE_B, &o, 5000000000u) != 0) {
        pa->result = 1;
        return NULL;
    }
    while (now_ns() < until) {
        int r = shared_ring_read(&c, count_meter, NULL, 20000000u); /* sleeps */
        if (r < 0 && r != SHARED_RING_TIMEOUT) {
            pa->result = 2;
            break;
        }
    }
    if (shared_ring_detach_consumer(&c) != 0) pa->result = 4;
    return NULL;
}

/* One generation of the peer, in threads of this process. 0: as expected. */
static int run_peer(int gen, uint32_t flags, int last) {
    peer_args pa = { gen, flags, last, -1 }, ca = { gen, flags, last, -1 };
    pthread_t tp, tc;
    pthread_create(&tp, NULL, peer_producer, &pa);
    pthread_create(&tc, NULL, peer_consumer, &ca);
    pthread_join(tp, NULL);
    pthread_join(tc, NULL);
    return pa.result * 10 + ca.result;
}

/* ---- the real-time process ----------------------------------------------------------- */

/* Attach the real-time handles, ask for their peer fds if told to (once a
   peer is attached), and start the thread. */
static void start_realtime(int ask_peer_fd) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    struct sigaction sa;
    pthread_t t;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &sa, NULL);
    o.flags = SHARED_RING_REALTIME;
    o.region_fd = sh->fd_a;
    if (shared_ring_attach_consumer(&rt_a, sh->a, SIZE_A, &o) != 0) _exit(50);
    o.region_fd = sh->fd_b;
    if (shared_ring_attach_producer(&rt_b, sh->b, SIZE_B, &o) != 0) _exit(50);
    {
        shared_ring_stats a, b;
        shared_ring_consumer_stats(&rt_a, &a);
        shared_ring_producer_stats(&rt_b, &b);
        attach_wakes = a.wakes + b.wakes;
    }
    if (ask_peer_fd) {
        while (shared_ring_consumer_peer_fd(&rt_a) < 0 || shared_ring_producer_peer_fd(&rt_b) < 0)
            usleep(1000); /* until the first peer has attached both */
    }
    pthread_create(&t, NULL, realtime_thread, NULL);
}

static unsigned char *ring_file(size_t bytes, int *fd) {
    void *m;
    *fd = memfd_create("realtime", MFD_CLOEXEC);
    if (*fd < 0 || ftruncate(*fd, (off_t)bytes) != 0) abort();
    m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (m == MAP_FAILED) abort();
    return m;
}

static void fresh_shared(void) {
    if (sh != NULL) {
        munmap(sh->a, SIZE_A), munmap(sh->b, SIZE_B), close(sh->fd_a), close(sh->fd_b);
        munmap(sh, sizeof *sh);
    }
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) abort();
    sh->a = ring_file(SIZE_A, &sh->fd_a);
    sh->b = ring_file(SIZE_B, &sh->fd_b);
    if (shared_ring_format(sh->a, SIZE_A, CAP_A, 0) != 0 ||
        shared_ring_format(sh->b, SIZE_B, CAP_B, 0) != 0)
        abort();
    sh->bad_syscall = -1;
}

static void wait_done(void) {
    uint64_t until = now_ns() + 20000000000ull;
    while (!sh->done && now_ns() < until) usleep(1000);
}

/* The checks every run ends with; `killed` is the generation killed
   (processes), whose last publish may not have been counted. */
static void check_run(int status, int killed) {
    int g;
    if (sh->skip) {
        printf("  SKIP: seccomp filters cannot be installed here\n");
        return;
    }
    if (sh->bad_syscall >= 0)
        fprintf(stderr, "  the real-time thread made system call %d\n", sh->bad_syscall);
    CHECK_EQ(sh->bad_syscall, -1);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(sh->done, 1);
    CHECK_EQ(sh->unexpected, 0);
    if (sh->unexpected) fprintf(stderr, "  last unexpected result: %d\n", sh->last_unexpected);
    CHECK_EQ(sh->bad_messages, 0);
    CHECK_EQ(sh->rt_wakes, 0);
    for (g = 1; g <= GENERATIONS; g++) {
        CHECK(sh->published[g] > 0);
        if (g == killed)
            CHECK(sh->delivered[g] == sh->published[g] || sh->delivered[g] == sh->published[g] + 1);
        else
            CHECK_EQ(sh->delivered[g], sh->published[g]);
    }
    CHECK(sh->meters_read > 0);
    printf("  %d callbacks, no system call; control messages %d + %d + %d, all delivered; meters "
           "read %d, dropped (FULL) %d\n",
           sh->iterations, sh->delivered[1], sh->delivered[2], sh->delivered[3], sh->meters_read,
           sh->meters_full);
}

TEST(a_realtime_thread_makes_no_system_call_against_peer_threads) {
    pid_t child;
    int status = -1;
    fresh_shared();
    child = harness_fork();
    if (child == 0) {
        int r;
        start_realtime(0);
        r = run_peer(1, 0, 0);                                /* sleeps, blocks */
        if (r == 0) r = run_peer(2, SHARED_RING_POLL_ONLY, 0); /* naps */
        if (r == 0) r = run_peer(3, 0, 1);                    /* replaced; closes */
        wait_done();
        _exit(r == 0 ? 0 : 40 + r % 10);
    }
    waitpid(child, &status, 0);
    check_run(status, 0);
}

/* The peer in processes of its own, the second one killed while it writes. */
static pid_t peer_process(int gen, uint32_t flags, int last) {
    pid_t pid = harness_fork();
    if (pid == 0) _exit(run_peer(gen, flags, last));
    return pid;
}

static void processes_run(int ask_peer_fd) {
    pid_t child;
    int status = -1;
    fresh_shared();
    child = harness_fork();
    if (child == 0) {
        int st1 = -1, st3 = -1;
        pid_t p;
        p = peer_process(1, 0, 0);
        start_realtime(ask_peer_fd);
        waitpid(p, &st1, 0);
        p = peer_process(2, SHARED_RING_POLL_ONLY, 0);
        while (sh->published[2] < 200) usleep(1000);
        kill(p, SIGKILL); /* dies holding both sides */
        waitpid(p, NULL, 0);
        p = peer_process(3, 0, 1); /* takes them over */
        waitpid(p, &st3, 0);
        wait_done();
        if (st1 != 0 || st3 != 0)
            fprintf(stderr, "  peer processes ended with %d and %d (producer * 10 + consumer)\n",
                    WEXITSTATUS(st1), WEXITSTATUS(st3));
        _exit(st1 == 0 && st3 == 0 ? 0 : 45);
    }
    waitpid(child, &status, 0);
    check_run(status, 2);
}

TEST(a_realtime_thread_makes_no_system_call_against_peer_processes) { processes_run(0); }

TEST(a_realtime_thread_that_asked_for_peer_fds_makes_no_system_call_either) { processes_run(1); }

/* stats.wakes counts the wake-up calls made, no more: a producer that
   finds the consumer's word "asleep" makes a call only when one of its
   calls reaches how that consumer sleeps (its wait_mode), and a real-time
   producer makes none. The consumer's announcement is forged (its word set
   to 1), so nothing depends on timing. */
static uint64_t wakes_after_one_publish(uint32_t producer_flags, uint32_t consumer_flags) {
    static unsigned char region[4096 + SHARED_RING_HEADER_SIZE] __attribute__((aligned(128)));
    shared_ring_options po = SHARED_RING_OPTIONS_INIT, co = SHARED_RING_OPTIONS_INIT;
    shared_ring_producer p;
    shared_ring_consumer c;
    shared_ring_stats st;
    memset(&st, 0xff, sizeof st);
    po.flags = producer_flags;
    co.flags = consumer_flags;
    if (shared_ring_format(region, sizeof region, 4096, 0) != 0 ||
        shared_ring_attach_producer(&p, region, sizeof region, &po) != 0 ||
        shared_ring_attach_consumer(&c, region, sizeof region, &co) != 0 ||
        shared_ring_write_str(&p, "choose", 0) != 0) /* answers the consumer's attach */
        return 99;
    __atomic_store_n((uint32_t *)(region + SRNG_OFF_CONSUMER_SLEEPING), 1u, __ATOMIC_SEQ_CST);
    if (shared_ring_write_str(&p, "m", 0) != 0 || shared_ring_producer_stats(&p, &st) != 0) return 98;
    if (__atomic_load_n((uint32_t *)(region + SRNG_OFF_CONSUMER_SLEEPING), __ATOMIC_SEQ_CST) != 0)
        return 97; /* answered either way */
    shared_ring_detach_consumer(&c);
    shared_ring_detach_producer(&p);
    return st.wakes;
}

TEST(stats_wakes_counts_the_wake_up_calls_made_and_none_other) {
    CHECK_EQ(wakes_after_one_publish(0, 0), 1);                    /* a futex wake */
    CHECK_EQ(wakes_after_one_publish(0, SHARED_RING_POLL_ONLY), 0); /* it naps: no call */
    CHECK_EQ(wakes_after_one_publish(SHARED_RING_REALTIME, 0), 0);  /* wakes nobody */
}

/* A consumer asleep on a producer's promise of a wake-up, when a real-time
   producer takes the side (TAKE_BACK, same process): the attach itself
   wakes it (an attach may make system calls), so it re-reads the new
   producer's wait_mode and from then on sleeps in slices; else it would
   sleep on, unbounded, while the real-time producer publishes. */
static unsigned char takeover[4096 + SHARED_RING_HEADER_SIZE] __attribute__((aligned(128)));
static int taken_over_read;

static void *sleep_in_read(void *arg) {
    shared_ring_consumer *c = arg;
    int got = 0;
    taken_over_read = shared_ring_read(c, count_meter, &got, 10000000000u);
    return NULL;
}

TEST(a_consumer_asleep_when_a_realtime_producer_attaches_is_woken_by_the_attach) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT, rt = SHARED_RING_OPTIONS_INIT;
    shared_ring_producer first, second;
    shared_ring_consumer c;
    shared_ring_stats st;
    pthread_t t;
    o.spin_ns = SHARED_RING_OFF;
    o.recheck_ns = SHARED_RING_OFF; /* no safety net: only a wake-up ends the sleep */
    rt.flags = SHARED_RING_REALTIME | SHARED_RING_TAKE_BACK;
    CHECK_EQ(shared_ring_format(takeover, sizeof takeover, 4096, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&first, takeover, sizeof takeover, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&c, takeover, sizeof takeover, &o), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&first, "a", 0), SHARED_RING_OK); /* answers the attach */
    CHECK_EQ(shared_ring_read_some(&c, count_meter, NULL), 1);
    pthread_create(&t, NULL, sleep_in_read, &c);
    while (__atomic_load_n((uint32_t *)(takeover + SRNG_OFF_CONSUMER_SLEEPING), __ATOMIC_SEQ_CST) != 1u)
        usleep(1000);
    CHECK_EQ(shared_ring_attach_producer(&second, takeover, sizeof takeover, &rt), SHARED_RING_OK);
    CHECK_EQ(shared_ring_producer_stats(&second, &st), SHARED_RING_OK);
    CHECK_EQ(st.wakes, 1); /* the attach's wake-up call */
    CHECK_EQ(shared_ring_write_str(&second, "b", 0), SHARED_RING_OK);
    pthread_join(t, NULL);
    CHECK_EQ(taken_over_read, 1);
    shared_ring_detach_consumer(&c);
    shared_ring_detach_producer(&second);
}

/* A real-time side hears a detach from the owner word alone: its consumer
   reads what was left, then PEER_GONE; its producer, once the ring is
   full, PEER_GONE rather than FULL for ever. */
TEST(a_realtime_side_hears_a_detach_from_the_owner_word) {
    static unsigned char region[4096 + SHARED_RING_HEADER_SIZE] __attribute__((aligned(128)));
    shared_ring_options rt = SHARED_RING_OPTIONS_INIT;
    shared_ring_producer p;
    shared_ring_consumer c;
    int got = 0, r, writes = 0;
    rt.flags = SHARED_RING_REALTIME;
    CHECK_EQ(shared_ring_format(region, sizeof region, 4096, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&p, region, sizeof region, NULL), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, sizeof region, &rt), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&p, "left", 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
    CHECK_EQ(shared_ring_read_some(&c, count_meter, &got), 1);
    CHECK_EQ(shared_ring_read_some(&c, count_meter, &got), SHARED_RING_PEER_GONE);
    CHECK_EQ(shared_ring_detach_consumer(&c), SHARED_RING_OK);
    CHECK_EQ(shared_ring_format(region, sizeof region, 4096, 0), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_producer(&p, region, sizeof region, &rt), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, sizeof region, NULL), SHARED_RING_OK);
    while ((r = shared_ring_write_str(&p, "meter", 0)) == SHARED_RING_OK) writes++;
    CHECK(writes > 0);
    CHECK_EQ(r, SHARED_RING_FULL); /* a live consumer: FULL */
    CHECK_EQ(shared_ring_detach_consumer(&c), SHARED_RING_OK);
    CHECK_EQ(shared_ring_write_str(&p, "meter", 0), SHARED_RING_PEER_GONE);
    CHECK_EQ(shared_ring_detach_producer(&p), SHARED_RING_OK);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    RUN(stats_wakes_counts_the_wake_up_calls_made_and_none_other);
    RUN(a_realtime_side_hears_a_detach_from_the_owner_word);
    RUN(a_consumer_asleep_when_a_realtime_producer_attaches_is_woken_by_the_attach);
    RUN(a_realtime_thread_makes_no_system_call_against_peer_threads);
    RUN(a_realtime_thread_makes_no_system_call_against_peer_processes);
    RUN(a_realtime_thread_that_asked_for_peer_fds_makes_no_system_call_either);
    return harness_summary("realtime");
}
