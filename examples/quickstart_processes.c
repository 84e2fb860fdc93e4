/* Quick start, two processes: the parent creates a named shared memory
   object, formats a ring in it and writes 1000 messages; a child process
   (it could be any program that opens the same name) maps it and reads them.
   This file is the README's quick start for processes. */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define RING_NAME "/shared_ring_quickstart"
#define CAPACITY (1 << 20)

static void *map_ring(int create) {
    size_t size = shared_ring_region_size(CAPACITY);
    int fd = shm_open(RING_NAME, create ? O_CREAT | O_RDWR : O_RDWR, 0600);
    if (fd < 0 || (create && ftruncate(fd, (off_t)size) != 0)) return NULL;
    void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return mem == MAP_FAILED ? NULL : mem;
}

static int count_message(void *user, const void *data, size_t len) {
    (void)data;
    (void)len;
    (*(int *)user)++;
    return 0;
}

static int consumer_process(void) {
    void *mem = map_ring(0);
    shared_ring_consumer c;
    int count = 0, r;
    if (!mem || shared_ring_attach_consumer(&c, mem, shared_ring_region_size(CAPACITY), NULL))
        return 1;
    /* A timeout instead of FOREVER: if the producer dies, we notice. */
    while ((r = shared_ring_read(&c, count_message, &count, 2000000000ull)) >= 0) {
    }
    printf("consumer: %d messages, then %s\n", count, shared_ring_result_string(r));
    fflush(stdout); /* _exit() below does not flush */
    return count == 1000 && r == SHARED_RING_CLOSED ? 0 : 1;
}

int main(void) {
    size_t size = shared_ring_region_size(CAPACITY);
    void *mem = map_ring(1);
    shared_ring_producer p;
    int status = 1;
    if (!mem || shared_ring_format(mem, size, CAPACITY, 0) != SHARED_RING_OK) return 1;

    pid_t child = fork();
    if (child == 0) _exit(consumer_process());

    shared_ring_attach_producer(&p, mem, size, NULL);
    for (int i = 0; i < 1000; i++) {
        struct {
            int id;
            double value;
        } sample = { i, i * 0.5 };
        shared_ring_write_bytes(&p, &sample, sizeof sample, SHARED_RING_FOREVER);
    }
    shared_ring_close(&p);

    waitpid(child, &status, 0);
    shm_unlink(RING_NAME);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
