/* The lost wake-up that membarrier(GLOBAL_EXPEDITED) let through, opened on
   purpose (Linux, 2 CPUs or more).

   The kernel picks the CPUs GLOBAL_EXPEDITED interrupts from a per-CPU copy
   of each process's registration, refreshed only when a CPU switches
   between two address spaces. So:
     1. CPU 1 runs this process before it registers, then goes idle (idle
        keeps our address space, lazily);
     2. the process registers on CPU 0 while it has one thread, and attaches;
     3. a thread of the process runs on CPU 1 again: no switch of address
        space, so CPU 1 keeps its stale copy and GLOBAL_EXPEDITED skips it.
   The test builds these steps, shows the hole is open (it counts the
   function-call interrupts CPU 1 receives for GLOBAL_EXPEDITED calls, in
   /proc/interrupts), then aims publishes at the consumer's way to sleep:
   a producer on CPU 1 answers each ping from the consumer on CPU 0 after a
   random delay of up to 1 us, while the consumer goes to sleep at once
   (spin 1 ns) with recheck_ns off. A lost wake-up leaves both sides
   asleep for good; the watchdog then finds the consumer asleep on a
   published record and fails the test.

   usage: wakeup_hole [MESSAGES]   (default 1000000; make test runs 2000000)
   Build with -DSHARED_RING_HEADER='"path"' to test another header. */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION
#ifdef SHARED_RING_HEADER
#include SHARED_RING_HEADER
#else
#include "../shared_ring.h"
#endif

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CAPACITY 4096u
#define STALL_NS 3000000000ull /* no progress this long: a lost wake-up */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

/* Function-call interrupts CPU `cpu` has received ("CAL" in x86's
   /proc/interrupts, "IPI1" or "Function call interrupts" elsewhere), or -1. */
static long long call_interrupts(int cpu) {
    char line[4096];
    long long found = -1;
    FILE *f = fopen("/proc/interrupts", "r");
    if (f == NULL) return -1;
    while (fgets(line, sizeof line, f) != NULL) {
        char *p = line, *end;
        long long v = 0;
        int i;
        if (strstr(line, "Function call interrupts") == NULL) continue;
        p = strchr(line, ':');
        if (p == NULL) break;
        p++;
        for (i = 0; i <= cpu; i++) {
            v = strtoll(p, &end, 10);
            if (end == p) break;
            p = end;
        }
        if (i > cpu) found = v;
        break;
    }
    fclose(f);
    return found;
}

static long membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }
enum { MB_QUERY = 0, MB_GLOBAL_EXPEDITED = 1 << 1, MB_REGISTER_GLOBAL_EXPEDITED = 1 << 2 };

/* ---- the two rings: pings to the answerer, answers back ------------------- */

typedef struct world {
    unsigned char *ping_mem, *answer_mem;
    size_t bytes;
    shared_ring_producer ping_out, answer_out;
    shared_ring_consumer ping_in, answer_in;
    uint64_t messages;
    volatile int measuring; /* 1 while the answerer only spins on CPU 1 */
    volatile uint64_t answered, received;
    volatile int answerer_failed;
} world;

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t next_random(void) { /* xorshift64, one thread only */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Pings are 8 bytes. Answers are long and read in full: the answer's
   header store then waits in the answerer's store buffer behind stores to
   lines the consumer's CPU holds, while its load of the sleeping word
   goes ahead; that is the window a fenceless publish needs a barrier
   for. */
#define ANSWER_BYTES 1536u
static unsigned char answer[ANSWER_BYTES];
static volatile unsigned sink;

static int take_one(void *user, const void *data, size_t len) {
    const unsigned char *b = (const unsigned char *)data;
    unsigned sum = 0;
    size_t k;
    (void)user;
    for (k = 0; k < len; k += 64) sum += b[k];
    sink = sum;
    return len == 8 || len == ANSWER_BYTES ? 0 : -100;
}

/* CPU 1: spin while the hole is measured, then answer each ping after a
   random 0-1 us delay (the consumer is somewhere on its way to sleep). */
static void *answerer(void *arg) {
    world *w = (world *)arg;
    uint64_t i;
    while (w->measuring) __asm__ __volatile__("" ::: "memory");
    for (i = 0; i < w->messages; i++) {
        uint64_t until;
        int r = shared_ring_read(&w->ping_in, take_one, NULL, 10000000000u);
        if (r != 1) {
            fprintf(stderr, "wakeup_hole: answerer read %d (%s)\n", r, shared_ring_result_string(r));
            w->answerer_failed = 1;
            return NULL;
        }
        until = now_ns() + next_random() % 1000u;
        while (now_ns() < until) {
        }
        answer[i % ANSWER_BYTES] = (unsigned char)i;
        if (shared_ring_write_bytes(&w->answer_out, answer, ANSWER_BYTES, SHARED_RING_FOREVER) !=
            SHARED_RING_OK) {
            w->answerer_failed = 1;
            return NULL;
        }
        w->answered = i + 1;
    }
    return NULL;
}

/* A stall: the consumer asleep on the answer ring while a published record
   waits at read_pos is a lost wake-up; report it and fail. */
static void *watchdog(void *arg) {
    world *w = (world *)arg;
    uint64_t last = 0, since = now_ns();
    for (;;) {
        uint64_t got = w->received, t;
        struct timespec tick = { 0, 100000000 };
        nanosleep(&tick, NULL);
        t = now_ns();
        if (got != last || w->messages == 0) {
            last = got;
            since = t;
            continue;
        }
        if (t - since > STALL_NS) {
            uint64_t rd, hdr;
            uint32_t sleeping;
            memcpy(&rd, w->answer_mem + 256, 8);
            memcpy(&hdr, w->answer_mem + SHARED_RING_HEADER_SIZE + (rd & (CAPACITY - 1)), 8);
            memcpy(&sleeping, w->answer_mem + 384, 4);
            printf("wakeup_hole: no progress for 3 s after %llu messages: consumer sleeping %u, "
                   "header at read_pos %#llx (%s)\n",
                   (unsigned long long)got, sleeping, (unsigned long long)hdr,
                   sleeping == 1 && hdr != 0 ? "a LOST WAKE-UP" : "a stall");
            printf("wakeup_hole: FAILED\n");
            fflush(stdout);
            _exit(1);
        }
    }
    return NULL;
}

static unsigned char *new_ring(size_t bytes) {
    unsigned char *m =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    return shared_ring_format(m, bytes, CAPACITY, 0) == SHARED_RING_OK ? m : NULL;
}

int main(int argc, char **argv) {
    static world w;
    shared_ring_options quick = SHARED_RING_OPTIONS_INIT, patient = SHARED_RING_OPTIONS_INIT;
    pthread_attr_t attr;
    pthread_t t, dog;
    cpu_set_t on_cpu1;
    long long irq_before, irq_after;
    uint64_t i, start, calls = 20000, took;
    int hole_open;
    w.messages = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000u;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || pin_to(1) != 0) {
        printf("wakeup_hole: SKIPPED: needs two CPUs (this machine has one, or CPU 1 is not ours)\n");
        return 0;
    }
    /* 1. CPU 1 runs this process, then goes idle. */
    for (start = now_ns(); now_ns() - start < 20000000u;) {
    }
    if (pin_to(0) != 0) return 1;
    /* 2. Register (as an attach of shared_ring 0.2.0-dev did) and attach,
       one thread, on CPU 0. */
    if (membarrier(MB_QUERY) < 0 || (membarrier(MB_QUERY) & MB_GLOBAL_EXPEDITED) == 0 ||
        membarrier(MB_REGISTER_GLOBAL_EXPEDITED) != 0) {
        printf("wakeup_hole: SKIPPED: the kernel has no membarrier GLOBAL_EXPEDITED\n");
        return 0;
    }
    w.bytes = shared_ring_region_size(CAPACITY, 0);
    w.ping_mem = new_ring(w.bytes);
    w.answer_mem = new_ring(w.bytes);
    if (w.ping_mem == NULL || w.answer_mem == NULL) return 1;
    quick.spin_ns = 1; /* the consumer goes to sleep at once */
    quick.spin_max_ns = 1;
    quick.recheck_ns = SHARED_RING_OFF; /* no safety net: a lost wake-up hangs */
    quick.trail_ns = SHARED_RING_OFF;
    patient = quick;
    patient.spin_ns = 100000000; /* the answerer spins on pings: precise delays */
    patient.spin_max_ns = 100000000;
    if (shared_ring_attach_producer(&w.ping_out, w.ping_mem, w.bytes, &quick) != SHARED_RING_OK ||
        shared_ring_attach_consumer(&w.ping_in, w.ping_mem, w.bytes, &patient) != SHARED_RING_OK ||
        shared_ring_attach_producer(&w.answer_out, w.answer_mem, w.bytes, &patient) !=
            SHARED_RING_OK ||
        shared_ring_attach_consumer(&w.answer_in, w.answer_mem, w.bytes, &quick) != SHARED_RING_OK) {
        printf("wakeup_hole: FAILED: attach\n");
        return 1;
    }
    /* 3. A thread of the process on CPU 1 again. */
    w.measuring = 1;
    CPU_ZERO(&on_cpu1);
    CPU_SET(1, &on_cpu1);
    pthread_attr_init(&attr);
    pthread_attr_setaffinity_np(&attr, sizeof on_cpu1, &on_cpu1);
    if (pthread_create(&t, &attr, answerer, &w) != 0) return 1;
    /* Is the hole open? CPU 1 runs our thread: GLOBAL_EXPEDITED should
       interrupt it once per call; a stale copy makes it skip CPU 1. */
    {
        struct timespec settle = { 0, 20000000 };
        nanosleep(&settle, NULL);
    }
    irq_before = call_interrupts(1);
    start = now_ns();
    for (i = 0; i < calls; i++) membarrier(MB_GLOBAL_EXPEDITED);
    took = now_ns() - start;
    irq_after = call_interrupts(1);
    hole_open = irq_before >= 0 && irq_after >= 0 && (irq_after - irq_before) * 10 < (long long)calls;
    if (!hole_open && irq_before >= 0 && getenv("WAKEUP_HOLE_RETRY") == NULL) {
        /* Another process ran on CPU 1 in between and refreshed its copy:
           start again in a fresh process (once). */
        printf("wakeup_hole: hole not open (%lld interrupts on CPU 1); starting again\n",
               irq_after - irq_before);
        fflush(stdout);
        setenv("WAKEUP_HOLE_RETRY", "1", 1);
        execv("/proc/self/exe", argv);
    }
    if (irq_before < 0)
        printf("wakeup_hole: hole open: unknown (no function-call interrupt counts in "
               "/proc/interrupts); %.0f ns a GLOBAL_EXPEDITED call\n",
               (double)took / (double)calls);
    else
        printf("wakeup_hole: hole open: %s (%lld interrupts on CPU 1 for %llu GLOBAL_EXPEDITED "
               "calls, %.0f ns a call)\n",
               hole_open ? "yes" : "no", irq_after - irq_before, (unsigned long long)calls,
               (double)took / (double)calls);
    pthread_create(&dog, NULL, watchdog, &w);
    w.measuring = 0;
    /* Ping, then wait for the answer: every answer is published while
       this side goes to sleep, or just before, or just after. */
    for (i = 0; i < w.messages; i++) {
        int r;
        if (shared_ring_write_bytes(&w.ping_out, &i, 8, SHARED_RING_FOREVER) != SHARED_RING_OK) break;
        r = shared_ring_read(&w.answer_in, take_one, NULL, SHARED_RING_FOREVER);
        if (r != 1 || w.answerer_failed) {
            printf("wakeup_hole: FAILED: read %d (%s) after %llu messages\n", r,
                   shared_ring_result_string(r), (unsigned long long)i);
            return 1;
        }
        w.received = i + 1;
    }
    pthread_join(t, NULL);
    {
        shared_ring_stats st;
        shared_ring_consumer_stats(&w.answer_in, &st);
        printf("wakeup_hole: %llu messages, 0 lost wake-ups; the consumer waited %llu times and "
               "slept %llu\n",
               (unsigned long long)w.received, (unsigned long long)st.waits,
               (unsigned long long)st.sleeps);
    }
#if SHARED_RING_LAYOUT_VERSION >= 3
    {
        /* The answers went out without a fence (the case the hole is
           about) if the answerer's fenceless_for names the consumer. */
        uint64_t fenceless_for, consumer_id;
        memcpy(&fenceless_for, w.answer_mem + 536, 8);
        memcpy(&consumer_id, w.answer_mem + 776, 8);
        printf("wakeup_hole: answers published without a fence: %s\n",
               fenceless_for == consumer_id ? "yes (the sleeper's barrier covers them)"
                                            : "no (fenced)");
    }
#endif
    if (w.received != w.messages) return 1;
    printf("wakeup_hole: 1 passed, 0 failed\n");
    return 0;
}
