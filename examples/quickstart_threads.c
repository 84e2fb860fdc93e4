/* Quick start, two threads: a producer thread sends 1000 strings through a
   64 KiB ring to the main thread, which reads them in batches until the
   producer closes the stream. This file is the README's quick start. */
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *producer(void *region) {
    shared_ring_producer p;
    char line[64];
    shared_ring_attach_producer(&p, region, shared_ring_region_size(1 << 16, 0), NULL);
    for (int i = 0; i < 1000; i++) {
        snprintf(line, sizeof line, "message %d", i);
        shared_ring_write_str(&p, line, SHARED_RING_FOREVER); /* blocks if full */
    }
    shared_ring_close(&p);
    return NULL;
}

static int on_message(void *user, const void *data, size_t len) {
    (*(int *)user)++;
    if (len == 11 && memcmp(data, "message 999", 11) == 0) printf("got the last one\n");
    return 0; /* 0: keep going */
}

int main(void) {
    size_t size = shared_ring_region_size(1 << 16, 0);
    void *region = aligned_alloc(128, size); /* MSVC: _aligned_malloc, _aligned_free */
    shared_ring_format(region, size, 1 << 16, 0); /* 0: default max message */

    pthread_t t;
    pthread_create(&t, NULL, producer, region);

    shared_ring_consumer c;
    int count = 0, r;
    shared_ring_attach_consumer(&c, region, size, NULL);
    while ((r = shared_ring_read(&c, on_message, &count, SHARED_RING_FOREVER)) >= 0) {
    }
    printf("%d messages, ended with: %s\n", count, shared_ring_result_string(r));

    pthread_join(t, NULL);
    free(region);
    return count == 1000 && r == SHARED_RING_CLOSED ? 0 : 1;
}
