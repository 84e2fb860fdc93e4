/* A logger: the application thread formats log lines straight into the ring
   (no intermediate buffer) and a writer thread drains them to stderr, so
   the application never waits for the terminal or the disk. Constant lines
   go in with shared_ring_write_str; formatted ones with log_printf below, a
   printf-style write built on claim/commit: vsnprintf measures the line,
   then formats it directly into the claimed space. */
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define CAPACITY (1u << 16)

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

typedef struct writer {
    void *region;
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

static void *writer_thread(void *arg) {
    writer *w = (writer *)arg;
    shared_ring_consumer c;
    shared_ring_attach_consumer(&c, w->region, shared_ring_region_size(CAPACITY, 0), NULL);
    while (shared_ring_read(&c, write_line, w, SHARED_RING_FOREVER) >= 0) fflush(w->out);
    return NULL;
}

int main(int argc, char **argv) {
    size_t size = shared_ring_region_size(CAPACITY, 0);
    writer w = { aligned_alloc(128, size), stderr, 0 };
    unsigned long requests = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000, logged = 0;
    shared_ring_producer p;
    pthread_t t;

    shared_ring_format(w.region, size, CAPACITY, 0);
    shared_ring_attach_producer(&p, w.region, size, NULL);
    pthread_create(&t, NULL, writer_thread, &w);

    logged += shared_ring_write_str(&p, "logger: started", SHARED_RING_FOREVER) == SHARED_RING_OK;
    for (unsigned long i = 0; i < requests; i++)
        logged += log_printf(&p, "request %lu: status %d, %.3f ms", i, i % 17 ? 200 : 500,
                             (double)(i % 1000) / 7.0) == SHARED_RING_OK;
    logged += shared_ring_write_str(&p, "logger: done", SHARED_RING_FOREVER) == SHARED_RING_OK;
    shared_ring_close(&p);
    pthread_join(t, NULL);
    printf("logged %lu lines, the writer wrote %lu\n", logged, w.lines);
    free(w.region);
    return logged == requests + 2 && w.lines == logged ? 0 : 1;
}
