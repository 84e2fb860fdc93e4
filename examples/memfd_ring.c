/* Two processes over a Linux memfd: an anonymous shared-memory file with no
   name in any file system. The producer creates it, formats a ring in it
   and starts a consumer program (this same binary, exec'd anew) that opens
   the memfd through /proc/<pid>/fd/<n>, a path any process of the same user
   could open. Then it writes COUNT messages and closes the stream. */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION
#include "shared_ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAPACITY (1u << 18)

static void *map_fd(int fd, size_t size) {
    void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return mem == MAP_FAILED ? NULL : mem;
}

static int count(void *user, const void *data, size_t len) {
    (void)data;
    (void)len;
    (*(unsigned long *)user)++;
    return 0;
}

static int consume(const char *path) {
    size_t size = shared_ring_region_size(CAPACITY, 0);
    int fd = open(path, O_RDWR);
    void *mem = fd >= 0 ? map_fd(fd, size) : NULL;
    shared_ring_options o = shared_ring_default_options();
    shared_ring_consumer c;
    unsigned long n = 0;
    int r;
    o.region_fd = fd; /* the kernel then tells us for certain when the producer dies */
    if (mem == NULL || shared_ring_attach_consumer(&c, mem, size, &o) != SHARED_RING_OK) return 1;
    while ((r = shared_ring_read(&c, count, &n, 5000000000ull)) >= 0) {
    }
    printf("memfd consumer: %lu messages, then %s\n", n, shared_ring_result_string(r));
    return r == SHARED_RING_CLOSED ? 0 : 1;
}

int main(int argc, char **argv) {
    size_t size = shared_ring_region_size(CAPACITY, 0);
    unsigned long total = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    shared_ring_producer p;
    char path[64];
    int fd, status = 1;
    void *mem;
    pid_t child;
    if (argc > 2 && strcmp(argv[1], "consume") == 0) return consume(argv[2]);

    fd = memfd_create("shared_ring", 0);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0 || (mem = map_fd(fd, size)) == NULL) {
        perror("memfd");
        return 1;
    }
    shared_ring_format(mem, size, CAPACITY, 0);
    snprintf(path, sizeof path, "/proc/%ld/fd/%d", (long)getpid(), fd);
    child = fork();
    if (child == 0) {
        execl("/proc/self/exe", argv[0], "consume", path, (char *)NULL);
        _exit(127);
    }
    shared_ring_options o = shared_ring_default_options();
    o.region_fd = fd;
    shared_ring_attach_producer(&p, mem, size, &o);
    for (unsigned long i = 0; i < total; i++)
        if (shared_ring_write_bytes(&p, &i, sizeof i, 5000000000ull) != SHARED_RING_OK) break;
    shared_ring_close(&p);
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
