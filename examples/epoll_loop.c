/* A consumer that sleeps in its own event loop (epoll) instead of in the
   library, through a notifier (SHARED_RING_NOTIFIER): one eventfd per
   side, which the peer's wake-ups make readable. Before each epoll_wait
   the consumer arms (shared_ring_arm): armed means the producer's next
   publish will signal the eventfd; "ready" means read first. Run twice:
   between two threads, and between two processes, the notifier's
   eventfds passed to the producer process over a UNIX socket (SCM_RIGHTS).
   Between processes the loop also watches the producer's peer fd (a
   pidfd): if the producer is killed, the loop wakes and the next read
   says PEER_GONE, with no timer. Every message is checked. Linux only
   (epoll).

   usage: epoll_loop [MESSAGES]   (default 200000 each way) */
#define _GNU_SOURCE
#define SHARED_RING_NOTIFIER
#define SHARED_RING_SHM
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAPACITY (1u << 16)

static uint64_t messages = 200000;
static int region_fd; /* between processes: the memfd the region maps */

static int produce(void *region, size_t size, shared_ring_notifier *n) {
    shared_ring_producer p;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    shared_ring_notifier_options(n, SHARED_RING_PRODUCER_END, &o);
    o.region_fd = region_fd; /* the kernel then tells the consumer for certain if we die */
    if (shared_ring_attach_producer(&p, region, size, &o) != SHARED_RING_OK) return 1;
    for (uint64_t i = 0; i < messages; i++)
        if (shared_ring_write_bytes(&p, &i, sizeof i, SHARED_RING_FOREVER) != SHARED_RING_OK)
            return 1;
    return shared_ring_close(&p) != SHARED_RING_OK;
}

static int expect_next(void *user, const void *data, size_t len) {
    uint64_t *next = user, v;
    memcpy(&v, data, sizeof v);
    if (len != sizeof v || v != *next) {
        fprintf(stderr, "message %llu out of order or torn\n", (unsigned long long)*next);
        exit(1);
    }
    ++*next;
    return 0;
}

/* The event loop: read what is there; when nothing, arm; if armed, sleep in
   epoll_wait until the producer's publish makes our end readable. */
static int consume(void *region, size_t size, shared_ring_notifier *n, unsigned long *sleeps) {
    shared_ring_consumer c;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    struct epoll_event ev = { .events = EPOLLIN };
    uint64_t next = 0;
    int ep = epoll_create1(0), r;
    shared_ring_notifier_options(n, SHARED_RING_CONSUMER_END, &o);
    o.region_fd = region_fd;
    if (shared_ring_attach_consumer(&c, region, size, &o) != SHARED_RING_OK) return 1;
    ev.data.fd = n->fd[SHARED_RING_CONSUMER_END];
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev) != 0) return 1;
    for (;;) {
        r = shared_ring_read_some(&c, expect_next, &next);
        if (r > 0) continue;
        if (r == SHARED_RING_EMPTY) r = shared_ring_arm(&c);
        if (r == 1) continue;                             /* a message came in while arming */
        if (r != SHARED_RING_OK) break;                   /* CLOSED at the end */
        if ((r = shared_ring_consumer_peer_fd(&c)) >= 0) {
            /* a producer in another process: its death wakes the loop too
               (a producer thread needs none: ERR_STATE). Asked for before
               every sleep: the handle closes it when another process
               takes the side; EEXIST: already watched */
            struct epoll_event pe = { .events = EPOLLIN, .data.fd = r };
            if (epoll_ctl(ep, EPOLL_CTL_ADD, r, &pe) != 0 && errno != EEXIST) return 1;
        }
        if (epoll_wait(ep, &ev, 1, 10000) != 1) return 1; /* 10 s: a lost wake-up */
        shared_ring_notifier_clear(n, SHARED_RING_CONSUMER_END);
        ++*sleeps;
    }
    close(ep);
    return r == SHARED_RING_CLOSED && next == messages ? 0 : 1;
}

/* ---- two threads ------------------------------------------------------------- */

typedef struct thread_args {
    void *region;
    size_t size;
    shared_ring_notifier *notifier;
    int result;
} thread_args;

static void *producer_thread(void *arg) {
    thread_args *a = arg;
    a->result = produce(a->region, a->size, a->notifier);
    return NULL;
}

static int between_threads(void) {
    size_t size = shared_ring_region_size(CAPACITY, 0);
    void *region = aligned_alloc(128, size);
    shared_ring_notifier n;
    thread_args a = { region, size, &n, 1 };
    unsigned long sleeps = 0;
    pthread_t t;
    int r;
    if (!region || shared_ring_format(region, size, CAPACITY, 0) != SHARED_RING_OK ||
        shared_ring_notifier_open(&n) != SHARED_RING_OK)
        return 1;
    pthread_create(&t, NULL, producer_thread, &a);
    r = consume(region, size, &n, &sleeps);
    pthread_join(t, NULL);
    shared_ring_notifier_close(&n);
    printf("threads: %llu messages in order, consumer slept in epoll %lu times\n",
           (unsigned long long)messages, sleeps);
    free(region);
    return r | a.result;
}

/* ---- two processes: the eventfds travel over a UNIX socket ------------------ */

static int send_fds(int sock, const int fds[2]) {
    char byte = 0, control[CMSG_SPACE(2 * sizeof(int))] = { 0 };
    struct iovec iov = { &byte, 1 };
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control
    };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, 2 * sizeof(int));
    return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int receive_fds(int sock, int fds[2]) {
    char byte, control[CMSG_SPACE(2 * sizeof(int))];
    struct iovec iov = { &byte, 1 };
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control
    };
    struct cmsghdr *cm;
    if (recvmsg(sock, &msg, 0) != 1 || (cm = CMSG_FIRSTHDR(&msg)) == NULL ||
        cm->cmsg_type != SCM_RIGHTS)
        return -1;
    memcpy(fds, CMSG_DATA(cm), 2 * sizeof(int));
    return 0;
}

static int between_processes(void) {
    size_t size = shared_ring_region_size(CAPACITY, 0);
    shared_ring_shm shm; /* a memfd: its descriptor lets each side lock its byte */
    void *region;
    int sock[2], fds[2], status = 1, r;
    unsigned long sleeps = 0;
    pid_t child;
    if (shared_ring_shm_anonymous(&shm, size) != SHARED_RING_OK) return 1;
    region = shm.region;
    region_fd = shm.fd;
    if (shared_ring_format(region, size, CAPACITY, 0) != SHARED_RING_OK ||
        socketpair(AF_UNIX, SOCK_STREAM, 0, sock) != 0)
        return 1;
    shared_ring_notifier n;
    child = fork();
    if (child == 0) { /* the producer: the notifier is the descriptors it receives */
        close(sock[0]);
        if (receive_fds(sock[1], fds) != 0) _exit(1);
        n.fd[0] = n.signal_fd[0] = fds[0]; /* eventfds: each is its own signal */
        n.fd[1] = n.signal_fd[1] = fds[1];
        _exit(produce(region, size, &n));
    }
    close(sock[1]);
    /* made after the fork, so the child can only have it through the socket */
    if (shared_ring_notifier_open(&n) != SHARED_RING_OK || send_fds(sock[0], n.fd) != 0) return 1;
    r = consume(region, size, &n, &sleeps);
    waitpid(child, &status, 0);
    shared_ring_notifier_close(&n);
    printf("processes: %llu messages in order, consumer slept in epoll %lu times\n",
           (unsigned long long)messages, sleeps);
    shared_ring_shm_close(&shm);
    return r | !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv) {
    if (argc > 1) messages = strtoull(argv[1], NULL, 10);
    if (between_threads() != 0 || between_processes() != 0) {
        fprintf(stderr, "epoll_loop: FAILED\n");
        return 1;
    }
    return 0;
}
