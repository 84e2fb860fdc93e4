/* The implementation in a translation unit of its own, as users of an
   stb-style header build it: linked to bench/bench.c, and to
   bench/instructions.c built with -DSEPARATE_IMPLEMENTATION. */
#define SHARED_RING_IMPLEMENTATION
#ifndef SHARED_RING_HEADER
#define SHARED_RING_HEADER "../shared_ring.h"
#endif
#include SHARED_RING_HEADER
