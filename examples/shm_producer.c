/* Two independent processes, producer side: creates the POSIX shared
   memory object NAME, formats a ring in it, writes COUNT text lines and
   closes the stream. Start `shm_consumer NAME` before or after it, in
   another terminal or in the background:

       ./shm_producer /demo_ring 100000 & ./shm_consumer /demo_ring

   The consumer retries until the object exists, is big enough and holds a
   formatted ring, so the two programs can start in any order. Each write
   has a timeout, so a producer whose consumer never comes gives up. */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"
#include "shm_common.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "/shared_ring_demo";
    unsigned long count = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000;
    shared_ring_producer p;
    size_t size;
    char line[80];
    void *mem = shm_map(name, 1, &size);
    if (mem == NULL || shared_ring_format(mem, size, SHM_CAPACITY, 0) != SHARED_RING_OK ||
        shared_ring_attach_producer(&p, mem, size, NULL) != SHARED_RING_OK) {
        perror("shm_producer");
        return 1;
    }
    for (unsigned long i = 0; i < count; i++) {
        snprintf(line, sizeof line, "line %lu from process %ld", i, (long)getpid());
        /* A consumer that never comes must not hang us forever. */
        if (shared_ring_write_str(&p, line, 10000000000ull) != SHARED_RING_OK) {
            fprintf(stderr, "shm_producer: no consumer is reading\n");
            return 1;
        }
    }
    shared_ring_close(&p);
    printf("shm_producer: wrote %lu lines to %s\n", count, name);
    return 0;
}
