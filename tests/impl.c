/* The implementation alone, for the fast-* builds of the tests (each test
   file with -DTEST_IMPLEMENTATION_ELSEWHERE, linked to this): the way
   stb-style users build it, so the tests' calls take the header's inline
   fast path. Every helper any of those tests uses is compiled in. */
#define _GNU_SOURCE
#define SHARED_RING_SHM
#define SHARED_RING_NOTIFIER
#define SHARED_RING_IMPLEMENTATION

/* The implementation's write prefetches, recorded instead of made (tests/fast_path.c reads
   them). */
const void *test_prefetched[64];
int test_prefetches;
#define SRNG_PREFETCHW(addr) \
    __atomic_store_n(&test_prefetched[__atomic_fetch_add(&test_prefetches, 1, __ATOMIC_RELAXED) & 63], \
                     (const void *)(addr), __ATOMIC_RELAXED)
#include "../shared_ring.h"
