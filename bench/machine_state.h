/* machine_state.h: is the machine in its fast or its slow state now?

   Virtual machines like the one the numbers in docs/benchmarks.md come
   from have their two vCPUs moved by the host between a fast and a slow
   state every few seconds; a two-flag ping-pong between two pinned
   threads tells them apart (one-way p50 about 50 ns or about 250 ns). A
   benchmark runs one before each measurement and compares runs only
   within a state. Included by bench/bench.c and the peer harnesses. */
#ifndef BENCH_MACHINE_STATE_H
#define BENCH_MACHINE_STATE_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define FAST_STATE_NS 150.0
#define STATE_ROUND_TRIPS 20000
enum { STATE_FAST, STATE_SLOW, NSTATES };
static const char *const state_names[NSTATES] = { "fast", "slow" };

static int state_of(double flag_ns) { return flag_ns <= FAST_STATE_NS ? STATE_FAST : STATE_SLOW; }

typedef struct state_flags {
    _Alignas(128) _Atomic uint64_t ping;
    _Alignas(128) _Atomic uint64_t pong;
} state_flags;

/* Pin the calling thread to `cpu` (modulo the CPUs online); best effort. */
static void pin_to_cpu(int cpu) {
    cpu_set_t set;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    CPU_ZERO(&set);
    CPU_SET(cpu % (n > 0 ? (int)n : 1), &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *state_echo(void *arg) {
    state_flags *f = (state_flags *)arg;
    pin_to_cpu(1);
    for (uint64_t seq = 1; seq <= STATE_ROUND_TRIPS; seq++) {
        while (atomic_load_explicit(&f->ping, memory_order_acquire) != seq) {
        }
        atomic_store_explicit(&f->pong, seq, memory_order_release);
    }
    return NULL;
}

static int state_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The one-way p50 of a short two-flag ping-pong between CPUs 0 and 1, ns
   (half the round trip). Leaves the calling thread pinned to CPU 0. */
static double machine_state_ns(void) {
    static uint64_t rtt[STATE_ROUND_TRIPS];
    static state_flags flags;
    pthread_t t;
    atomic_store(&flags.ping, 0);
    atomic_store(&flags.pong, 0);
    pthread_create(&t, NULL, state_echo, &flags);
    pin_to_cpu(0);
    for (uint64_t seq = 1; seq <= STATE_ROUND_TRIPS; seq++) {
        uint64_t t0 = now_ns();
        atomic_store_explicit(&flags.ping, seq, memory_order_release);
        while (atomic_load_explicit(&flags.pong, memory_order_acquire) != seq) {
        }
        rtt[seq - 1] = now_ns() - t0;
    }
    pthread_join(t, NULL);
    qsort(rtt, STATE_ROUND_TRIPS, sizeof rtt[0], state_cmp);
    return (double)rtt[STATE_ROUND_TRIPS / 2] / 2.0;
}

#endif
