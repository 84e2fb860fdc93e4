/* A logger: application threads format log lines straight into their own
   ring (no intermediate buffer, no lock shared between them) and one
   writer thread drains every ring to stderr with shared_ring_wait_any, so
   no application thread waits for the terminal or the disk. Constant lines
   go in with shared_ring_write_str; formatted ones with log_printf below, a
   printf-style write built on claim/commit: vsnprintf measures the line,
   then formats it directly into the claimed space.

   A thread's ring is closed by a thread-exit destructor (a pthread key),
   however the thread ends. That matters: a thread that exits with its
   producer still attached leaves the writer waiting for that ring for
   ever, because no process died (only a process's death is noticed).
   usage: logger [LINES_PER_THREAD] [THREADS] */
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define CAPACITY (1u << 16)
#define MAX_THREADS 512

/* printf into the ring. Returns a shared_ring_result. */
static int log_printf(shared_ring_producer *p, const char *fmt, ...) {
    va_list ap, again;
    void *dst;
    int n, r;
    va_start(ap, fmt);
    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap); /* the length, without writing */
    va_end(ap);
    r = n < 0 ? SHARED_RING_ERR_ARG
              : shared_ring_claim(p, (size_t)n + 1, &dst, SHARED_RING_FOREVER);
    if (r == SHARED_RING_OK) {
        vsnprintf((char *)dst, (size_t)n + 1, fmt, again); /* + 1: room for its NUL */
        r = shared_ring_commit(p, (size_t)n);              /* the NUL is not sent */
    }
    va_end(again);
    return r;
}

/* ---- each application thread's ring ------------------------------------- */

static pthread_key_t ring_key;

/* The key's destructor: runs when the thread exits (return or
   pthread_exit), with the thread's handle. Close ends the stream (the
   writer reads the rest, then CLOSED); detach gives the side back. */
static void close_at_thread_exit(void *handle) {
    shared_ring_producer *p = (shared_ring_producer *)handle;
    shared_ring_close(p);
    shared_ring_detach_producer(p);
    free(p);
}

/* Attach this thread as the producer of `region`; the destructor above
   closes it when the thread exits. */
static shared_ring_producer *attach_this_thread(void *region) {
    shared_ring_producer *p = (shared_ring_producer *)calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    if (shared_ring_attach_producer(p, region, shared_ring_region_size(CAPACITY, 0), NULL) !=
            SHARED_RING_OK ||
        pthread_setspecific(ring_key, p) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

typedef struct app_thread {
    void *region;
    unsigned long lines, logged;
    int id;
} app_thread;

static void *app_main(void *arg) {
    app_thread *a = (app_thread *)arg;
    shared_ring_producer *p = attach_this_thread(a->region);
    if (p == NULL) return NULL;
    a->logged += shared_ring_write_str(p, "started", SHARED_RING_FOREVER) == SHARED_RING_OK;
    for (unsigned long i = 0; i < a->lines; i++)
        a->logged += log_printf(p, "thread %d, request %lu: status %d, %.3f ms", a->id, i,
                                i % 17 ? 200 : 500, (double)(i % 1000) / 7.0) == SHARED_RING_OK;
    a->logged += shared_ring_write_str(p, "done", SHARED_RING_FOREVER) == SHARED_RING_OK;
    return NULL; /* no close here: the key's destructor closes the ring */
}

/* ---- the writer ----------------------------------------------------------- */

typedef struct writer {
    shared_ring_consumer rings[MAX_THREADS];
    int n;
    FILE *out;
    unsigned long lines;
} writer;

static int write_line(void *user, const void *data, size_t len) {
    writer *w = (writer *)user;
    fwrite(data, 1, len, w->out);
    fputc('\n', w->out);
    w->lines++;
    return 0;
}

/* Drain every ring until each one is closed and read to its end. */
static void *writer_main(void *arg) {
    writer *w = (writer *)arg;
    shared_ring_consumer *open[MAX_THREADS];
    int left = w->n;
    for (int i = 0; i < w->n; i++) open[i] = &w->rings[i];
    while (left > 0) {
        int i = shared_ring_wait_any(open, (size_t)w->n, SHARED_RING_FOREVER), r;
        if (i < 0) break;
        r = shared_ring_read_some(open[i], write_line, w);
        if (r == SHARED_RING_CLOSED || (r < 0 && r != SHARED_RING_EMPTY)) {
            open[i] = NULL; /* wait_any skips it from now on */
            left--;
        }
        fflush(w->out);
    }
    return NULL;
}

int main(int argc, char **argv) {
    size_t size = shared_ring_region_size(CAPACITY, 0);
    unsigned long lines = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000, logged = 0;
    int n = argc > 2 ? atoi(argv[2]) : 4, i, ok = 1;
    static writer w;
    static app_thread apps[MAX_THREADS];
    static void *regions[MAX_THREADS];
    static pthread_t app_ids[MAX_THREADS];
    pthread_t writer_id;

    if (n < 1 || n > MAX_THREADS || pthread_key_create(&ring_key, close_at_thread_exit) != 0)
        return 2;
    w.n = n;
    w.out = stderr;
    for (i = 0; i < n; i++) {
        regions[i] = aligned_alloc(128, size);
        if (regions[i] == NULL || shared_ring_format(regions[i], size, CAPACITY, 0) != SHARED_RING_OK ||
            shared_ring_attach_consumer(&w.rings[i], regions[i], size, NULL) != SHARED_RING_OK)
            return 2;
    }
    pthread_create(&writer_id, NULL, writer_main, &w);
    for (i = 0; i < n; i++) {
        apps[i] = (app_thread){ regions[i], lines, 0, i };
        pthread_create(&app_ids[i], NULL, app_main, &apps[i]);
    }
    for (i = 0; i < n; i++) {
        pthread_join(app_ids[i], NULL);
        logged += apps[i].logged;
        ok &= apps[i].logged == lines + 2;
    }
    pthread_join(writer_id, NULL); /* ends because every thread's ring was closed */
    for (i = 0; i < n; i++) {
        shared_ring_detach_consumer(&w.rings[i]);
        free(regions[i]);
    }
    printf("%d threads logged %lu lines, the writer wrote %lu\n", n, logged, w.lines);
    return ok && w.lines == logged ? 0 : 1;
}
