/* Two independent programs over named shared memory, producer side. Start
   them in either order, as often as you like:

       ./shm_producer /demo_ring 100000 & ./shm_consumer /demo_ring

   The protocol, the same in both programs: open or create the object
   (shm_open), format it unless it is in use (prepare), attach, waiting for
   a format in progress. The consumer removes the name at the end. If the
   consumer's process dies, writes say PEER_GONE. Nothing published is
   dropped: lines an earlier run's producer left unread are read first,
   and if an earlier run closed a stream no consumer has read yet, this
   producer's writes say CLOSED until a consumer has read it. */
#define _GNU_SOURCE
#define SHARED_RING_SHM
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_LINE 256
#define CAPACITY (1u << 20)
#define SECONDS 1000000000ull

static int fail(const char *what, int r) {
    fprintf(stderr, "shm_producer: %s: %s\n", what, shared_ring_result_string(r));
    return 1;
}

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "/shared_ring_demo";
    unsigned long count = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000, i;
    size_t size = shared_ring_region_size(CAPACITY, MAX_LINE);
    shared_ring_shm shm;
    shared_ring_options o = shared_ring_default_options();
    shared_ring_producer p;
    char line[80];
    int r = shared_ring_shm_open(&shm, name, size, 10 * SECONDS);
    if (r != SHARED_RING_OK) return fail("shm_open", r);
    o.region_fd = shm.fd; /* the kernel then tells us for certain when the consumer dies */
    r = shared_ring_prepare(shm.region, shm.size, 0, MAX_LINE, shm.fd);
    if (r < 0) return fail("prepare", r);
    r = shared_ring_attach_producer_wait(&p, shm.region, shm.size, &o, 10 * SECONDS);
    if (r != SHARED_RING_OK) return fail("attach", r);
    for (i = 0; i < count; i++) {
        snprintf(line, sizeof line, "line %lu from process %ld", i, (long)getpid());
        /* A consumer that never comes must not hang us forever; one that
           dies is reported at once (PEER_GONE). */
        r = shared_ring_write_str(&p, line, 30 * SECONDS);
        if (r != SHARED_RING_OK) return fail("write", r);
    }
    shared_ring_close(&p);
    shared_ring_detach_producer(&p);
    shared_ring_shm_close(&shm);
    printf("shm_producer: wrote %lu lines to %s\n", count, name);
    return 0;
}
