/* Two independent programs over named shared memory, consumer side: reads
   lines until the producer closes the stream, removes the name, and prints
   how many lines came. See shm_producer.c for the protocol; it is the same
   here. If the producer's process dies, the read says PEER_GONE. */
#define _GNU_SOURCE
#define SHARED_RING_SHM
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <stdio.h>
#include <string.h>

#define MAX_LINE 256
#define CAPACITY (1u << 20)
#define SECONDS 1000000000ull

static int count_line(void *user, const void *data, size_t len) {
    unsigned long *lines = (unsigned long *)user;
    if (len >= 5 && memcmp(data, "line ", 5) == 0) (*lines)++;
    return 0;
}

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "/shared_ring_demo";
    size_t size = shared_ring_region_size(CAPACITY, MAX_LINE);
    shared_ring_shm shm;
    shared_ring_options o = shared_ring_default_options();
    shared_ring_consumer c;
    unsigned long lines = 0;
    int r = shared_ring_shm_open(&shm, name, size, 10 * SECONDS);
    o.region_fd = shm.fd; /* the kernel then tells us for certain when the producer dies */
    if (r == SHARED_RING_OK) r = shared_ring_prepare(shm.region, shm.size, 0, MAX_LINE, shm.fd);
    if (r >= 0) r = shared_ring_attach_consumer_wait(&c, shm.region, shm.size, &o, 10 * SECONDS);
    if (r != SHARED_RING_OK) {
        fprintf(stderr, "shm_consumer: %s: %s\n", name, shared_ring_result_string(r));
        return 1;
    }
    /* No timeout needed: a producer that dies is reported as PEER_GONE. */
    while ((r = shared_ring_read(&c, count_line, &lines, SHARED_RING_FOREVER)) >= 0) {
    }
    shared_ring_detach_consumer(&c);
    shared_ring_shm_close(&shm);
    shared_ring_shm_unlink(name);
    printf("shm_consumer: read %lu lines, then %s\n", lines, shared_ring_result_string(r));
    return r == SHARED_RING_CLOSED ? 0 : 1;
}
