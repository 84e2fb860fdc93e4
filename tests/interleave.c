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
   library's liveness interval, so the next wait judges the peer. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sched_point(const char *what);
static uint64_t virtual_now(void);
#define SRNG_SCHED_POINT(what) sched_point(what)
#define SHARED_RING_NOW_NS() virtual_now()
#define SHARED_RING_SHM
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "harness.h"

enum { ACTORS = 3, MAX_STEPS = 4000, POINT_NAME = 40 };
enum { NOT_STARTED, RUNNING, PARKED, DONE };

/* The control block, shared by the driver and its actors. */
typedef struct control {
    atomic_int turn; /* the actor that may run, or -1: the driver's turn */
    atomic_int published; /* what a victim's calls returned OK for: */
    atomic_int released;  /* what it is owed, or what it took */
    atomic_int victim_attached; /* set by the victim, or by the driver */
    atomic_int victim_finished; /* when it kills the victim */
    atomic_int state[ACTORS];
    atomic_int release_all; /* actors that are done wait for this to exit */
    char at[ACTORS][POINT_NAME];
} control;

static control *ctl;
static int me = -1; /* this process's actor, or -1: the driver, or free */
static __thread int thread_holds_identity; /* see the fork test */
static int parked_pipe[2] = { -1, -1 }, gate_pipe[2] = { -1, -1 };

static uint64_t virtual_clock = 1000000000u;
static uint64_t virtual_now(void) { return virtual_clock += 1000u; }

static void sched_point(const char *what) {
    if (thread_holds_identity && strcmp(what, "identity: being read") == 0) {
        char c;
        (void)!write(parked_pipe[1], "p", 1); /* "parked inside the read" */
        (void)!read(gate_pipe[0], &c, 1);      /* until the test lets go */
        return;
    }
    if (me < 0) return;
    snprintf(ctl->at[me], POINT_NAME, "%s", what);
    atomic_store(&ctl->state[me], PARKED);
    atomic_store(&ctl->turn, -1);
    while (atomic_load(&ctl->turn) != me) sched_yield();
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

/* A region in a file of its own (region_fd can name it), zeroed. */
static void fresh_file_region(void) {
    char path[] = "/tmp/shared_ring_interleave_XXXXXX";
    if (region != NULL) munmap(region, size);
    if (region_fd >= 0) close(region_fd);
    size = shared_ring_region_size(CAPACITY, 0);
    region_fd = mkstemp(path);
    if (region_fd < 0 || ftruncate(region_fd, (off_t)size) != 0) abort();
    unlink(path);
    region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, region_fd, 0);
    if (region == MAP_FAILED) abort();
}

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
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 20;
    if (shared_ring_attach_consumer_wait(&c, region, size, NULL, LONG_NS) != SHARED_RING_OK)
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
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 30;
    o.region_fd = other;
    if (shared_ring_attach_producer(&p, region, size, &o) == SHARED_RING_OK) return 31;
    close(other);
    if (shared_ring_attach_producer_wait(&p, region, size, NULL, LONG_NS) != SHARED_RING_OK)
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
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 40;
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
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 50;
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
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 45;
    if (shared_ring_attach_producer_wait(&p, region, size, &o, LONG_NS) != SHARED_RING_OK)
        return 46;
    return shared_ring_write_str(&p, "m", 0) == SHARED_RING_OK ? 0 : 47;
}
static int started_consumer_reads_one(void) {
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_consumer c;
    int i;
    o.region_fd = region_fd;
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 55;
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
    if (shared_ring_attach_producer_wait(&p, region, size, NULL, LONG_NS) != SHARED_RING_OK)
        return 60;
    if (shared_ring_write_str(&p, "m", 0) != SHARED_RING_OK) return 61;
    if (shared_ring_close(&p) != SHARED_RING_OK) return 62;
    return shared_ring_detach_producer(&p) == SHARED_RING_OK ? 0 : 63;
}
static int consumer_reads_to_the_end(void) {
    shared_ring_consumer c;
    if (shared_ring_attach_consumer(&c, region, size, NULL) != SHARED_RING_OK) return 70;
    return consume(&c, 1, 30);
}
static const scenario close_then_detach = {
    "a producer that closes and then detaches is read as CLOSED, never PEER_GONE",
    2, -1, formatted_region, { producer_closes_and_detaches, consumer_reads_to_the_end, NULL }
};

/* 4. A producer that finishes its stream before the consumer prepares:
   the stream is kept for it. */
static int early_producer(void) {
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 80;
    return producer_closes_and_detaches();
}
static int late_consumer(void) {
    shared_ring_consumer c;
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 90;
    if (shared_ring_attach_consumer_wait(&c, region, size, NULL, LONG_NS) != SHARED_RING_OK)
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
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 110;
    if (shared_ring_attach_producer_wait(&p, region, size, NULL, LONG_NS) != SHARED_RING_OK)
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
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 120;
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
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 140;
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
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 150;
    if (shared_ring_attach_producer_wait(&p, region, size, NULL, LONG_NS) != SHARED_RING_OK)
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
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 160;
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
    if (shared_ring_prepare(region, size, CAPACITY, 0) < 0) return 170;
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

/* ---- the driver -------------------------------------------------------------- */

typedef struct run {
    int steps;
    int choice[MAX_STEPS];            /* who moved at each step (KILL + i: i was killed) */
    unsigned char enabled[MAX_STEPS]; /* a bit per actor parked then */
    unsigned char yielded[MAX_STEPS]; /* the last mover yielded there */
    char point[MAX_STEPS][POINT_NAME];
    int status[ACTORS];
    int killed; /* the step at which the victim was killed, or -1 */
    pid_t killed_pid;
    int failed;
    int unplaced; /* the victim was killed holding a word its slot does not name */
} run;

enum { KILL = ACTORS }; /* a choice KILL + i kills actor i where it is parked */

static run trial;
static uint64_t schedules_run, unplaced_runs;

static int enabled_now(const scenario *sc) {
    int bits = 0, i;
    for (i = 0; i < sc->actors; i++)
        if (atomic_load(&ctl->state[i]) == PARKED) bits |= 1 << i;
    return bits;
}

/* Wait for the driver's turn; an actor that died while running (a
   signal) is marked done. 0 if no actor came back within 10 s. */
static int wait_for_turn(const scenario *sc, pid_t *pids) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (atomic_load(&ctl->turn) != -1) {
        int i;
        for (i = 0; i < sc->actors; i++) {
            int st;
            if (pids[i] > 0 && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
                trial.status[i] = st;
                pids[i] = 0;
                atomic_store(&ctl->state[i], DONE);
                atomic_store(&ctl->turn, -1);
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 10) return 0;
        sched_yield();
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

/* The one case the library counts a dead process alive for good (see
   srng_holder): a process moved an owner word to itself and was killed
   before it wrote its identity slot. Does a side's word name the killed
   victim with no slot that places it? */
static int victim_unplaced(void) {
    static const unsigned sides[2] = { SRNG_OFF_PRODUCER_ID, SRNG_OFF_CONSUMER_ID };
    int i;
    for (i = 0; i < 2; i++) {
        uint64_t w = srng_owner_load(region, sides[i]);
        srng_process h;
        if (w != 0 && (pid_t)(w & SRNG_OWNER_PID) == trial.killed_pid &&
            !srng_holder(region, sides[i], w, &h))
            return 1;
    }
    return 0;
}

static void start_actor(const scenario *sc, int i) {
    int code;
    me = i;
    sched_point("start");
    code = sc->actor[i]();
    atomic_store(&ctl->state[i], DONE);
    atomic_store(&ctl->turn, -1);
    while (!atomic_load(&ctl->release_all)) sched_yield(); /* alive until all are done */
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
    /* every actor parks at "start" first */
    for (i = 0; i < sc->actors; i++)
        while (atomic_load(&ctl->state[i]) != PARKED) sched_yield();
    atomic_store(&ctl->turn, -1);
    for (;;) {
        int bits, pick, yielded;
        if (!wait_for_turn(sc, pids)) {
            trial.failed = 1;
            snprintf(trial.point[trial.steps], POINT_NAME, "(hang)");
            break;
        }
        bits = enabled_now(sc);
        if (bits == 0 || trial.steps == MAX_STEPS) break;
        if (trial.killed >= 0 && victim_unplaced()) { /* stuck for good: see victim_unplaced */
            /* only a kill right after a move of an owner word: anywhere
               else, an unplaced word is a defect */
            trial.unplaced = strcmp(trial.point[trial.killed], "move owner") == 0;
            trial.failed = !trial.unplaced;
            break;
        }
        yielded = last >= 0 && (strcmp(ctl->at[last], "yield") == 0 ||
                                strcmp(ctl->at[last], "nap") == 0);
        if (trial.steps < nforced) {
            pick = forced[trial.steps];
        } else if (seed != 0) {
            do pick = (int)((seed = seed * 1103515245u + 12345u) >> 16) % sc->actors;
            while (!(bits >> pick & 1));
            if (pick == sc->victim && trial.killed < 0 && (seed >> 8) % 16 == 0) pick += KILL;
        } else if (last >= 0 && (bits >> last & 1) && !yielded) {
            pick = last;
        } else {
            pick = last;
            do pick = (pick + 1) % sc->actors;
            while (!(bits >> pick & 1));
        }
        if (!(bits >> pick % KILL & 1)) break; /* a forced choice not possible here */
        trial.choice[trial.steps] = pick;
        trial.enabled[trial.steps] = (unsigned char)bits;
        trial.yielded[trial.steps] = (unsigned char)yielded;
        snprintf(trial.point[trial.steps], POINT_NAME, "%s", ctl->at[pick % KILL]);
        trial.steps++;
        if (pick >= KILL) {
            kill_actor(pick - KILL, pids);
            continue;
        }
        last = pick;
        atomic_store(&ctl->turn, pick);
    }
    if (trial.steps == MAX_STEPS) trial.failed = 1;
    atomic_store(&ctl->release_all, 1);
    for (i = 0; i < sc->actors; i++) {
        if (pids[i] == 0) continue;
        if (trial.failed || trial.unplaced) kill(pids[i], SIGKILL);
        waitpid(pids[i], &trial.status[i], 0);
    }
    schedules_run++;
    for (i = 0; i < sc->actors; i++)
        if (trial.status[i] != 0 && !(trial.killed >= 0 && i == sc->victim)) trial.failed = 1;
    if (trial.unplaced) {
        unplaced_runs++;
        return 1;
    }
    return !trial.failed;
}

/* The trail, a line per run of one actor's steps (its first and last
   points), so that a spinning actor takes one line, not thousands. */
static void print_trail(const scenario *sc) {
    int i, from = 0;
    fprintf(stderr, "  %s: failing schedule (%d steps):\n", sc->name, trial.steps);
    for (i = 1; i <= trial.steps; i++) {
        if (i < trial.steps && trial.choice[i] == trial.choice[from]) continue;
        fprintf(stderr, "    %s%c: %s", trial.choice[from] >= KILL ? "kill " : "",
                'A' + trial.choice[from] % KILL, trial.point[from]);
        if (i - from > 1) fprintf(stderr, " ... %s (%d steps)", trial.point[i - 1], i - from);
        fprintf(stderr, "\n");
        from = i;
    }
    for (i = 0; i < sc->actors; i++)
        fprintf(stderr, "    actor %c: %s %d\n", 'A' + i,
                WIFSIGNALED(trial.status[i]) ? "killed by signal" : "exit",
                WIFSIGNALED(trial.status[i]) ? WTERMSIG(trial.status[i])
                                             : WEXITSTATUS(trial.status[i]));
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
        for (a = 0; a < sc->actors + 1; a++) {
            int kill_here = a == sc->actors; /* the last choice: kill the victim */
            if (kill_here) {
                /* at each point the victim reached: right after it moved */
                if (sc->victim < 0 || (t->killed >= 0 && t->killed <= j) ||
                    !(t->enabled[j] >> sc->victim & 1) ||
                    (j > 0 && t->choice[j - 1] != sc->victim))
                    continue;
                a = KILL + sc->victim;
            } else if (a == t->choice[j] || !(t->enabled[j] >> a & 1) || sc->victim >= 0) {
                continue; /* with a victim, the departures explored are its deaths */
            }
            memcpy(prefix, t->choice, (size_t)j * sizeof *prefix);
            prefix[j] = a;
            if (!explore(sc, prefix, j + 1, departures + 1, bound)) return 0;
            if (kill_here) break;
        }
    }
    return 1;
}

static int explore_bound = 2; /* -q: 1 */

static void check_scenario(const scenario *sc, int randoms) {
    static int prefix[MAX_STEPS];
    uint64_t before = schedules_run, unplaced_before = unplaced_runs;
    int ok, i, bound = sc->victim >= 0 ? 1 : explore_bound; /* a kill at every step */
    ok = explore(sc, prefix, 0, 0, bound);
    for (i = 1; ok && i <= randoms; i++) {
        ok = run_once(sc, NULL, 0, (unsigned)i * 2654435761u);
        if (!ok) print_trail(sc);
    }
    printf("  %s: %llu schedules (up to %d departures, %d random; %llu killed right "
           "after a move, counted alive)%s\n",
           sc->name, (unsigned long long)(schedules_run - before), bound, randoms,
           (unsigned long long)(unplaced_runs - unplaced_before), ok ? "" : ": FAILED");
    CHECK(ok);
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

/* 8. fork while another thread is inside the first identity read: the
   child reads its own identity instead of waiting for a thread it does
   not have. */
static void *read_identity_parked(void *arg) {
    (void)arg;
    thread_holds_identity = 1;
    (void)shared_ring_prepare(region, size, CAPACITY, 0); /* parks inside srng_self */
    return NULL;
}

TEST(a_child_forked_while_a_thread_reads_the_identity_attaches) {
    pthread_t t;
    pid_t child;
    int status = -1;
    char c;
    formatted_region();
    if (pipe(parked_pipe) != 0 || pipe(gate_pipe) != 0) abort();
    pthread_create(&t, NULL, read_identity_parked, NULL);
    CHECK_EQ(read(parked_pipe[0], &c, 1), 1); /* the thread is inside the read */
    child = harness_fork();
    if (child == 0) {
        shared_ring_consumer cons;
        alarm(10); /* a child that spins for ever dies of SIGALRM */
        _exit(shared_ring_attach_consumer(&cons, region, size, NULL) == SHARED_RING_OK ? 0 : 1);
    }
    waitpid(child, &status, 0);
    CHECK_EQ(status, 0);
    CHECK_EQ(write(gate_pipe[1], "g", 1), 1);
    pthread_join(t, NULL);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc > 1 && strcmp(argv[1], "-q") == 0) explore_bound = 1;
    ctl = mmap(NULL, sizeof *ctl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ctl == MAP_FAILED) abort();
    RUN(a_child_forked_while_a_thread_reads_the_identity_attaches);
    RUN(close_then_detach_is_read_as_closed_in_every_schedule);
    RUN(a_stream_closed_before_its_consumer_prepared_is_delivered_in_every_schedule);
    RUN(a_live_producer_is_never_judged_gone_while_another_process_prepares_and_attaches);
    RUN(two_programs_started_together_both_attach_and_the_stream_arrives_whole);
    RUN(two_programs_started_together_both_attach_with_the_stream_open);
    RUN(two_openers_sizing_one_object_never_shrink_it_under_a_mapping);
    shared_ring_shm_unlink(shm_name);
    RUN(a_producer_killed_at_any_point_is_taken_over_and_nothing_it_published_is_lost);
    RUN(a_consumer_killed_at_any_point_is_taken_over_and_the_next_one_reads_on);
    return harness_summary("interleave");
}
