/* Quick start, two processes: each maps the named ring with the same three
   calls (open or create, prepare, attach), so either may start first; here
   the parent writes 1000 messages and a child reads them. */
#define _GNU_SOURCE
#define SHARED_RING_SHM /* the shared memory helpers */
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define NAME "/shared_ring_quickstart"
#define SECOND 1000000000ull

static void *open_ring(shared_ring_shm *shm, shared_ring_options *o) {
    size_t size = shared_ring_region_size(1 << 20, 64);
    if (shared_ring_shm_open(shm, NAME, size, SECOND) != SHARED_RING_OK) return NULL;
    *o = shared_ring_default_options();
    o->region_fd = shm->fd; /* so the kernel tells a dead peer for certain */
    /* Format unless in use or holding unread messages. */
    return shared_ring_prepare(shm->region, shm->size, 0, 64, shm->fd) >= 0 ? shm->region : NULL;
}

static int count_message(void *user, const void *data, size_t len) {
    (void)data, (void)len;
    (*(int *)user)++;
    return 0;
}

static int consumer_process(void) {
    shared_ring_shm shm;
    shared_ring_options o;
    shared_ring_consumer c;
    int count = 0, r;
    if (!open_ring(&shm, &o) ||
        shared_ring_attach_consumer_wait(&c, shm.region, shm.size, &o, SECOND) != 0)
        return 1;
    /* FOREVER is safe: if the producer's process dies, read says PEER_GONE. */
    while ((r = shared_ring_read(&c, count_message, &count, SHARED_RING_FOREVER)) >= 0) {
    }
    printf("consumer: %d messages, then %s\n", count, shared_ring_result_string(r));
    shared_ring_shm_unlink(NAME); /* the last user removes the name */
    return count == 1000 && r == SHARED_RING_CLOSED ? 0 : 1;
}

int main(void) {
    shared_ring_shm shm;
    shared_ring_options o;
    shared_ring_producer p;
    int status = 1;
    pid_t child = fork();
    if (child == 0) return consumer_process();
    if (!open_ring(&shm, &o) ||
        shared_ring_attach_producer_wait(&p, shm.region, shm.size, &o, SECOND) != 0)
        return 1;
    for (int i = 0; i < 1000; i++) {
        struct {
            int id;
            double value;
        } sample = { i, i * 0.5 };
        shared_ring_write_bytes(&p, &sample, sizeof sample, SHARED_RING_FOREVER);
    }
    shared_ring_close(&p);
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
