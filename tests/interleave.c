/* Forced interleavings of the real code (issue: the lifecycle as one state
   machine). This test build gives the header a scheduling point at each
   load and store of a lifecycle control word (SRNG_SCHED_POINT): there the
   process hands control to a driver, which chooses which process moves
   next. Each scenario runs two or three real processes over one region:
   every schedule with up to two preemptions (iterative context bounding),
   then random schedules. A failing schedule is printed as its trail.

   The driver can also kill a scenario's victim with SIGKILL wherever it
   is parked: that is one more choice at each step, explored like a
   preemption (it spends a departure), at most once a run.

   The clock is virtual (1 us per read), so no timeout or liveness check
   depends on how fast the machine runs; an actor that waits for another
   one yields at a point named "yield" or "nap", which the driver takes as
   a hint to switch (not counted as a preemption). An actor that waits for
   a dead peer to be noticed yields with time: its clock jumps past the
   library's liveness interval, so the next wait judges the peer.

   Actors sleep as users' programs do (blocking reads, a producer waiting
   for room, an event loop after shared_ring_arm): the header's futex
   calls go through SRNG_SYSCALL, which this file points at a model of the
   kernel's futex. A FUTEX_WAIT records which word of the region it sleeps
   on and the value it expects, and parks at a point named "sleep"; the
   driver lets a sleeper move only once that word changed or a FUTEX_WAKE
   on it came after it went to sleep (a wake that comes before is lost, as
   in the kernel). When no actor can move, a sleeper's timeout passes: its
   clock jumps by the timeout and it moves ("sleep: timed out" in the
   trail); one asleep for ever is a hang, and fails the run. A blocking
   call that ends with what it waited for right after such a timeout had
   its wake-up lost: the driver only lets time pass when nothing else can
   happen, so what it found was there before (LOST_WAKE). A woken sleeper
   whose timeout was running may also have it pass at the same moment
   (a LATE choice, explored like a preemption): the kernel then says
   ETIMEDOUT, and the wait must still find what the wake-up was for.
   Wait and wake hooks, and an event loop's descriptor after
   shared_ring_arm, are modelled the same way; an actor that waits for
   another actor's milestone sleeps too, so that the driver can tell when
   nothing else can happen. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sched_point(const char *what);
static uint64_t virtual_now(void);
static long model_syscall(long nr, ...);
static int model_poll(struct pollfd *fds, nfds_t n, int ms);
#define SRNG_SCHED_POINT(what) sched_point(what)
#define SHARED_RING_NOW_NS() virtual_now()
#define SRNG_SYSCALL model_syscall
/* An actor's nap (srng_nap: a poll of no descriptor) passes in virtual
   time: it parked at "nap" already, and 2 ms of real sleep per nap was
   most of this program's run time. <poll.h> is in, so only calls change. */
#define poll(fds, n, ms) model_poll(fds, n, ms)
#define SHARED_RING_SHM
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

enum { ACTORS = 3, MAX_STEPS = 4000, POINT_NAME = 40 };
enum { NOT_STARTED, RUNNING, PARKED, DONE };

enum { SLEEP_ON_WORD, SLEEP_ON_DESCRIPTOR, SLEEP_ON_MILESTONE };

/* An actor parked at "sleep": what it sleeps on, and how the sleep ended. */
typedef struct sleeper {
    int asleep;        /* parked at "sleep" now */
    int kind;          /* a futex word (a wait hook too), an event loop's descriptor,
                          or another actor's milestone (ctl->progress) */
    unsigned off;      /* the word's offset in the region */
    uint32_t expected; /* it sleeps while the word holds this */
    uint64_t timeout;  /* ns, or SHARED_RING_FOREVER */
    unsigned seen;     /* the descriptor's signal count when it was last cleared, or
                          the milestone awaited */
    int woken;         /* a FUTEX_WAKE (or wake hook) on the word since it slept */
    int timed_out;     /* the driver ended the sleep by its timeout */
} sleeper;

/* The control block, shared by the driver and its actors. */
typedef struct control {
    atomic_int turn; /* the actor that may run, or -1: the driver's turn */
    atomic_int published; /* what a victim's calls returned OK for: */
    atomic_int released;  /* what it is owed, or what it took */
    atomic_int victim_attached; /* set by the victim, or by the driver */
    atomic_int victim_finished; /* when it kills the victim */
    atomic_int state[ACTORS];
    atomic_int release_all; /* actors that are done wait for this to exit */
    atomic_int progress;    /* a scenario's own milestones (attached, read, formatted) */
    atomic_int code[ACTORS]; /* an actor's exit code, once DONE */
    atomic_uint go[ACTORS]; /* bumped with each turn given: an actor sleeps on its own */
    atomic_uint bell;       /* bumped with each turn handed back: the driver sleeps on it */
    atomic_uint signals;    /* the event loop's descriptor: bumped by the wake hook */
    sleeper sleep[ACTORS];
    char at[ACTORS][POINT_NAME];
} control;

static control *ctl;
static int me = -1; /* this process's actor, or -1: the driver, or free */

static uint64_t virtual_clock = 1000000000u;
static uint64_t virtual_now(void) { return virtual_clock += 1000u; }

/* The hand-over between driver and actors sleeps in real futexes of the
   control block (direct system calls, not the model): on 2 shared cores,
   processes that spin for their turn slow everyone down. `ns` 0: no
   timeout. */
static void control_wait(volatile void *word, unsigned seen, long ns) {
    struct timespec ts = { 0, ns };
    syscall(SYS_futex, word, 0, seen, ns != 0 ? &ts : NULL, NULL, 0);
}
static void control_wake(volatile void *word) {
    syscall(SYS_futex, word, 1, INT_MAX, NULL, NULL, 0);
}

/* The driver's turn: ring its bell. */
static void hand_back(void) {
    atomic_store(&ctl->turn, -1);
    atomic_fetch_add(&ctl->bell, 1u);
    control_wake(&ctl->bell);
}

static void sched_point(const char *what) {
    unsigned go;
    if (me < 0) return;
    go = atomic_load(&ctl->go[me]); /* before the driver can answer */
    snprintf(ctl->at[me], POINT_NAME, "%s", what);
    atomic_store(&ctl->state[me], PARKED);
    hand_back();
    while (atomic_load(&ctl->turn) != me) {
        control_wait(&ctl->go[me], go, 0);
        go = atomic_load(&ctl->go[me]);
    }
    atomic_store(&ctl->state[me], RUNNING);
}

/* ---- scenarios ------------------------------------------------------------- */

#define CAPACITY 4096u
#define LONG_NS 5000000000u

typedef struct scenario {
    const char *name;
    int actors;
    int victim; /* the actor the driver may kill, or -1 */
    void (*setup)(void);
    int (*actor[ACTORS])(void); /* exit code: 0 as expected, else what went wrong */
} scenario;

static unsigned char *region;
static size_t size;
static int region_fd = -1;
static char shm_name[64];

/* ---- sleeping: a model of the futex -----------------------------------------
   Only actors sleep in the model; the driver, and the processes of the
   plain tests below, make the real calls. */

static int slept_through; /* this process's last sleep ended by its timeout */
static int late_news;     /* ... together with a wake, news for its consumer waiting */
static const shared_ring_consumer *watched; /* this process's consumer, for late_news */

/* Is there news for consumer c: a record published at its next position,
   or the close? Read without the library (no scheduling point). */
static int consumer_has_news(const shared_ring_consumer *c) {
    uint64_t h = atomic_load((_Atomic uint64_t *)(void *)(c->s.data + (c->peek_pos & c->s.mask)));
    return (uint32_t)(h >> 32) == srng_tag(c->peek_pos) ||
           atomic_load((atomic_uint *)(void *)(region + SRNG_OFF_CLOSED)) != 0;
}

/* Is `word` one of the region's words? Then its offset in *off. */
static int in_region(const void *word, unsigned *off) {
    const unsigned char *w = (const unsigned char *)word;
    if (region == NULL || w < region || w >= region + size) return 0;
    *off = (unsigned)(w - region);
    return 1;
}

/* Park at `what` asleep, as recorded in ctl->sleep[me]; 1 if the driver
   ended it by the timeout (the clock then jumps by it). */
static int park_asleep(const char *what) {
    sleeper *sl = &ctl->sleep[me];
    sl->woken = 0;
    sl->timed_out = 0;
    sl->asleep = 1;
    sched_point(what);
    sl->asleep = 0;
    slept_through = sl->timed_out;
    if (slept_through && sl->timeout != SHARED_RING_FOREVER) virtual_clock += sl->timeout;
    return slept_through;
}

/* FUTEX_WAIT on a word of the region, by an actor: -1 with EAGAIN when the
   word changed, ETIMEDOUT when the timeout passed, else 0 (woken). */
static long model_wait(void *word, unsigned off, uint32_t expected, uint64_t timeout_ns) {
    sleeper *sl = &ctl->sleep[me];
    sl->kind = SLEEP_ON_WORD;
    sl->off = off;
    sl->expected = expected;
    sl->timeout = timeout_ns;
    if (park_asleep("sleep")) {
        if (sl->woken || atomic_load((atomic_uint *)word) != expected) { /* LATE */
            slept_through = 0;
            late_news = watched != NULL && off == SRNG_OFF_CONSUMER_SLEEPING &&
                        consumer_has_news(watched);
        }
        errno = ETIMEDOUT;
        return -1;
    }
    if (!sl->woken && atomic_load((atomic_uint *)word) != expected) {
        errno = EAGAIN;
        return -1;
    }
    return 0;
}

/* FUTEX_WAKE on a word of the region: every actor asleep on it may move.
   (Only one process runs at a time, so the sleepers' records hold still.) */
static void model_wake(const void *word) {
    unsigned off;
    int i;
    if (ctl == NULL || !in_region(word, &off)) return;
    for (i = 0; i < ACTORS; i++)
        if (ctl->sleep[i].asleep && ctl->sleep[i].kind == SLEEP_ON_WORD && ctl->sleep[i].off == off)
            ctl->sleep[i].woken = 1;
}

/* The header's SRNG_SYSCALL: its futex calls go to the model when an actor
   makes them, to the kernel otherwise (wakes always: a real sleeper of a
   plain test may wait on the word). */
static long model_syscall(long nr, ...) {
    va_list ap;
    va_start(ap, nr);
    if (nr == SYS_futex) {
        void *word = va_arg(ap, void *);
        int op = va_arg(ap, int);
        unsigned val = va_arg(ap, unsigned); /* uint32_t expected, or INT_MAX */
        const long *ts = va_arg(ap, const long *); /* the kernel's {sec, nsec}, or NULL */
        unsigned off;
        va_end(ap);
        if (op == 0 && me >= 0 && in_region(word, &off))
            return model_wait(word, off, val,
                              ts == NULL ? SHARED_RING_FOREVER
                                         : (uint64_t)ts[0] * 1000000000u + (uint64_t)ts[1]);
        if (op == 1) model_wake(word);
        return syscall(SYS_futex, word, op, val, ts, NULL, 0);
    }
#ifdef SYS_futex_waitv
    if (nr == SYS_futex_waitv) { /* wait_any: no actor calls it */
        void *waiters = va_arg(ap, void *);
        unsigned n = va_arg(ap, unsigned);
        int flags = va_arg(ap, int);
        void *until = va_arg(ap, void *);
        int clock = va_arg(ap, int);
        va_end(ap);
        if (me >= 0) abort(); /* it would sleep where the driver cannot see */
        return syscall(SYS_futex_waitv, waiters, n, flags, until, clock);
    }
#endif
#ifdef SYS_membarrier
    if (nr == SYS_membarrier) { /* a sleeper's barrier for a fenceless peer: the kernel's */
        int cmd = va_arg(ap, int);
        unsigned flags = va_arg(ap, unsigned);
        int cpu = va_arg(ap, int);
        va_end(ap);
        return syscall(nr, cmd, flags, cpu);
    }
#endif
#ifdef SRNG_HAVE_WAITV
    if (nr == SRNG_SYS_CLOCK64) { /* wait_any's deadline: the kernel's clock */
        int clock = va_arg(ap, int);
        void *ts = va_arg(ap, void *);
        va_end(ap);
        return syscall(nr, clock, ts);
    }
#endif
    va_end(ap);
    abort(); /* a system call this model does not know */
}

#undef poll
/* An actor's nap passes at once; every other poll is real. */
static int model_poll(struct pollfd *fds, nfds_t n, int ms) {
    if (me >= 0 && n == 0) return 0;
    return poll(fds, n, ms);
}

/* Wait and wake hooks, as an event loop's notifier would be: the wake
   signals the loop's descriptor (ctl->signals) and wakes a sleep in the
   wait hook, which the model treats as a futex on the word. */
static void hook_wait(void *user, void *addr, uint32_t expected, uint64_t timeout_ns) {
    unsigned off;
    (void)user;
    if (me >= 0 && in_region(addr, &off)) (void)model_wait(addr, off, expected, timeout_ns);
}
static void hook_wake(void *user, void *addr) {
    (void)user;
    model_wake(addr);
    atomic_fetch_add(&ctl->signals, 1u);
}

/* The event loop's sleep until its descriptor is readable, then its clear
   (shared_ring_notifier_clear). No timeout: a loop that armed trusts the
   wake-up. */
static unsigned signals_cleared;
static void sleep_on_descriptor(void) {
    sleeper *sl = &ctl->sleep[me];
    sl->kind = SLEEP_ON_DESCRIPTOR;
    sl->seen = signals_cleared;
    sl->timeout = SHARED_RING_FOREVER;
    (void)park_asleep("sleep on its fd");
    signals_cleared = atomic_load(&ctl->signals);
}

/* Milestone `n` reached (ctl->progress only grows). */
static void reach_milestone(int n) {
    int now = atomic_load(&ctl->progress);
    while (now < n && !atomic_compare_exchange_weak(&ctl->progress, &now, n)) {
    }
}

/* Wait until another actor reached milestone `n` (ctl->progress): asleep,
   not yielding, so that while it waits the driver can tell that nothing
   else happens and let a sleep of the library time out. */
static void wait_for_milestone(int n) {
    sleeper *sl = &ctl->sleep[me];
    sl->kind = SLEEP_ON_MILESTONE;
    sl->seen = (unsigned)n;
    sl->timeout = SHARED_RING_FOREVER;
    while (atomic_load(&ctl->progress) < n) (void)park_asleep("wait: milestone");
}

/* What a blocking call's result says of its sleeps: 0, or an actor's exit
   code. LOST_WAKE: it ended with what it waited for (anything but
   TIMEOUT) right after its last sleep ended by the timeout: the driver
   lets time pass only when no actor can move, so what the call found was
   there before, and its wake-up was lost. (Not for an actor whose peer
   may be killed: a death wakes nobody, and is noticed by a look that a
   timeout brings.) WAKE_IGNORED: a consumer's wait said TIMEOUT though its
   last sleep, woken as its timeout passed (LATE), ended with a message or
   the close there. Reset both with before_a_call(). */
#define LOST_WAKE 99
#define WAKE_IGNORED 98
static void before_a_call(void) { slept_through = late_news = 0; }
static int sleep_verdict(int r) {
    if (slept_through && r != SHARED_RING_TIMEOUT) return LOST_WAKE;
    if (late_news && r == SHARED_RING_TIMEOUT) return WAKE_IGNORED;
    return 0;
}
#define RETURN_IF_A_WAKE_WAS_MISSED(r)                                                             \
    do {                                                                                           \
        int verdict_ = sleep_verdict(r);                                                           \
        if (verdict_ != 0) return verdict_;                                                        \
    } while (0)

/* The default options, with the region's file: the kernel's locks judge
   who lives. */
static const shared_ring_options *with_file(void) {
    static shared_ring_options o;
    o = shared_ring_default_options();
    o.region_fd = region_fd;
    return &o;
}

/* Options of an actor that sleeps: at once (a spin is hundreds of
   identical steps), with no safety-net recheck and no trailing hold-off
   (a spin on the clock). */
static shared_ring_options sleeping_options(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.region_fd = region_fd; /* the kernel's locks judge who lives */
    o.spin_ns = SHARED_RING_OFF;
    o.recheck_ns = SHARED_RING_OFF;
    o.trail_ns = SHARED_RING_OFF;
    return o;
}

/* A region in a file of its own (region_fd can name it), zeroed. */
static void fresh_file_region_of(size_t capacity) {
    char path[] = "/tmp/shared_ring_interleave_XXXXXX";
    if (region != NULL) munmap(region, size);
    if (region_fd >= 0) close(region_fd);
    size = shared_ring_region_size(capacity, 0);
    region_fd = mkstemp(path);
    if (region_fd < 0 || ftruncate(region_fd, (off_t)size) != 0) abort();
    unlink(path);
    region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, region_fd, 0);
    if (region == MAP_FAILED) abort();
}
static void fresh_file_region(void) { fresh_file_region_of(CAPACITY); }

static void formatted_region(void) {
    fresh_file_region();
    if (shared_ring_format(region, size, CAPACITY, 0) != SHARED_RING_OK) abort();
}

static void yield_point(void) { sched_point("yield"); }

/* A yield after which the library looks at its peer's process again. */
static void yield_with_time(void) {
    virtual_clock += SRNG_LIVENESS_NS + 1000u;
    yield_point();
}

/* A consumer that polls up to `polls` times (yielding between), counting
   messages, until CLOSED. Returns 0 if it read `expect` messages and then
   CLOSED (expect >= 0), or only never heard PEER_GONE (expect < 0). */
static int consume(shared_ring_consumer *c, int expect, int polls) {
    int got = 0, i;
    for (i = 0; i < polls; i++) {
        shared_ring_message m;
        int r = shared_ring_peek(c, &m);
        if (r == SHARED_RING_OK) {
            got++;
            shared_ring_release(c);
            continue;
        }
        if (r == SHARED_RING_PEER_GONE) return 10; /* a live producer judged gone */
        if (r == SHARED_RING_CLOSED) return expect < 0 || got == expect ? 0 : 11;
        if (r != SHARED_RING_EMPTY) return 12;
        yield_point();
    }
    return expect < 0 ? 0 : 13; /* the stream did not end */
}

/* 1. A live peer is never judged gone: a consumer waits while another
   process restarts the producer the documented way (prepare, then
   attach), first with a region_fd of another file (an attach that claims
   the side and then fails), and the consumer's prepare ran too. */
static int consumer_that_waits(void) {
    shared_ring_consumer c;
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 20;
    if (shared_ring_attach_consumer_wait(&c, region, size, with_file(), LONG_NS) != SHARED_RING_OK)
        return 21;
    return consume(&c, -1, 12);
}
static int producer_restarting(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_producer p;
    char path[] = "/tmp/shared_ring_other_XXXXXX";
    int other = mkstemp(path); /* a regular file, but not this ring's: refused after the claim */
    unlink(path);
    if (other < 0 || ftruncate(other, (off_t)size) != 0) return 34;
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 30;
    o.region_fd = other;
    if (shared_ring_attach_producer(&p, region, size, &o) == SHARED_RING_OK) return 31;
    close(other);
    if (shared_ring_attach_producer_wait(&p, region, size, with_file(), LONG_NS) != SHARED_RING_OK)
        return 32;
    if (shared_ring_write_str(&p, "m", 0) != SHARED_RING_OK) return 33;
    return 0; /* stays attached, alive, until every actor is done */
}
static const scenario live_peer_never_gone = {
    "a live producer is never judged gone while another process prepares and attaches",
    2, -1, formatted_region, { consumer_that_waits, producer_restarting, NULL }
};

/* 2. Two programs started at once over a zeroed file, each running the
   documented prepare + attach_*_wait with region_fd: both attach, and
   the stream goes through whole, ending in CLOSED. */
static int started_producer(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_producer p;
    o.region_fd = region_fd;
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 40;
    if (shared_ring_attach_producer_wait(&p, region, size, &o, LONG_NS) != SHARED_RING_OK)
        return 41;
    if (shared_ring_write_str(&p, "m", 0) != SHARED_RING_OK) return 42;
    if (shared_ring_close(&p) != SHARED_RING_OK) return 43;
    return shared_ring_detach_producer(&p) == SHARED_RING_OK ? 0 : 44;
}
static int started_consumer(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_consumer c;
    o.region_fd = region_fd;
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 50;
    if (shared_ring_attach_consumer_wait(&c, region, size, &o, LONG_NS) != SHARED_RING_OK)
        return 51;
    return consume(&c, 1, 40);
}
static const scenario start_together = {
    "two programs started together both attach and the stream arrives whole",
    2, -1, fresh_file_region, { started_producer, started_consumer, NULL }
};

/* 2b. The same start, with the stream left open: both attach (no
   ERR_ARG from a ring id that changed under an attach), and the message
   arrives. */
static int started_producer_stays(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_producer p;
    o.region_fd = region_fd;
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 45;
    if (shared_ring_attach_producer_wait(&p, region, size, &o, LONG_NS) != SHARED_RING_OK)
        return 46;
    return shared_ring_write_str(&p, "m", 0) == SHARED_RING_OK ? 0 : 47;
}
static int started_consumer_reads_one(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_consumer c;
    int i;
    o.region_fd = region_fd;
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 55;
    if (shared_ring_attach_consumer_wait(&c, region, size, &o, LONG_NS) != SHARED_RING_OK)
        return 56;
    for (i = 0; i < 40; i++) {
        shared_ring_message m;
        int r = shared_ring_peek(&c, &m);
        if (r == SHARED_RING_OK) return 0;
        if (r != SHARED_RING_EMPTY) return 57;
        yield_point();
    }
    return 58;
}
static const scenario start_together_open = {
    "two programs started together both attach (stream left open)",
    2, -1, fresh_file_region, { started_producer_stays, started_consumer_reads_one, NULL }
};

/* 3. close then detach reads CLOSED, never PEER_GONE. */
static int producer_closes_and_detaches(void) {
    shared_ring_producer p;
    if (shared_ring_attach_producer_wait(&p, region, size, with_file(), LONG_NS) != SHARED_RING_OK)
        return 60;
    if (shared_ring_write_str(&p, "m", 0) != SHARED_RING_OK) return 61;
    if (shared_ring_close(&p) != SHARED_RING_OK) return 62;
    return shared_ring_detach_producer(&p) == SHARED_RING_OK ? 0 : 63;
}
static int consumer_reads_to_the_end(void) {
    shared_ring_consumer c;
    if (shared_ring_attach_consumer(&c, region, size, with_file()) != SHARED_RING_OK) return 70;
    return consume(&c, 1, 30);
}
static const scenario close_then_detach = {
    "a producer that closes and then detaches is read as CLOSED, never PEER_GONE",
    2, -1, formatted_region, { producer_closes_and_detaches, consumer_reads_to_the_end, NULL }
};

/* 4. A producer that finishes its stream before the consumer prepares:
   the stream is kept for it. */
static int early_producer(void) {
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 80;
    return producer_closes_and_detaches();
}
static int late_consumer(void) {
    shared_ring_consumer c;
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 90;
    if (shared_ring_attach_consumer_wait(&c, region, size, with_file(), LONG_NS) != SHARED_RING_OK)
        return 91;
    return consume(&c, 1, 30);
}
static const scenario finished_before_consumer = {
    "a stream closed before its consumer prepared is delivered, then CLOSED",
    2, -1, fresh_file_region, { early_producer, late_consumer, NULL }
};

/* 5. Two openers of one shared-memory name with different sizes: the one
   that created it keeps a mapping it can touch to its end (no SIGBUS),
   and the other is told ERR_SIZE rather than OK for a size that is not
   the object's. */
#define SHM_BIG (2u * 65536u)
#define SHM_SMALL 65536u
static int open_and_touch(size_t want) {
    shared_ring_shm shm;
    int r = shared_ring_shm_open(&shm, shm_name, want, LONG_NS);
    if (r == SHARED_RING_ERR_SIZE) return 0;
    if (r != SHARED_RING_OK) return 100;
    if (shm.size != want) return 101;
    yield_point();
    ((volatile unsigned char *)shm.region)[shm.size - 1u] = 1; /* SIGBUS if it shrank */
    return 0;
}
static int open_big(void) { return open_and_touch(SHM_BIG); }
static int open_small(void) { return open_and_touch(SHM_SMALL); }
static void fresh_shm_name(void) {
    static unsigned n;
    if (shm_name[0] != '\0') shared_ring_shm_unlink(shm_name); /* the last run's */
    snprintf(shm_name, sizeof shm_name, "/shared_ring_interleave_%d_%u", (int)getpid(), n++);
    shared_ring_shm_unlink(shm_name);
}
static const scenario sizing_race = {
    "two openers sizing one object never shrink it under a mapping",
    2, -1, fresh_shm_name, { open_big, open_small, NULL }
};

/* 6. A producer killed at any point of its life (prepare, attach,
   publish, detach): a restarted producer takes the side over once it is
   gone, never while it lives, and the consumer gets every message the
   first one published, in order, then the second one's, then CLOSED. A
   PEER_GONE on the way is the news of the death, not an end. */
static int producer_that_may_die(void) {
    shared_ring_producer p;
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 110;
    if (shared_ring_attach_producer_wait(&p, region, size, with_file(), LONG_NS) != SHARED_RING_OK)
        return 111;
    atomic_store(&ctl->victim_attached, 1);
    if (shared_ring_write_str(&p, "0", 0) != SHARED_RING_OK) return 112;
    atomic_store(&ctl->published, 1);
    if (shared_ring_write_str(&p, "1", 0) != SHARED_RING_OK) return 113;
    atomic_store(&ctl->published, 2);
    return shared_ring_detach_producer(&p) == SHARED_RING_OK ? 0 : 114;
}
/* A waiter that sleeps at once: a spin would be hundreds of scheduling
   points (a load of the record each), all of them the same. */
static shared_ring_options waiting_options(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    o.region_fd = region_fd; /* the kernel's locks judge who lives */
    o.spin_ns = SHARED_RING_OFF;
    return o;
}

/* attach_*_wait, again while the side is held (ERR_BUSY): what a
   supervisor that restarts a program does. */
static int attach_when_free(shared_ring_producer *p, shared_ring_consumer *c) {
    shared_ring_options o = waiting_options();
    int i;
    for (i = 0; i < 60; i++) {
        int r = p != NULL ? shared_ring_attach_producer_wait(p, region, size, &o, LONG_NS)
                          : shared_ring_attach_consumer_wait(c, region, size, &o, LONG_NS);
        if (r != SHARED_RING_ERR_BUSY) return r;
        if (atomic_load(&ctl->victim_finished)) return SHARED_RING_ERR_BUSY;
        yield_point();
    }
    return SHARED_RING_TIMEOUT;
}
static int restarted_producer(void) {
    shared_ring_producer p;
    /* a restart comes after the first start */
    while (!atomic_load(&ctl->victim_attached)) yield_point();
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 120;
    if (attach_when_free(&p, NULL) != SHARED_RING_OK) return 121;
    if (shared_ring_write_str(&p, "r", 0) != SHARED_RING_OK) return 122;
    if (shared_ring_close(&p) != SHARED_RING_OK) return 123;
    return shared_ring_detach_producer(&p) == SHARED_RING_OK ? 0 : 124;
}

/* Read until CLOSED, waiting (so a dead producer is judged) and yielding
   with time; the messages, one character each, go to `got`. 0, or the
   result that ended it. With `progress`, each message is counted there
   just before it is released (a kill can come between the two). */
static int read_to_close(shared_ring_consumer *c, char *got, int cap, int *n,
                         atomic_int *progress) {
    int i;
    for (i = 0; i < 120; i++) {
        shared_ring_message m;
        int r = shared_ring_peek(c, &m);
        if (r == SHARED_RING_OK) {
            if (m.len != 1 || *n == cap) return 130;
            got[(*n)++] = *(const char *)m.data;
            if (progress != NULL) atomic_store(progress, *n); /* before release: see below */
            if (shared_ring_release(c) != 1) return 131;
            continue;
        }
        if (r == SHARED_RING_CLOSED) return 0;
        if (r != SHARED_RING_EMPTY && r != SHARED_RING_PEER_GONE) return 132;
        r = shared_ring_wait(c, 200000u); /* judges the producer's process */
        if (r != SHARED_RING_OK && r != SHARED_RING_TIMEOUT && r != SHARED_RING_PEER_GONE &&
            r != SHARED_RING_CLOSED)
            return 133;
        yield_with_time();
    }
    return 134;
}
static int consumer_through_a_restart(void) {
    shared_ring_options o = waiting_options();
    shared_ring_consumer c;
    char got[8];
    int n = 0, owed, r;
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 140;
    if (shared_ring_attach_consumer_wait(&c, region, size, &o, LONG_NS) != SHARED_RING_OK)
        return 141;
    r = read_to_close(&c, got, (int)sizeof got, &n, NULL);
    if (r != 0) return r;
    owed = atomic_load(&ctl->published); /* "0" and "1" up to here, then "r" */
    if (n < owed + 1 || n > 3 || got[n - 1] != 'r') return 142;
    if ((n > 1 && got[0] != '0') || (n > 2 && got[1] != '1')) return 143;
    return 0;
}
static const scenario producer_killed = {
    "a producer killed at any point is taken over once gone and nothing it published is lost",
    3, 1, formatted_region, { consumer_through_a_restart, producer_that_may_die, restarted_producer }
};

/* 7. A consumer killed at any point: a restarted consumer takes its side
   over and reads on from what the first one released (a message it had
   peeked but not released comes again), to CLOSED; the producer's calls
   all succeed. */
static int producer_of_three(void) {
    shared_ring_producer p;
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 150;
    if (shared_ring_attach_producer_wait(&p, region, size, with_file(), LONG_NS) != SHARED_RING_OK)
        return 151;
    if (shared_ring_write_str(&p, "0", 0) != SHARED_RING_OK ||
        shared_ring_write_str(&p, "1", 0) != SHARED_RING_OK ||
        shared_ring_write_str(&p, "2", 0) != SHARED_RING_OK)
        return 152;
    if (shared_ring_close(&p) != SHARED_RING_OK) return 153;
    return shared_ring_detach_producer(&p) == SHARED_RING_OK ? 0 : 154;
}
static int consumer_that_may_die(void) {
    shared_ring_options o = waiting_options();
    shared_ring_consumer c;
    char got[8];
    int n = 0, r;
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 160;
    if (shared_ring_attach_consumer_wait(&c, region, size, &o, LONG_NS) != SHARED_RING_OK)
        return 161;
    atomic_store(&ctl->victim_attached, 1);
    r = read_to_close(&c, got, (int)sizeof got, &n, &ctl->released);
    if (r != 0) return r;
    if (n != 3 || memcmp(got, "012", 3) != 0) return 162;
    atomic_store(&ctl->victim_finished, 1);
    return shared_ring_detach_consumer(&c) == SHARED_RING_OK ? 0 : 163;
}
static int restarted_consumer(void) {
    shared_ring_consumer c;
    char got[8];
    int n = 0, r, from;
    while (!atomic_load(&ctl->victim_attached)) yield_point(); /* a restart */
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 170;
    r = attach_when_free(NULL, &c);
    if (r == SHARED_RING_ERR_BUSY && atomic_load(&ctl->victim_finished)) return 0;
    if (r != SHARED_RING_OK) return 171;
    if (atomic_load(&ctl->victim_finished)) return 0; /* the stream was read to its end */
    r = read_to_close(&c, got, (int)sizeof got, &n, NULL);
    if (r != 0) return r;
    /* it reads on from the first one's last release (that release may
       or may not have happened when it was killed), to "2" */
    from = 3 - n;
    if (from < atomic_load(&ctl->released) - 1 || from > atomic_load(&ctl->released)) return 172;
    for (r = 0; r < n; r++)
        if (got[r] != '0' + from + r) return 173;
    return 0;
}
static const scenario consumer_killed = {
    "a consumer killed at any point is taken over once gone and the next one reads on",
    3, 1, formatted_region, { producer_of_three, consumer_that_may_die, restarted_consumer }
};

/* ---- actors that sleep --------------------------------------------------------
   The scenarios below sleep as users do: in shared_ring_read, in a write
   that waits for room, in an event loop after shared_ring_arm. Each
   comment names the rule of the code it guards. */

/* What a read callback collects: each message's first byte. `len`: the
   length every message must have (0: any); `stop`: stop after one. */
typedef struct collected {
    char got[16];
    int n, bad, stop;
    size_t len;
} collected;
static int collect(void *user, const void *data, size_t len) {
    collected *k = (collected *)user;
    if (len == 0 || (k->len != 0 && len != k->len) || k->n == (int)sizeof k->got) {
        k->bad = 1;
        return 1;
    }
    k->got[k->n++] = *(const char *)data;
    return k->stop;
}

/* A consumer asleep in shared_ring_read (FOREVER) until the stream ends,
   or in shared_ring_wait (LONG_NS; SHORT_NS with SHORT_WAITS) then
   shared_ring_read_some (BY_WAIT; a TIMEOUT, it waits again): 0 if it got
   the messages whose first bytes are `expect` (each `len` bytes long),
   then `end` (CLOSED, or PEER_GONE for a producer that left without
   closing); else what went wrong. AFTER_PRODUCER: it attaches once the
   producer has (milestone 1), and says so (2), and so each read that gets
   messages (3). */
enum { AFTER_PRODUCER = 1, BY_WAIT = 2, SHORT_WAITS = 4 };
#define SHORT_NS 10000000u /* less than a liveness interval: the wait's own timeout ends it */
static int read_asleep(const char *expect, size_t len, int end, int how) {
    int after_producer = how & AFTER_PRODUCER;
    shared_ring_options o = sleeping_options();
    static shared_ring_consumer c; /* watched: it outlives the call (one per process) */
    collected k;
    int i, r;
    memset(&k, 0, sizeof k);
    k.len = len;
    if (after_producer) wait_for_milestone(1);
    if (shared_ring_attach_consumer(&c, region, size, &o) != SHARED_RING_OK) return 200;
    watched = &c;
    if (after_producer) reach_milestone(2);
    for (i = 0; i < 60; i++) {
        before_a_call();
        if (how & BY_WAIT) {
            r = shared_ring_wait(&c, how & SHORT_WAITS ? SHORT_NS : LONG_NS);
            RETURN_IF_A_WAKE_WAS_MISSED(r);
            if (r == SHARED_RING_TIMEOUT) continue;
            if (r == SHARED_RING_OK) r = shared_ring_read_some(&c, collect, &k);
        } else {
            r = shared_ring_read(&c, collect, &k, SHARED_RING_FOREVER);
        }
        RETURN_IF_A_WAKE_WAS_MISSED(r);
        if (k.bad) return 201;
        if (r >= 1 && after_producer) reach_milestone(3);
        if (r >= 1) continue;
        if (r == SHARED_RING_PEER_GONE && end != r) return 202; /* gone, before the close */
        if (r != end) return 203;
        return k.n == (int)strlen(expect) && memcmp(k.got, expect, (size_t)k.n) == 0 ? 0 : 204;
    }
    return 205;
}

/* a. A consumer asleep in shared_ring_wait (then read_some) while the
   producer publishes and closes: every message and the close wake it.
   Guards: srng_block looks at the records again after announcing its
   sleep (srng_announce_sleep, then ready()), against the producer, which
   looks at the consumer's sleeping word after each publish and after the
   close (srng_wake_if_sleeping): one of the two sees the other (Dekker).
   And a producer's attach wakes a consumer that went to sleep before it
   came (srng_announce_mode). */
static int producer_of_two_closes(void) {
    shared_ring_producer p;
    if (shared_ring_attach_producer(&p, region, size, with_file()) != SHARED_RING_OK) return 180;
    if (shared_ring_write_str(&p, "0", 0) != SHARED_RING_OK ||
        shared_ring_write_str(&p, "1", 0) != SHARED_RING_OK)
        return 181;
    return shared_ring_close(&p) == SHARED_RING_OK ? 0 : 182; /* and stays attached */
}
static int reader_of_two(void) { return read_asleep("01", 1, SHARED_RING_CLOSED, BY_WAIT); }
static const scenario asleep_in_read = {
    "a consumer asleep in wait is woken for every message and for the close",
    2, -1, formatted_region, { producer_of_two_closes, reader_of_two, NULL }
};

/* a'. The same stream, read in short timed waits (a loop that does other
   work between them), the producer starting once the consumer attached:
   a wake-up that comes as a wait's time runs out (LATE) still has its
   message read, never TIMEOUT for it. Guards: srng_block looks at the
   records once more after each sleep, however the sleep ended. */
static int producer_of_two_after_the_consumer(void) {
    shared_ring_producer p;
    if (shared_ring_attach_producer(&p, region, size, with_file()) != SHARED_RING_OK) return 183;
    reach_milestone(1);
    wait_for_milestone(2); /* the consumer attached */
    if (shared_ring_write_str(&p, "0", 0) != SHARED_RING_OK ||
        shared_ring_write_str(&p, "1", 0) != SHARED_RING_OK)
        return 184;
    return shared_ring_close(&p) == SHARED_RING_OK ? 0 : 188;
}
static int reader_in_short_waits(void) {
    return read_asleep("01", 1, SHARED_RING_CLOSED, AFTER_PRODUCER | BY_WAIT | SHORT_WAITS);
}
static const scenario asleep_in_short_waits = {
    "a consumer in short timed waits reads a message whose wake-up came with its timeout",
    2, -1, formatted_region, { producer_of_two_after_the_consumer, reader_in_short_waits, NULL }
};

/* b. A producer that waits for room in a ring of three records, while
   the consumer reads asleep: each side wakes the other, and all six
   messages arrive. Guards: a producer that waits stores its wake
   position, then announces its sleep, then looks at read_pos again
   (srng_reserve, srng_block); a release stores read_pos, then looks at
   the producer's sleeping word and wake position (srng_release_to). */
#define SMALL_CAPACITY 256u
#define ROOMY_LEN 56u /* a 64-byte record: three fill the small ring */
#define ROOMY_MESSAGES 6
static void formatted_small_region(void) {
    fresh_file_region_of(SMALL_CAPACITY);
    if (shared_ring_format(region, size, SMALL_CAPACITY, 0) != SHARED_RING_OK) abort();
}
static int producer_waiting_for_room(void) {
    shared_ring_options o = sleeping_options();
    shared_ring_producer p;
    unsigned char msg[ROOMY_LEN];
    int i, r;
    if (shared_ring_attach_producer(&p, region, size, &o) != SHARED_RING_OK) return 185;
    for (i = 0; i < ROOMY_MESSAGES; i++) {
        memset(msg, '0' + i, sizeof msg);
        before_a_call();
        r = shared_ring_write_bytes(&p, msg, sizeof msg, LONG_NS);
        RETURN_IF_A_WAKE_WAS_MISSED(r);
        if (r != SHARED_RING_OK) return 186;
    }
    return shared_ring_close(&p) == SHARED_RING_OK ? 0 : 187;
}
static int reader_of_a_small_ring(void) {
    return read_asleep("012345", ROOMY_LEN, SHARED_RING_CLOSED, 0);
}
static const scenario blocked_on_full = {
    "a producer blocked on a full ring is woken by the consumer's reads and finishes",
    2, -1, formatted_small_region, { producer_waiting_for_room, reader_of_a_small_ring, NULL }
};

/* c. A producer that publishes, closes and detaches while the consumer
   reads asleep: the message, then CLOSED, never PEER_GONE first. The
   producer starts once the consumer has attached, so that one departure
   from the default schedule puts all three between the consumer's look
   at the records and its look at the owner word. Guards: srng_block,
   told of the departure, looks at the records and the closed flag once
   more before it says PEER_GONE (what the producer left is read first). */
static int producer_leaves(int closes) {
    shared_ring_producer p;
    if (shared_ring_attach_producer(&p, region, size, with_file()) != SHARED_RING_OK) return 64;
    reach_milestone(1);
    wait_for_milestone(2); /* the consumer attached */
    if (shared_ring_write_str(&p, "m", 0) != SHARED_RING_OK) return 65;
    if (closes && shared_ring_close(&p) != SHARED_RING_OK) return 66;
    if (!closes) wait_for_milestone(3); /* "m" was read */
    return shared_ring_detach_producer(&p) == SHARED_RING_OK ? 0 : 67;
}
static int producer_closes_and_leaves(void) { return producer_leaves(1); }
static int reader_of_one_closed(void) {
    return read_asleep("m", 1, SHARED_RING_CLOSED, AFTER_PRODUCER);
}
static const scenario asleep_through_close_and_detach = {
    "a consumer asleep in read gets the message, then CLOSED, from a producer that leaves",
    2, -1, formatted_region, { producer_closes_and_leaves, reader_of_one_closed, NULL }
};

/* c'. The same producer without the close, which detaches once the
   consumer has read the message: the consumer, asleep again, is woken by
   the detach and says PEER_GONE. (The consumer attaches while the
   producer is attached: one that never saw its producer, even one that
   slept through its whole life, has no departure to be told of, and
   waits for a producer.) Guards: srng_block looks at the producer's
   owner word again after announcing its sleep (a detach whose wake-up
   looked at the sleeping word before the announcement is not slept
   through), and a detach stores the owner word, then looks at the
   sleeping word (srng_leave). */
static int producer_detaches_unclosed(void) { return producer_leaves(0); }
static int reader_until_gone(void) {
    return read_asleep("m", 1, SHARED_RING_PEER_GONE, AFTER_PRODUCER);
}
static const scenario asleep_through_detach = {
    "a consumer asleep in read after the message is woken by a detach and says PEER_GONE",
    2, -1, formatted_region, { producer_detaches_unclosed, reader_until_gone, NULL }
};

/* d. A consumer that peeks the message, then peeks on to the close, and
   is killed before it releases: a new consumer (prepare, attach) is
   still given the message. Guards: prepare keeps a ring that holds a
   record at read_pos whatever close_seen says, since a peek reaches the
   close before the release (srng_holds_stream: at-least-once). */
static int consumer_peeks_past_the_close(void) {
    shared_ring_options o = waiting_options();
    shared_ring_consumer c;
    shared_ring_message m;
    int i, r = SHARED_RING_EMPTY, got = 0;
    if (shared_ring_attach_consumer_wait(&c, region, size, &o, LONG_NS) != SHARED_RING_OK)
        return 190;
    atomic_store(&ctl->victim_attached, 1);
    for (i = 0; i < 60; i++) {
        r = shared_ring_peek(&c, &m);
        if (r == SHARED_RING_OK) {
            if (m.len != 1 || *(const char *)m.data != 'm' || got++ != 0) return 191;
            continue;
        }
        if (r == SHARED_RING_CLOSED) break;
        if (r != SHARED_RING_EMPTY) return 192;
        yield_point();
    }
    if (got != 1 || r != SHARED_RING_CLOSED) return 193;
    yield_point(); /* the program's own work before it releases: it may be killed there */
    atomic_store(&ctl->released, 1); /* before the release: a kill may come between */
    if (shared_ring_release(&c) != 1) return 194;
    atomic_store(&ctl->victim_finished, 1);
    return shared_ring_detach_consumer(&c) == SHARED_RING_OK ? 0 : 195;
}
static int consumer_owed_the_message(void) {
    shared_ring_consumer c;
    shared_ring_message m;
    int i, r, got = 0;
    while (!atomic_load(&ctl->victim_attached)) yield_point(); /* a restart */
    if (shared_ring_prepare(region, size, CAPACITY, 0, region_fd) < 0) return 196;
    r = attach_when_free(NULL, &c);
    if (r == SHARED_RING_ERR_BUSY && atomic_load(&ctl->victim_finished)) return 0;
    if (r != SHARED_RING_OK) return 197;
    /* released: it took the message (the release may or may not have
       happened when it was killed): nothing is owed */
    if (atomic_load(&ctl->released)) return 0;
    for (i = 0; i < 60; i++) {
        r = shared_ring_peek(&c, &m);
        if (r == SHARED_RING_OK) {
            if (m.len != 1 || *(const char *)m.data != 'm' || got++ != 0) return 198;
            shared_ring_release(&c);
            continue;
        }
        if (r == SHARED_RING_CLOSED) return got == 1 ? 0 : 199; /* the message first */
        if (r != SHARED_RING_EMPTY) return 206;
        yield_point();
    }
    return 207; /* the message it was owed never came */
}
static const scenario peeked_past_the_close = {
    "a message peeked but not released when its consumer dies past the close is delivered again",
    3, 1, formatted_region,
    { producer_closes_and_detaches, consumer_peeks_past_the_close, consumer_owed_the_message }
};

/* e. An event loop: the consumer attached with wait and wake hooks reads
   with read_some, arms when it finds nothing, and sleeps until its
   descriptor is signalled; the producer publishes, closes and detaches
   (possibly between arm's looks: it starts once the consumer attached, so
   that one departure from the default schedule puts it there). It gets
   the message and CLOSED, never PEER_GONE, and never sleeps for ever.
   Guards: shared_ring_arm, told of a departure, looks at the records and
   the closed flag again before it says PEER_GONE; it announces the sleep,
   then looks, against the producer's publish and close, whose wake hook
   signals the loop. */
static shared_ring_options hook_options(void) {
    shared_ring_options o = sleeping_options();
    o.wait = hook_wait;
    o.wake = hook_wake;
    return o;
}
static int producer_with_hooks_leaves(void) {
    shared_ring_options o = hook_options();
    shared_ring_producer p;
    if (shared_ring_attach_producer(&p, region, size, &o) != SHARED_RING_OK) return 210;
    wait_for_milestone(1); /* the consumer attached */
    if (shared_ring_write_str(&p, "m", 0) != SHARED_RING_OK) return 211;
    if (shared_ring_close(&p) != SHARED_RING_OK) return 212;
    return shared_ring_detach_producer(&p) == SHARED_RING_OK ? 0 : 213;
}
static int event_loop_consumer(void) {
    shared_ring_options o = hook_options();
    shared_ring_consumer c;
    collected k;
    int i, r;
    memset(&k, 0, sizeof k);
    if (shared_ring_attach_consumer(&c, region, size, &o) != SHARED_RING_OK) return 215;
    reach_milestone(1);
    for (i = 0; i < 40; i++) {
        r = shared_ring_read_some(&c, collect, &k);
        if (r == SHARED_RING_EMPTY) r = shared_ring_arm(&c);
        if (k.bad) return 216;
        if (r >= 1) continue; /* read (more) first */
        if (r == SHARED_RING_OK) {
            sleep_on_descriptor(); /* armed */
            continue;
        }
        if (r == SHARED_RING_PEER_GONE) return 217; /* before the message and the close */
        if (r != SHARED_RING_CLOSED) return 218;
        return k.n == 1 && k.got[0] == 'm' ? 0 : 219;
    }
    return 220;
}
static const scenario event_loop = {
    "an event loop that arms gets the message and CLOSED, never PEER_GONE, from one that leaves",
    2, -1, formatted_region, { producer_with_hooks_leaves, event_loop_consumer, NULL }
};

/* f. Aligned claims of the longest messages at write positions where
   the lap ends first, on a ring the consumer drains: OK, or ERR_TOO_BIG
   for a length whose record and largest filler exceed half the ring,
   never a wait for ever: such a claim sleeps on in liveness-look slices
   until the driver's step limit fails the run. No timeout: the driver may
   end any timed sleep at a wake-up, even one from the consumer's attach
   before it read. Guards: an aligned
   claim reserves its record and its largest filler, and refuses what
   cannot fit in half the ring, as any message must (srng_claim_record).
   The plain test after the driver tries every position. */

static int skip_message(void *user, const void *data, size_t len) {
    (void)user, (void)data, (void)len;
    return 0;
}

/* Move the write position to `target` (an offset in the data area) with
   messages of filler, each waiting up to timeout_ns for room; `drain`
   (the same process's consumer, or NULL) reads after each. */
static int move_write_to(shared_ring_producer *p, uint64_t target, uint64_t timeout_ns,
                         shared_ring_consumer *drain) {
    static unsigned char filler[CAPACITY]; /* zeros: no claimed message's 'c' */
    uint64_t longest = srng_record_size(shared_ring_producer_max_message(p));
    while ((p->write_pos & p->s.mask) != target) {
        uint64_t off = p->write_pos & p->s.mask;
        /* to the target, or to the lap's end first */
        uint64_t rec = target > off ? target - off : p->s.capacity - off;
        int r;
        if (rec > longest) rec = longest;
        before_a_call();
        r = shared_ring_write_bytes(p, filler, (size_t)(rec - 8u), timeout_ns);
        RETURN_IF_A_WAKE_WAS_MISSED(r);
        if (r != SHARED_RING_OK) return r;
        if (drain != NULL && shared_ring_read_some(drain, skip_message, NULL) != 1) return 240;
    }
    return SHARED_RING_OK;
}

/* An aligned claim of `len` at the write position now: 0 if it gave OK
   (then committed, and counted in ctl->published) or an acceptable
   ERR_TOO_BIG (record and largest filler above half the ring), else an
   exit code: 227 FULL, 228 TIMEOUT, 229 another result. */
static int claim_aligned_at_once(shared_ring_producer *p, size_t len, size_t align,
                                 uint64_t timeout_ns) {
    void *ptr;
    int r;
    before_a_call();
    r = shared_ring_claim_aligned(p, len, align, &ptr, timeout_ns);
    RETURN_IF_A_WAKE_WAS_MISSED(r);
    if (r == SHARED_RING_ERR_TOO_BIG && srng_record_size(len) + align - 8u > p->s.capacity / 2u)
        return 0;
    if (r != SHARED_RING_OK)
        return r == SHARED_RING_FULL ? 227 : r == SHARED_RING_TIMEOUT ? 228 : 229;
    if (((uintptr_t)ptr & (align - 1u)) != 0) return 241;
    memset(ptr, 'c', len);
    if (shared_ring_commit(p, len) != SHARED_RING_OK) return 242;
    atomic_fetch_add(&ctl->published, 1);
    return 0;
}

static const uint64_t claim_offsets[] = { CAPACITY / 2u + 8u, CAPACITY - 8u, 8u };
static int producer_of_aligned_claims(void) {
    shared_ring_options o = sleeping_options();
    shared_ring_producer p;
    size_t max;
    unsigned i;
    int r = 0;
    if (shared_ring_attach_producer(&p, region, size, &o) != SHARED_RING_OK) return 225;
    max = shared_ring_producer_max_message(&p);
    for (i = 0; r == 0 && i < sizeof claim_offsets / sizeof *claim_offsets; i++) {
        r = move_write_to(&p, claim_offsets[i], LONG_NS, NULL);
        if (r != 0) {
            r = r == LOST_WAKE ? r : 226;
            break;
        }
        r = claim_aligned_at_once(&p, max, 64u, SHARED_RING_FOREVER); /* OK, or TOO_BIG */
        if (r == 0) r = claim_aligned_at_once(&p, CAPACITY / 2u - 64u, 64u, SHARED_RING_FOREVER); /* fits */
    }
    /* closed even after a failure, so that the consumer ends */
    if (p.claim_len != SRNG_NO_CLAIM) (void)shared_ring_abort(&p);
    if (shared_ring_close(&p) != SHARED_RING_OK && r == 0) r = 230;
    return r;
}
/* The claimed messages (filled with 'c'; the filler messages are zeros)
   arrive 64-byte aligned. */
typedef struct claimed {
    int count, misaligned;
} claimed;
static int count_claimed(void *user, const void *data, size_t len) {
    claimed *k = (claimed *)user;
    if (len == 0 || *(const char *)data != 'c') return 0; /* filler */
    k->count++;
    if (((uintptr_t)data & 63u) != 0) k->misaligned = 1;
    return 0;
}
static int reader_of_aligned_claims(void) {
    shared_ring_options o = sleeping_options();
    shared_ring_consumer c;
    claimed k = { 0, 0 };
    int i, r;
    if (shared_ring_attach_consumer(&c, region, size, &o) != SHARED_RING_OK) return 231;
    for (i = 0; i < 60; i++) {
        before_a_call();
        r = shared_ring_read(&c, count_claimed, &k, SHARED_RING_FOREVER);
        RETURN_IF_A_WAKE_WAS_MISSED(r);
        if (r >= 1) continue;
        if (r != SHARED_RING_CLOSED) return 232;
        if (k.misaligned) return 233;
        return k.count == atomic_load(&ctl->published) ? 0 : 234;
    }
    return 235;
}
static const scenario aligned_claims = {
    "aligned claims of the longest messages never wait for room that cannot come",
    2, -1, formatted_region, { producer_of_aligned_claims, reader_of_aligned_claims, NULL }
};

/* g. A format under a live consumer handle whose next record is still
   in the data area: its next read and wait say ERR_CORRUPT, never deliver
   the old ring's message. Guards: every wait looks at the ring id before
   it looks at a record (srng_same_ring). */
static int producer_then_formatter(void) {
    shared_ring_producer p;
    if (shared_ring_attach_producer(&p, region, size, with_file()) != SHARED_RING_OK) return 244;
    if (shared_ring_write_str(&p, "a", 0) != SHARED_RING_OK ||
        shared_ring_write_str(&p, "b", 0) != SHARED_RING_OK)
        return 245;
    wait_for_milestone(1); /* "a" was read */
    if (shared_ring_format(region, size, CAPACITY, 0) != SHARED_RING_OK) return 246;
    reach_milestone(2);
    return 0;
}
static int consumer_under_a_format(void) {
    shared_ring_options o = sleeping_options();
    shared_ring_consumer c;
    collected k;
    int r;
    memset(&k, 0, sizeof k);
    k.stop = 1;
    if (shared_ring_attach_consumer(&c, region, size, &o) != SHARED_RING_OK) return 247;
    before_a_call();
    r = shared_ring_read(&c, collect, &k, SHARED_RING_FOREVER);
    RETURN_IF_A_WAKE_WAS_MISSED(r);
    if (r != 1 || k.got[0] != 'a') return 248;
    reach_milestone(1);
    wait_for_milestone(2); /* formatted */
    r = shared_ring_read(&c, collect, &k, LONG_NS);
    if (k.n != 1) return 249; /* the old ring's "b" */
    if (r != SHARED_RING_ERR_CORRUPT) return 250;
    return shared_ring_wait(&c, LONG_NS) == SHARED_RING_ERR_CORRUPT ? 0 : 251;
}
static const scenario formatted_under_a_reader = {
    "a consumer whose ring was formatted under it says ERR_CORRUPT, never the old ring's message",
    2, -1, formatted_region, { producer_then_formatter, consumer_under_a_format, NULL }
};

/* ---- the driver -------------------------------------------------------------- */

typedef struct run {
    int steps;
    int choice[MAX_STEPS];            /* who moved at each step (KILL + i: i was killed;
                                         LATE + i: i moved, its sleep ended late) */
    unsigned char enabled[MAX_STEPS]; /* a bit per actor parked then */
    unsigned char late[MAX_STEPS];    /* a bit per actor woken there with a timeout running */
    unsigned char yielded[MAX_STEPS]; /* the last mover yielded there */
    char point[MAX_STEPS][POINT_NAME];
    int status[ACTORS];
    int killed; /* the step at which the victim was killed, or -1 */
    pid_t killed_pid;
    int failed;
} run;

/* A choice KILL + i kills actor i where it is parked; LATE + i moves
   actor i, whose sleep was woken, as if its timeout had passed at the same
   moment (the kernel then says ETIMEDOUT, and the time is gone). */
enum { KILL = ACTORS, LATE = 2 * ACTORS };

static run trial;
static uint64_t schedules_run;

/* Has the sleep of actor i ended: its word changed, or a wake came (on
   the word, or to the descriptor), since it went to sleep? */
static int sleep_over(int i) {
    const sleeper *sl = &ctl->sleep[i];
    if (sl->kind == SLEEP_ON_DESCRIPTOR) return atomic_load(&ctl->signals) != sl->seen;
    if (sl->kind == SLEEP_ON_MILESTONE) return atomic_load(&ctl->progress) >= (int)sl->seen;
    return sl->woken || atomic_load((atomic_uint *)(void *)(region + sl->off)) != sl->expected;
}

/* The actors that can move: parked, and not in a sleep that goes on. */
static int enabled_now(const scenario *sc) {
    int bits = 0, i;
    for (i = 0; i < sc->actors; i++)
        if (atomic_load(&ctl->state[i]) == PARKED && (!ctl->sleep[i].asleep || sleep_over(i)))
            bits |= 1 << i;
    return bits;
}

/* The actors asleep with a timeout: when none can move, one of them
   times out (or, if none has one, the first asleep for ever, a hang). */
static int asleep_now(const scenario *sc) {
    int bits = 0, forever = 0, i;
    for (i = 0; i < sc->actors; i++)
        if (atomic_load(&ctl->state[i]) == PARKED && ctl->sleep[i].asleep) {
            if (ctl->sleep[i].timeout != SHARED_RING_FOREVER)
                bits |= 1 << i;
            else if (forever == 0)
                forever = 1 << i;
        }
    return bits != 0 ? bits : forever;
}

/* Wait for the driver's turn; an actor that died while running (a
   signal) is marked done. 0 if no actor came back within 10 s. */
static int wait_for_turn(const scenario *sc, pid_t *pids) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (atomic_load(&ctl->turn) != -1) {
        unsigned bell = atomic_load(&ctl->bell);
        int i;
        if (atomic_load(&ctl->turn) == -1) break;
        control_wait(&ctl->bell, bell, 1000000); /* 1 ms: then look for the dead */
        for (i = 0; i < sc->actors; i++) {
            int st;
            if (pids[i] > 0 && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
                trial.status[i] = st;
                pids[i] = 0;
                atomic_store(&ctl->state[i], DONE);
                if (atomic_load(&ctl->turn) == i) atomic_store(&ctl->turn, -1); /* it died running */
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 10) return 0;
    }
    return 1;
}

/* SIGKILL where it is parked; reaped at once, so that its pid is gone
   from /proc as it would be for a peer (a zombie is not yet dead). */
static void kill_actor(int i, pid_t *pids) {
    kill(pids[i], SIGKILL);
    waitpid(pids[i], &trial.status[i], 0);
    trial.killed_pid = pids[i];
    pids[i] = 0;
    atomic_store(&ctl->state[i], DONE);
    atomic_store(&ctl->victim_attached, 1); /* a restart may begin */
    trial.killed = trial.steps - 1;
}

static void start_actor(const scenario *sc, int i) {
    int code;
    me = i;
    sched_point("start");
    code = sc->actor[i]();
    atomic_store(&ctl->code[i], code);
    atomic_store(&ctl->state[i], DONE);
    hand_back();
    while (!atomic_load(&ctl->release_all)) /* alive until all are done */
        control_wait(&ctl->release_all, 0u, 0);
    _exit(code);
}

/* Run the scenario once: follow `forced` for its first `nforced` steps,
   then the default (keep running the last mover while it can, unless it
   yielded; else the next actor in turn). With `seed`, choose at random
   instead. Fills `trial`; returns 1 if every actor ended as expected. */
static int run_once(const scenario *sc, const int *forced, int nforced, unsigned seed) {
    pid_t pids[ACTORS] = { 0 };
    int i, last = -1;
    memset(&trial, 0, sizeof trial);
    trial.killed = -1;
    memset(ctl, 0, sizeof *ctl);
    atomic_store(&ctl->turn, -2); /* nobody yet */
    sc->setup();
    for (i = 0; i < sc->actors; i++) {
        pids[i] = harness_fork();
        if (pids[i] == 0) start_actor(sc, i);
    }
    /* Every actor parks at "start" first, and hands the turn back: wait for its bell, not its
       PARKED. An actor preempted between the two would store turn -1 over the first turn given,
       and the driver would count a step that never ran (a replay then diverged, rarely, under
       load). */
    for (;;) {
        unsigned bell = atomic_load(&ctl->bell);
        if (bell >= (unsigned)sc->actors) break;
        control_wait(&ctl->bell, bell, 1000000);
        for (i = 0; i < sc->actors; i++) /* one that died before "start" never rings */
            if (pids[i] > 0 && waitpid(pids[i], &trial.status[i], WNOHANG) == pids[i]) {
                pids[i] = 0;
                trial.failed = 1;
                snprintf(trial.point[trial.steps++], POINT_NAME, "(died before start)");
                goto end;
            }
    }
    atomic_store(&ctl->turn, -1);
    for (;;) {
        int bits, pick, who, yielded, timeouts = 0, late = 0;
        if (!wait_for_turn(sc, pids)) {
            trial.failed = 1;
            snprintf(trial.point[trial.steps], POINT_NAME, "(hang)");
            break;
        }
        for (i = 0; i < sc->actors; i++) /* an actor that failed ends the run */
            if (pids[i] != 0 && atomic_load(&ctl->state[i]) == DONE &&
                atomic_load(&ctl->code[i]) != 0)
                trial.failed = 1;
        if (trial.failed) break;
        bits = enabled_now(sc);
        if (bits == 0) { /* nothing can happen but the end of a sleep by its timeout */
            bits = asleep_now(sc);
            timeouts = bits != 0;
        }
        if (bits == 0 || trial.steps == MAX_STEPS) break;
        for (i = 0; i < sc->actors && !timeouts; i++) /* woken, with a timeout running */
            if ((bits >> i & 1) && ctl->sleep[i].asleep &&
                ctl->sleep[i].timeout != SHARED_RING_FOREVER)
                late |= 1 << i;
        yielded = last >= 0 && (strcmp(ctl->at[last], "yield") == 0 ||
                                strcmp(ctl->at[last], "nap") == 0);
        if (trial.steps < nforced) {
            pick = forced[trial.steps];
        } else if (seed != 0) {
            do pick = (int)((seed = seed * 1103515245u + 12345u) >> 16) % sc->actors;
            while (!(bits >> pick & 1));
            if (pick == sc->victim && trial.killed < 0 && (seed >> 8) % 16 == 0)
                pick += KILL;
            else if ((late >> pick & 1) && (seed >> 12) % 4 == 0)
                pick += LATE;
        } else if (last >= 0 && (bits >> last & 1) && !yielded && !timeouts) {
            pick = last; /* (a timeout goes round the sleepers: one each) */
        } else {
            pick = last;
            do pick = (pick + 1) % sc->actors;
            while (!(bits >> pick & 1));
        }
        who = pick % ACTORS;
        if (!(bits >> who & 1) || (pick >= LATE && !(late >> who & 1))) {
            /* a forced choice not possible here: the run did not repeat */
            trial.failed = 1;
            snprintf(trial.point[trial.steps++], POINT_NAME, "(replay diverged)");
            break;
        }
        trial.choice[trial.steps] = pick;
        trial.enabled[trial.steps] = (unsigned char)bits;
        trial.late[trial.steps] = (unsigned char)late;
        trial.yielded[trial.steps] = (unsigned char)yielded;
        snprintf(trial.point[trial.steps], POINT_NAME, "%s", ctl->at[who]);
        if ((pick < KILL || pick >= LATE) && ctl->sleep[who].asleep)
            snprintf(trial.point[trial.steps], POINT_NAME, "%.16s: %s", ctl->at[who],
                     pick >= LATE ? "timed out, woken too"
                     : !timeouts  ? "woken"
                     : ctl->sleep[who].timeout != SHARED_RING_FOREVER ? "timed out"
                                                                       : "(hang: for ever)");
        trial.steps++;
        if (pick >= KILL && pick < LATE) {
            kill_actor(who, pids);
            continue;
        }
        if (timeouts && ctl->sleep[who].timeout == SHARED_RING_FOREVER) {
            trial.failed = 1; /* no wake-up will ever come */
            break;
        }
        ctl->sleep[who].timed_out = timeouts || pick >= LATE;
        last = who;
        atomic_store(&ctl->turn, who);
        atomic_fetch_add(&ctl->go[who], 1u);
        control_wake(&ctl->go[who]);
    }
end:
    if (trial.steps == MAX_STEPS) trial.failed = 1;
    atomic_store(&ctl->release_all, 1);
    control_wake(&ctl->release_all);
    for (i = 0; i < sc->actors; i++) {
        if (pids[i] == 0) continue;
        if (atomic_load(&ctl->state[i]) != DONE) kill(pids[i], SIGKILL); /* it would never end */
        waitpid(pids[i], &trial.status[i], 0);
    }
    schedules_run++;
    for (i = 0; i < sc->actors; i++)
        if (trial.status[i] != 0 && !(trial.killed >= 0 && i == sc->victim)) trial.failed = 1;
    return !trial.failed;
}

/* The trail, a line per run of one actor's steps (its first and last
   points), so that a spinning actor takes one line, not thousands. */
static void print_trail(const scenario *sc) {
    int i, from = 0;
    fprintf(stderr, "  %s: failing schedule (%d steps):\n", sc->name, trial.steps);
    for (i = 1; i <= trial.steps; i++) {
        if (i < trial.steps && trial.choice[i] == trial.choice[from]) continue;
        fprintf(stderr, "    %s%c: %s",
                trial.choice[from] >= KILL && trial.choice[from] < LATE ? "kill " : "",
                'A' + trial.choice[from] % ACTORS, trial.point[from]);
        if (i - from > 1) fprintf(stderr, " ... %s (%d steps)", trial.point[i - 1], i - from);
        fprintf(stderr, "\n");
        from = i;
    }
    for (i = 0; i < sc->actors; i++)
        fprintf(stderr, "    actor %c: %s %d%s\n", 'A' + i,
                WIFSIGNALED(trial.status[i]) ? "killed by signal" : "exit",
                WIFSIGNALED(trial.status[i]) ? WTERMSIG(trial.status[i])
                                             : WEXITSTATUS(trial.status[i]),
                !WIFEXITED(trial.status[i]) ? ""
                : WEXITSTATUS(trial.status[i]) == LOST_WAKE
                    ? " (a lost wake-up: its call found what it waited for after a timeout)"
                : WEXITSTATUS(trial.status[i]) == WAKE_IGNORED
                    ? " (TIMEOUT, though its last sleep ended with a wake-up and a message)"
                    : "");
}

/* Every schedule that departs from the default schedule (run_once's) at
   most `bound` times: at each step past the forced prefix, each other
   actor that could move there is tried, and the rest of that run explored
   with one departure fewer to spend. Returns 1 if all passed; on a
   failure prints its trail. */
static int explore(const scenario *sc, int *prefix, int n, int departures, int bound) {
    static run saved[3]; /* one per depth: each level spends one departure */
    int j, a;
    if (!run_once(sc, prefix, n, 0)) {
        print_trail(sc);
        return 0;
    }
    if (departures == bound) return 1;
    saved[departures] = trial;
    for (j = n; j < saved[departures].steps; j++) {
        const run *t = &saved[departures];
        for (a = 0; a < sc->actors + 2; a++) {
            int alternative = a;
            if (a == sc->actors) { /* kill the victim */
                /* at each point the victim reached: right after it moved */
                if (sc->victim < 0 || (t->killed >= 0 && t->killed <= j) ||
                    !(t->enabled[j] >> sc->victim & 1) ||
                    (j > 0 && t->choice[j - 1] != sc->victim))
                    continue;
                alternative = KILL + sc->victim;
            } else if (a == sc->actors + 1) { /* the mover woken, its timeout passed too */
                if (sc->victim >= 0 || t->choice[j] >= KILL || !(t->late[j] >> t->choice[j] & 1))
                    continue;
                alternative = LATE + t->choice[j];
            } else if (a == t->choice[j] || !(t->enabled[j] >> a & 1) || sc->victim >= 0) {
                continue; /* with a victim, the departures explored are its deaths */
            }
            memcpy(prefix, t->choice, (size_t)j * sizeof *prefix);
            prefix[j] = alternative;
            if (!explore(sc, prefix, j + 1, departures + 1, bound)) return 0;
        }
    }
    return 1;
}

static int explore_bound = 2; /* -q: 1 */

/* Up to `most` departures (a heavy scenario's schedules grow as its
   steps to that power), fewer with -q. */
static void check_scenario_bounded(const scenario *sc, int most, int randoms) {
    static int prefix[MAX_STEPS];
    uint64_t before = schedules_run;
    int ok, i, bound = sc->victim >= 0 ? 1 : explore_bound; /* a kill at every step */
    if (bound > most) bound = most;
    ok = explore(sc, prefix, 0, 0, bound);
    for (i = 1; ok && i <= randoms; i++) {
        ok = run_once(sc, NULL, 0, (unsigned)i * 2654435761u);
        if (!ok) print_trail(sc);
    }
    printf("  %s: %llu schedules (up to %d departures, %d random)%s\n", sc->name,
           (unsigned long long)(schedules_run - before), bound, randoms, ok ? "" : ": FAILED");
    CHECK(ok);
}

static void check_scenario(const scenario *sc, int randoms) {
    check_scenario_bounded(sc, 2, randoms);
}

TEST(a_live_producer_is_never_judged_gone_while_another_process_prepares_and_attaches) {
    check_scenario(&live_peer_never_gone, 200);
}
TEST(two_programs_started_together_both_attach_and_the_stream_arrives_whole) {
    check_scenario(&start_together, 200);
}
TEST(two_programs_started_together_both_attach_with_the_stream_open) {
    check_scenario(&start_together_open, 200);
}
TEST(close_then_detach_is_read_as_closed_in_every_schedule) {
    check_scenario(&close_then_detach, 200);
}
TEST(a_stream_closed_before_its_consumer_prepared_is_delivered_in_every_schedule) {
    check_scenario(&finished_before_consumer, 200);
}
TEST(two_openers_sizing_one_object_never_shrink_it_under_a_mapping) {
    check_scenario(&sizing_race, 50);
}

TEST(a_producer_killed_at_any_point_is_taken_over_and_nothing_it_published_is_lost) {
    check_scenario(&producer_killed, 200);
}
TEST(a_consumer_killed_at_any_point_is_taken_over_and_the_next_one_reads_on) {
    check_scenario(&consumer_killed, 200);
}

/* The scenarios that sleep: fewer random schedules than the ones above
   (each has a few hundred at most), and one departure for the heavy ones. */
TEST(a_consumer_asleep_in_wait_is_woken_for_every_message_and_the_close) {
    check_scenario(&asleep_in_read, 50);
}
TEST(a_consumer_in_short_timed_waits_reads_a_message_whose_wake_up_came_with_its_timeout) {
    check_scenario(&asleep_in_short_waits, 50);
}
TEST(a_producer_blocked_on_a_full_ring_is_woken_and_finishes) {
    check_scenario_bounded(&blocked_on_full, 1, 30);
}
TEST(a_consumer_asleep_gets_the_message_then_closed_from_a_producer_that_closes_and_detaches) {
    check_scenario(&asleep_through_close_and_detach, 50);
}
TEST(a_consumer_asleep_after_the_message_is_woken_by_a_detach_and_says_peer_gone) {
    check_scenario(&asleep_through_detach, 50);
}
TEST(a_message_peeked_past_the_close_by_a_consumer_that_dies_is_delivered_again) {
    check_scenario(&peeked_past_the_close, 40);
}
TEST(an_event_loop_that_arms_never_hears_peer_gone_before_the_message_and_the_close) {
    check_scenario(&event_loop, 50);
}
TEST(aligned_claims_of_the_longest_messages_never_wait_for_room_that_cannot_come) {
    check_scenario_bounded(&aligned_claims, 1, 10);
}
TEST(a_consumer_whose_ring_was_formatted_under_it_says_corrupt_not_the_old_message) {
    check_scenario_bounded(&formatted_under_a_reader, 1, 30);
}

/* f, at every write position: in one process, the ring drained before
   each claim, an aligned claim of each length near the limit and each
   alignment is OK (and arrives aligned), or ERR_TOO_BIG for a record and
   largest filler above half the ring; never FULL. */
static int check_aligned_message(void *user, const void *data, size_t len) {
    size_t align = *(const size_t *)user;
    if (len != 0 && *(const char *)data == 'c' && ((uintptr_t)data & (align - 1u)) != 0)
        *(size_t *)user = 0; /* a claimed message, misaligned */
    return 0;
}
TEST(an_aligned_claim_at_any_write_position_of_an_empty_ring_is_ok_or_too_big_never_full) {
    shared_ring_producer p;
    shared_ring_consumer c;
    size_t max, lens[4], aligns[3] = { 16, 32, 64 };
    uint64_t off;
    unsigned i, j, failures = 0;
    formatted_region();
    CHECK_EQ(shared_ring_attach_producer(&p, region, size, with_file()), SHARED_RING_OK);
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, with_file()), SHARED_RING_OK);
    max = shared_ring_producer_max_message(&p);
    lens[0] = max;
    lens[1] = CAPACITY / 2u - 56u; /* too big with any filler of 16 or more */
    lens[2] = CAPACITY / 2u - 64u; /* fits with the largest filler of 64 */
    lens[3] = 1000u;
    for (off = 0; off < CAPACITY && failures < 5; off += 8u)
        for (i = 0; i < 4; i++)
            for (j = 0; j < 3; j++) {
                size_t seen = aligns[j];
                int r = move_write_to(&p, off, 0, &c);
                if (r == 0) r = claim_aligned_at_once(&p, lens[i], aligns[j], 0);
                while (shared_ring_read_some(&c, check_aligned_message, &seen) > 0) {
                }
                if (r != 0 || seen == 0) {
                    fprintf(stderr, "  claim_aligned(%zu, %zu) at offset %llu: exit code %d%s\n",
                            lens[i], aligns[j], (unsigned long long)off, r,
                            seen == 0 ? " (misaligned)" : " (227: FULL)");
                    failures++;
                }
            }
    CHECK_EQ(failures, 0);
}

/* h. Adoption with the peer's descriptor open: the producer attaches in
   process A; the consumer (this process) takes shared_ring_consumer_peer_fd;
   A forks a child that adopts the producer, then A exits. The consumer's
   calls do not say PEER_GONE; asked again before its loop sleeps, as the
   contract says, shared_ring_consumer_peer_fd gives a descriptor of the
   live child, not readable, and closes the one of A, which has served
   (readable now: a loop that kept it would never sleep); the child's
   message and close arrive, and once the child has detached no
   descriptor is left open. Guards: a handle judges its peer's new owner
   word, not the pidfd of the old one (srng_peer_exited), and the peer fd
   call replaces a descriptor that has served (srng_peer_fd). A fork in an
   actor would leave the driver a process it cannot schedule, so this is a
   plain test: its steps are ordered by pipes. */
static int readable(int fd) {
    struct pollfd pfd = { fd, POLLIN, 0 };
    return poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN) != 0;
}
static void say(int fd, char c) {
    if (write(fd, &c, 1) != 1) _exit(90);
}
static char hear(int fd) {
    char c = 0;
    if (read(fd, &c, 1) != 1) return 0;
    return c;
}
TEST(an_adopted_producer_is_a_live_peer_and_the_peer_fd_follows_it) {
    int to_a[2], from_a[2], adopted[2], old_fd, new_fd, r, i, status = -1;
    shared_ring_consumer c;
    shared_ring_message m;
    pid_t a;
    formatted_region();
    if (pipe(to_a) != 0 || pipe(from_a) != 0 || pipe(adopted) != 0) abort();
    a = harness_fork();
    if (a == 0) {
        shared_ring_producer p;
        alarm(20);
        if (shared_ring_attach_producer(&p, region, size, with_file()) != SHARED_RING_OK) _exit(1);
        say(from_a[1], 'a'); /* attached */
        hear(to_a[0]);       /* the consumer holds its peer fd */
        if (harness_fork() == 0) {
            int ok = shared_ring_adopt_producer(&p) == SHARED_RING_OK;
            say(adopted[1], ok ? 'd' : 'x'); /* to A: it may exit now */
            say(from_a[1], ok ? 'd' : 'x');
            hear(to_a[0]); /* the consumer looked */
            ok = ok && shared_ring_write_str(&p, "m", 0) == SHARED_RING_OK &&
                 shared_ring_close(&p) == SHARED_RING_OK &&
                 shared_ring_detach_producer(&p) == SHARED_RING_OK;
            _exit(ok ? 0 : 2);
        }
        hear(adopted[0]);
        _exit(0); /* the attaching process ends; its child holds the side */
    }
    CHECK_EQ(hear(from_a[0]), 'a');
    CHECK_EQ(shared_ring_attach_consumer(&c, region, size, with_file()), SHARED_RING_OK);
    old_fd = shared_ring_consumer_peer_fd(&c);
    CHECK(old_fd >= 0);
    CHECK(!readable(old_fd));
    say(to_a[1], 'g');
    CHECK_EQ(hear(from_a[0]), 'd');
    waitpid(a, &status, 0); /* A has exited: a pidfd of A is readable now */
    CHECK_EQ(status, 0);
    r = shared_ring_peek(&c, &m);
    CHECK_EQ(r, SHARED_RING_EMPTY); /* not PEER_GONE: the side is the child's */
    new_fd = shared_ring_consumer_peer_fd(&c); /* before the loop sleeps */
    CHECK(new_fd >= 0);
    CHECK(new_fd < 0 || !readable(new_fd)); /* the child lives */
    /* A's: closed (another number), or this very number now watching the child */
    CHECK(new_fd == old_fd ? !readable(old_fd) : fcntl(old_fd, F_GETFD) == -1);
    CHECK_EQ(shared_ring_consumer_peer_fd(&c), new_fd); /* the same while the child holds it */
    say(to_a[1], 'g');
    r = shared_ring_wait(&c, LONG_NS);
    CHECK_EQ(r, SHARED_RING_OK);
    r = shared_ring_peek(&c, &m);
    CHECK_EQ(r, SHARED_RING_OK);
    CHECK(r == SHARED_RING_OK && m.len == 1 && *(const char *)m.data == 'm');
    shared_ring_release(&c);
    r = shared_ring_wait(&c, LONG_NS);
    CHECK_EQ(r, SHARED_RING_CLOSED);
    for (i = 0; i < 10000 && fcntl(new_fd, F_GETFD) != -1 && shared_ring_consumer_peer_fd(&c) >= 0;
         i++)
        usleep(1000); /* until the child detached: then no peer, and its descriptor closed */
    CHECK(fcntl(new_fd, F_GETFD) == -1);
    CHECK_EQ(shared_ring_detach_consumer(&c), SHARED_RING_OK);
    close(to_a[0]), close(to_a[1]), close(from_a[0]), close(from_a[1]);
    close(adopted[0]), close(adopted[1]);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && strcmp(argv[1], "-q") == 0) explore_bound = 1;
    ctl = mmap(NULL, sizeof *ctl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ctl == MAP_FAILED) abort();
    RUN(close_then_detach_is_read_as_closed_in_every_schedule);
    RUN(a_stream_closed_before_its_consumer_prepared_is_delivered_in_every_schedule);
    RUN(a_live_producer_is_never_judged_gone_while_another_process_prepares_and_attaches);
    RUN(two_programs_started_together_both_attach_and_the_stream_arrives_whole);
    RUN(two_programs_started_together_both_attach_with_the_stream_open);
    RUN(two_openers_sizing_one_object_never_shrink_it_under_a_mapping);
    shared_ring_shm_unlink(shm_name);
    RUN(a_producer_killed_at_any_point_is_taken_over_and_nothing_it_published_is_lost);
    RUN(a_consumer_killed_at_any_point_is_taken_over_and_the_next_one_reads_on);
    RUN(a_consumer_asleep_in_wait_is_woken_for_every_message_and_the_close);
    RUN(a_consumer_in_short_timed_waits_reads_a_message_whose_wake_up_came_with_its_timeout);
    RUN(a_producer_blocked_on_a_full_ring_is_woken_and_finishes);
    RUN(a_consumer_asleep_gets_the_message_then_closed_from_a_producer_that_closes_and_detaches);
    RUN(a_consumer_asleep_after_the_message_is_woken_by_a_detach_and_says_peer_gone);
    RUN(a_message_peeked_past_the_close_by_a_consumer_that_dies_is_delivered_again);
    RUN(an_event_loop_that_arms_never_hears_peer_gone_before_the_message_and_the_close);
    RUN(aligned_claims_of_the_longest_messages_never_wait_for_room_that_cannot_come);
    RUN(an_aligned_claim_at_any_write_position_of_an_empty_ring_is_ok_or_too_big_never_full);
    RUN(a_consumer_whose_ring_was_formatted_under_it_says_corrupt_not_the_old_message);
    RUN(an_adopted_producer_is_a_live_peer_and_the_peer_fd_follows_it);
    return harness_summary("interleave");
}
