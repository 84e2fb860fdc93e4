/* Cross-ABI sharing: built once as a 32-bit and once as a 64-bit program,
   run as producer in one ABI and consumer in the other over one file-backed
   mapping. Random sizes, sequence numbers and checksums (message_check.h);
   message seq is claimed at an alignment of 8 << (seq % 4) bytes (8, 16,
   32, 64) and must arrive at it.

   usage: cross_abi format FILE [CAPACITY]    (default 64 KiB)
          cross_abi produce FILE COUNT
          cross_abi consume FILE COUNT     exit 0 when all COUNT arrived intact */
#define _GNU_SOURCE
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
#include "message_check.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CAPACITY (1u << 16)
#define MAX_LEN 3000u

/* The ring file's descriptor, kept open: each side names it in
   options.region_fd (the kernel's locks then tell a peer of its death). */
static int ring_fd;

/* Map the ring file: created with `capacity` (0: an existing one, at its
   size). */
static void *map_file(const char *path, size_t capacity, size_t *size) {
    int fd = open(path, capacity != 0 ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR, 0600);
    struct stat st;
    void *mem;
    if (fd < 0) return NULL;
    if (capacity != 0) {
        *size = shared_ring_region_size(capacity, 0);
        if (ftruncate(fd, (off_t)*size) != 0) return NULL;
    } else {
        if (fstat(fd, &st) != 0) return NULL;
        *size = (size_t)st.st_size;
    }
    mem = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ring_fd = fd;
    return mem == MAP_FAILED ? NULL : mem;
}

static size_t alignment_of(uint64_t seq) { return (size_t)8u << (seq % 4u); }

/* message_tally_check, and the message's alignment. */
static int check_aligned(void *user, const void *data, size_t len) {
    message_tally *v = (message_tally *)user;
    if ((uintptr_t)data % alignment_of(v->delivered) != 0) v->bad++;
    return message_tally_check(user, data, len);
}

static int produce(void *mem, size_t size, uint64_t count) {
    shared_ring_producer p;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    uint64_t seq;
    o.region_fd = ring_fd;
    if (shared_ring_attach_producer(&p, mem, size, &o) != SHARED_RING_OK) return 2;
    for (seq = 0; seq < count; seq++) {
        size_t len = message_len(seq, MAX_LEN);
        void *dst;
        if (shared_ring_claim_aligned(&p, len, alignment_of(seq), &dst, 10000000000ull) !=
            SHARED_RING_OK)
            return 3;
        message_fill(seq, (unsigned char *)dst, len);
        shared_ring_commit(&p, len);
    }
    return shared_ring_close(&p) == SHARED_RING_OK ? 0 : 4;
}

static int consume(void *mem, size_t size, uint64_t count) {
    shared_ring_consumer c;
    shared_ring_options o = SHARED_RING_OPTIONS_INIT;
    message_tally v = { 0, 0, MAX_LEN };
    int r;
    o.region_fd = ring_fd;
    if (shared_ring_attach_consumer(&c, mem, size, &o) != SHARED_RING_OK) return 2;
    while ((r = shared_ring_read(&c, check_aligned, &v, 10000000000ull)) >= 0) {
    }
    printf("cross_abi: %u-bit consumer got %llu of %llu messages, %llu bad, ended with %s\n",
           (unsigned)(sizeof(void *) * 8), (unsigned long long)v.delivered,
           (unsigned long long)count, (unsigned long long)v.bad, shared_ring_result_string(r));
    return r == SHARED_RING_CLOSED && v.delivered == count && v.bad == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    size_t size;
    void *mem;
    if (argc < 3) {
        fprintf(stderr, "usage: cross_abi format|produce|consume FILE [COUNT]\n");
        return 2;
    }
    mem = map_file(argv[2],
                   strcmp(argv[1], "format") != 0 ? 0 : argc > 3 ? strtoul(argv[3], NULL, 10) : CAPACITY,
                   &size);
    if (mem == NULL) {
        perror(argv[2]);
        return 2;
    }
    if (strcmp(argv[1], "format") == 0)
        return shared_ring_format(mem, size, 0, MAX_LEN) == SHARED_RING_OK ? 0 : 1;
    if (argc < 4) return 2;
    if (strcmp(argv[1], "produce") == 0) return produce(mem, size, strtoull(argv[3], NULL, 10));
    return consume(mem, size, strtoull(argv[3], NULL, 10));
}
