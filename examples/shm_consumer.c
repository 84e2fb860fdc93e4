/* Two independent processes, consumer side: opens the shared memory object
   NAME (retrying until the producer has created and formatted it), reads
   lines until the producer closes the stream, removes the object, and
   prints how many lines came. A timeout on every read means a crashed
   producer is noticed instead of waited for forever. */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"
#include "shm_common.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static int count_line(void *user, const void *data, size_t len) {
    unsigned long *lines = (unsigned long *)user;
    if (len >= 5 && memcmp(data, "line ", 5) == 0) (*lines)++;
    return 0;
}

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "/shared_ring_demo";
    struct timespec pause = { 0, 10000000 };
    shared_ring_consumer c;
    unsigned long lines = 0;
    size_t size;
    int r = SHARED_RING_ERR_MAGIC, tries;
    for (tries = 0; tries < 1000 && r != SHARED_RING_OK; tries++) {
        void *mem = shm_map(name, 0, &size);
        r = mem ? shared_ring_attach_consumer(&c, mem, size, NULL) : SHARED_RING_ERR_MAGIC;
        if (r != SHARED_RING_OK) {
            if (mem) munmap(mem, size);
            nanosleep(&pause, NULL); /* not there or not formatted yet */
        }
    }
    if (r != SHARED_RING_OK) {
        fprintf(stderr, "shm_consumer: %s: %s\n", name, shared_ring_result_string(r));
        return 1;
    }
    while ((r = shared_ring_read(&c, count_line, &lines, 5000000000ull)) >= 0) {
    }
    shm_unlink(name);
    printf("shm_consumer: read %lu lines, then %s\n", lines, shared_ring_result_string(r));
    return r == SHARED_RING_CLOSED ? 0 : 1;
}
