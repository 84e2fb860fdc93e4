/* Two programs started on their own, in any order, sharing a ring and a
   notifier by one name, with no descriptor passing: the consumer sleeps
   in epoll on its notifier descriptor and on the producer's peer fd, so
   it hears messages, the close and the producer's death without a timer,
   and after a death goes on with the next producer (whose attach wakes
   the armed loop).

     named_loop consume /NAME          read until CLOSED (exit 0), through
                                       any number of producers
     named_loop produce /NAME COUNT [hold | after N]
                                       write COUNT numbered messages and
                                       close; with `hold`, keep the stream
                                       open and sleep (to be killed); with
                                       `after N`, number them from N (a
                                       producer that takes over)

   Both run the same set-up: shm_open + prepare, notifier_open_named,
   attach with the notifier's options. The consumer removes the names at
   the end. Linux (epoll). */
#define _GNU_SOURCE
#define SHARED_RING_SHM
#define SHARED_RING_NOTIFIER
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define CAPACITY (1u << 16)
#define START_NS 10000000000ull /* wait up to 10 s for the other program */

static int expect_next(void *user, const void *data, size_t len) {
    uint64_t *next = (uint64_t *)user, v;
    memcpy(&v, data, sizeof v);
    if (len != sizeof v || v != *next) {
        fprintf(stderr, "named_loop: message %llu out of order or torn\n", (unsigned long long)*next);
        exit(1);
    }
    ++*next;
    return 0;
}

static int produce(shared_ring_shm *shm, shared_ring_notifier *n, uint64_t from, uint64_t count,
                   int hold) {
    shared_ring_producer p;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_notifier_options(n, SHARED_RING_PRODUCER_END, &o);
    o.region_fd = shm->fd; /* the kernel then tells the consumer for certain if we die */
    if (shared_ring_attach_producer_wait(&p, shm->region, shm->size, &o, START_NS) != SHARED_RING_OK)
        return 2;
    for (uint64_t i = from; i < from + count; i++)
        if (shared_ring_write_bytes(&p, &i, sizeof i, SHARED_RING_FOREVER) != SHARED_RING_OK) return 1;
    if (hold) {
        shared_ring_flush(&p);
        printf("producer: wrote %llu messages, holding the stream open\n", (unsigned long long)count);
        fflush(stdout);
        for (;;) pause();
    }
    printf("producer: wrote %llu messages\n", (unsigned long long)count);
    return shared_ring_close(&p) == SHARED_RING_OK ? 0 : 1;
}

/* The event loop: read; when nothing, arm; sleep in epoll on the
   notifier's descriptor and, once the producer is known, its peer fd. A
   producer's death is said once (PEER_GONE, after what it published);
   the loop then arms again and sleeps until the next producer attaches. */
static int consume(shared_ring_shm *shm, shared_ring_notifier *n) {
    shared_ring_consumer c;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    struct epoll_event ev = { .events = EPOLLIN };
    uint64_t next = 0;
    int ep = epoll_create1(0), r, deaths = 0, gone = 0;
    shared_ring_notifier_options(n, SHARED_RING_CONSUMER_END, &o);
    o.region_fd = shm->fd;
    if (shared_ring_attach_consumer_wait(&c, shm->region, shm->size, &o, START_NS) != SHARED_RING_OK)
        return 2;
    ev.data.fd = n->fd[SHARED_RING_CONSUMER_END];
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev) != 0) return 2;
    for (;;) {
        r = shared_ring_read_some(&c, expect_next, &next);
        if (r > 0 || r == SHARED_RING_EMPTY) gone = 0; /* a producer is there */
        if (r > 0) continue;
        if (r == SHARED_RING_PEER_GONE && !gone) {
            printf("consumer: the producer is gone after %llu messages; waiting for the next\n",
                   (unsigned long long)next);
            fflush(stdout);
            gone = 1;
            deaths++;
        }
        /* PEER_GONE is said once; after that arm arms for the next
           producer, whose attach wakes the loop */
        if (r == SHARED_RING_EMPTY || r == SHARED_RING_PEER_GONE) r = shared_ring_arm(&c);
        if (r == 1 || r == SHARED_RING_PEER_GONE) continue;
        if (r != SHARED_RING_OK) break; /* CLOSED */
        if ((r = shared_ring_consumer_peer_fd(&c)) >= 0) {
            /* the producer's death descriptor, asked for before every
               sleep: the handle closes it when another process takes the
               side, and a new number (or a reused one) is added again */
            struct epoll_event pe = { .events = EPOLLIN, .data.fd = r };
            if (epoll_ctl(ep, EPOLL_CTL_ADD, r, &pe) != 0 && errno != EEXIST) return 2;
        }
        /* no timeout: the notifier wakes us for messages and the close,
           the peer fd for a death */
        if (epoll_wait(ep, &ev, 1, -1) < 0) return 2;
        shared_ring_notifier_clear(n, SHARED_RING_CONSUMER_END);
    }
    printf("consumer: read %llu messages (%d producers died on the way), then %s\n",
           (unsigned long long)next, deaths, shared_ring_result_string(r));
    close(ep);
    shared_ring_detach_consumer(&c);
    return r == SHARED_RING_CLOSED ? 0 : 1;
}

int main(int argc, char **argv) {
    size_t size = shared_ring_region_size(CAPACITY, 0);
    shared_ring_shm shm;
    shared_ring_notifier n;
    int consumer, r;
    if (argc < 3 || (strcmp(argv[1], "consume") != 0 && (strcmp(argv[1], "produce") != 0 || argc < 4))) {
        fprintf(stderr, "usage: named_loop consume /NAME | produce /NAME COUNT [hold | after N]\n");
        return 2;
    }
    consumer = strcmp(argv[1], "consume") == 0;
    if (shared_ring_shm_open(&shm, argv[2], size, START_NS) != SHARED_RING_OK ||
        shared_ring_prepare(shm.region, shm.size, CAPACITY, 0, shm.fd) < 0 ||
        shared_ring_notifier_open_named(&n, argv[2]) != SHARED_RING_OK) {
        fprintf(stderr, "named_loop: set-up failed: %s\n", shared_ring_why());
        return 2;
    }
    if (consumer)
        r = consume(&shm, &n);
    else
        r = produce(&shm, &n, argc > 5 && strcmp(argv[4], "after") == 0 ? strtoull(argv[5], NULL, 10) : 0,
                    strtoull(argv[3], NULL, 10), argc > 4 && strcmp(argv[4], "hold") == 0);
    shared_ring_notifier_close(&n);
    shared_ring_shm_close(&shm);
    if (consumer) { /* the last user: the names go */
        shared_ring_notifier_unlink(argv[2]);
        shared_ring_shm_unlink(argv[2]);
    }
    return r;
}
