/* Shared by shm_producer.c and shm_consumer.c: map a ring in a named POSIX
   shared memory object. */
#ifndef EXAMPLES_SHM_COMMON_H
#define EXAMPLES_SHM_COMMON_H

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHM_CAPACITY (1u << 20)

/* Map NAME (creating and sizing it if `create`). NULL on failure, or if
   the object is still smaller than a ring: touching a mapping beyond the
   end of its object would raise SIGBUS. */
static void *shm_map(const char *name, int create, size_t *size) {
    int fd = shm_open(name, create ? O_CREAT | O_RDWR : O_RDWR, 0600);
    struct stat st;
    void *mem;
    *size = shared_ring_region_size(SHM_CAPACITY);
    if (fd < 0) return NULL;
    if ((create && ftruncate(fd, (off_t)*size) != 0) || fstat(fd, &st) != 0 ||
        (size_t)st.st_size < *size) {
        close(fd);
        return NULL;
    }
    mem = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return mem == MAP_FAILED ? NULL : mem;
}

#endif
