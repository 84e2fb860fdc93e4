/* Many producers, one consumer, no shared lock: each producer thread owns
   a ring, and the consumer thread sleeps on all of them at once with
   shared_ring_wait_any (one futex_waitv system call on Linux 5.16+). Each
   message carries its producer's sequence number; the consumer checks
   every one, and takes a ring out of the set once it is closed. */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PRODUCERS 8
#define MESSAGES 200000u /* per producer */

typedef struct ring {
    void *mem;
    size_t size;
    shared_ring_producer p;
    shared_ring_consumer c;
    uint32_t id;
    uint64_t next; /* the consumer's next expected sequence number */
} ring;

typedef struct message {
    uint32_t producer;
    uint64_t seq;
} message;

static void *produce(void *arg) {
    ring *r = (ring *)arg;
    message m = { r->id, 0 };
    for (m.seq = 0; m.seq < MESSAGES; m.seq++)
        if (shared_ring_write_bytes(&r->p, &m, sizeof m, SHARED_RING_FOREVER) != 0) abort();
    shared_ring_close(&r->p);
    return NULL;
}

static unsigned long bad;

static int check(void *user, const void *data, size_t len) {
    ring *r = (ring *)user;
    const message *m = (const message *)data; /* 8-byte aligned in the ring */
    if (len != sizeof *m || m->producer != r->id || m->seq != r->next) bad++;
    r->next = m->seq + 1;
    return 0;
}

int main(void) {
    static ring rings[PRODUCERS];
    shared_ring_consumer *set[PRODUCERS];
    pthread_t threads[PRODUCERS];
    int open = PRODUCERS, i;
    unsigned long total = 0;
    for (i = 0; i < PRODUCERS; i++) {
        ring *r = &rings[i];
        r->size = shared_ring_region_size(1 << 16, sizeof(message));
        r->mem = aligned_alloc(128, r->size);
        r->id = (uint32_t)i;
        if (r->mem == NULL || shared_ring_format(r->mem, r->size, 0, sizeof(message)) != 0 ||
            shared_ring_attach_producer(&r->p, r->mem, r->size, NULL) != 0 ||
            shared_ring_attach_consumer(&r->c, r->mem, r->size, NULL) != 0)
            return 1;
        set[i] = &r->c;
        pthread_create(&threads[i], NULL, produce, r);
    }
    while (open > 0) {
        int at = shared_ring_wait_any(set, PRODUCERS, SHARED_RING_FOREVER), n;
        if (at < 0) {
            fprintf(stderr, "many_producers: %s\n", shared_ring_result_string(at));
            return 1;
        }
        n = shared_ring_read_some(set[at], check, &rings[at]);
        if (n > 0) total += (unsigned long)n;
        if (n == SHARED_RING_CLOSED) {
            set[at] = NULL; /* done: stop waiting on it */
            open--;
        } else if (n < 0 && n != SHARED_RING_EMPTY) {
            fprintf(stderr, "many_producers: %s\n", shared_ring_result_string(n));
            return 1;
        }
    }
    for (i = 0; i < PRODUCERS; i++) {
        pthread_join(threads[i], NULL);
        if (rings[i].next != MESSAGES) bad++;
        free(rings[i].mem);
    }
    printf("many_producers: %d producers, %lu messages, %lu bad\n", PRODUCERS, total, bad);
    return bad == 0 && total == (unsigned long)PRODUCERS * MESSAGES ? 0 : 1;
}
