/* An audio callback fed by a UI thread. The audio thread wakes every
   2.67 ms (128 frames at 48 kHz) and must never block, lock, allocate or
   make a system call: it attaches its two handles with
   SHARED_RING_REALTIME, drains control messages (16 B to 8 KiB, with
   bursts of sample loads) with read_some, and sends a 32-byte meter back
   with write_bytes(..., 0), dropped and counted when the ring is full. The
   UI side attaches with default options: it sleeps in read and blocks on
   a full control ring like any consumer and producer (in 1 ms slices,
   since the audio side wakes nobody).

   On Linux the audio thread runs under a seccomp filter that kills the
   program on any system call but its own pacing (clock_nanosleep), its
   clock (clock_gettime, for the meter's time stamp) and the thread's exit
   (rt_sigprocmask, madvise, exit): the library's calls make none. Prints the callbacks, what arrived, and how late the UI saw
   the meters (what the real-time side costs its peer).

   usage: audio_thread [SECONDS [default]]   (default 2 s; `default`: the
   audio side attached with default options instead, unguarded, to compare
   how late the UI sees the meters when the audio side wakes it) */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#define PERIOD_NS 2666667L
#define CONTROL_CAPACITY (1u << 16)
#define METER_CAPACITY (1u << 12)

typedef struct meter {
    uint64_t sent_ns; /* when the callback sent it */
    uint64_t callback;
    float peak, rms;
    uint64_t spare;
} meter;

static shared_ring_consumer control_in; /* the audio thread's handles */
static shared_ring_producer meters_out;
static volatile int stop, guard, guarded;
static uint64_t callbacks, dropped, controls, control_bytes, bad;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A control message: its length in its first 4 bytes, then a pattern. */
static int apply_control(void *user, const void *data, size_t len) {
    const unsigned char *m = data;
    uint32_t said;
    (void)user;
    memcpy(&said, m, 4);
    if (said != len || (len > 4 && m[len - 1] != (unsigned char)len)) bad++;
    controls++;
    control_bytes += len;
    return 0;
}

/* Kill the program on any system call of this thread but its pacing, its
   clock and its exit. 1 if installed. */
static int guard_this_thread(void) {
#if defined(__linux__) && defined(__x86_64__) && !defined(__ILP32__)
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_nanosleep, 5, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigprocmask, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
           syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
#else
    return 0;
#endif
}

/* The callback: everything it does is a call that makes no system call. */
static void audio_callback(void) {
    meter m = { now_ns(), callbacks, 0.5f, 0.25f, 0 };
    (void)shared_ring_read_some(&control_in, apply_control, NULL);
    if (shared_ring_write_bytes(&meters_out, &m, sizeof m, 0) == SHARED_RING_FULL) dropped++;
    callbacks++;
}

static void *audio_thread(void *arg) {
    struct timespec next;
    (void)arg;
    guarded = guard && guard_this_thread();
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!stop) {
        audio_callback();
        next.tv_nsec += PERIOD_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    return NULL;
}

/* The UI's meter reader: how late each meter arrives. */
static uint64_t late_ns[1 << 16];
static size_t lates;

static int take_meter(void *user, const void *data, size_t len) {
    meter m;
    (void)user;
    if (len != sizeof m) return 0;
    memcpy(&m, data, sizeof m);
    if (lates < sizeof late_ns / sizeof late_ns[0]) late_ns[lates++] = now_ns() - m.sent_ns;
    return 0;
}

/* The UI's meter thread: it sleeps in read until a meter comes. */
static void *meter_thread(void *arg) {
    shared_ring_consumer *in = arg;
    while (!stop) (void)shared_ring_read(in, take_meter, NULL, 100000000u);
    return NULL;
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    int wakes_ui = argc > 2 && strcmp(argv[2], "default") == 0;
    size_t control_size = shared_ring_region_size(CONTROL_CAPACITY, 0);
    size_t meter_size = shared_ring_region_size(METER_CAPACITY, 0);
    void *control = aligned_alloc(128, control_size), *meters = aligned_alloc(128, meter_size);
    shared_ring_options realtime = SHARED_RING_OPTIONS_INIT;
    shared_ring_producer control_out; /* the UI's handles: default options */
    shared_ring_consumer meters_in;
    unsigned char msg[8192];
    uint64_t sent = 0, until;
    pthread_t t, ui_meters;
    if (control == NULL || meters == NULL ||
        shared_ring_format(control, control_size, CONTROL_CAPACITY, 0) != SHARED_RING_OK ||
        shared_ring_format(meters, meter_size, METER_CAPACITY, 0) != SHARED_RING_OK)
        return 1;
    realtime.flags = wakes_ui ? 0u : SHARED_RING_REALTIME; /* on the real-time side only */
    guard = !wakes_ui;
    if (shared_ring_attach_consumer(&control_in, control, control_size, &realtime) != 0 ||
        shared_ring_attach_producer(&meters_out, meters, meter_size, &realtime) != 0 ||
        shared_ring_attach_producer(&control_out, control, control_size, NULL) != 0 ||
        shared_ring_attach_consumer(&meters_in, meters, meter_size, NULL) != 0)
        return 1;
    pthread_create(&t, NULL, audio_thread, NULL);
    pthread_create(&ui_meters, NULL, meter_thread, &meters_in);
    until = now_ns() + (uint64_t)(seconds * 1e9);
    while (now_ns() < until) {
        /* a knob turned (16 B), now and then a burst of 200 sample loads
           (8 KiB each, blocking on the full ring) */
        size_t len = sent % 500 < 200 && (sent / 500) % 4 == 3 ? 8192 - 8 : 16, i;
        uint32_t len32 = (uint32_t)len;
        memcpy(msg, &len32, 4);
        for (i = 4; i < len; i++) msg[i] = (unsigned char)len;
        if (shared_ring_write_bytes(&control_out, msg, len, SHARED_RING_FOREVER) != SHARED_RING_OK)
            return 1;
        sent++;
        if (len == 16) usleep(1000); /* a knob turns every millisecond or so */
    }
    stop = 1;
    pthread_join(t, NULL);
    pthread_join(ui_meters, NULL);
    (void)shared_ring_read_some(&control_in, apply_control, NULL); /* what is left */
    qsort(late_ns, lates, sizeof late_ns[0], by_value);
    printf("audio thread: %llu callbacks%s; control messages %llu of %llu, %llu bytes, %llu bad; "
           "meters dropped %llu\n",
           (unsigned long long)callbacks, guarded ? " under seccomp, no system call" : "",
           (unsigned long long)controls, (unsigned long long)sent,
           (unsigned long long)control_bytes, (unsigned long long)bad,
           (unsigned long long)dropped);
    if (lates > 0)
        printf("UI saw meters late by p50 %llu us, p99 %llu us, max %llu us (%zu meters)\n",
               (unsigned long long)late_ns[lates / 2] / 1000,
               (unsigned long long)late_ns[lates * 99 / 100] / 1000,
               (unsigned long long)late_ns[lates - 1] / 1000, lates);
    return controls == sent && bad == 0 && callbacks > 0 ? 0 : 1;
}
