/* SHARED_RING_STATIC: everything static in this file; including the header
   twice with the implementation defined must emit it only once. */
#define SHARED_RING_STATIC
#define SHARED_RING_IMPLEMENTATION
#include "../../shared_ring.h"
#include "../../shared_ring.h"

static unsigned char region[SHARED_RING_HEADER_SIZE + 256] __attribute__((aligned(128)));

int main(void) {
    shared_ring_producer p;
    size_t size = shared_ring_region_size(256, 0);
    if (shared_ring_format(region, size, 256, 0) != SHARED_RING_OK) return 1;
    if (shared_ring_attach_producer(&p, region, size, NULL) != SHARED_RING_OK) return 1;
    return shared_ring_write_str(&p, "static", 0) == SHARED_RING_OK ? 0 : 1;
}
