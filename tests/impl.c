/* The implementation alone, for the fast-* builds of the tests (each test
   file with -DTEST_IMPLEMENTATION_ELSEWHERE, linked to this): the way
   stb-style users build it, so the tests' calls take the header's inline
   fast path. Every helper any of those tests uses is compiled in. */
#define _GNU_SOURCE
#define SHARED_RING_SHM
#define SHARED_RING_NOTIFIER
#define SHARED_RING_IMPLEMENTATION
#include "../shared_ring.h"
