/* The calls the mixed-build test needs, from one build of the library. */
#ifndef TESTS_MIXED_BUILDS_H
#define TESTS_MIXED_BUILDS_H
#include "../shared_ring.h"

typedef struct ring_build {
    const char *name;
    int (*attach_producer)(shared_ring_producer *, void *, size_t, const shared_ring_options *);
    int (*attach_consumer)(shared_ring_consumer *, void *, size_t, const shared_ring_options *);
    int (*write_bytes)(shared_ring_producer *, const void *, size_t, uint64_t);
    int (*read)(shared_ring_consumer *, shared_ring_read_fn, void *, uint64_t);
    int (*detach_producer)(shared_ring_producer *);
} ring_build;

extern const ring_build no_os_wait_build; /* tests/mixed_no_os_wait.c */
#endif
