/* The MSVC-mode compile check (tests/matrix.sh): the header, its
   implementation and the shared memory helpers, used the way the quick
   start uses them, with the allocation an MSVC user writes. Compiled as C
   and as C++ by clang in MSVC mode against the stand-in headers in this
   directory; never linked or run here (no MSVC, no Windows). */
#ifndef _MSC_VER
#error "compile this in MSVC mode: _MSC_VER must be defined"
#endif
#define SHARED_RING_IMPLEMENTATION
#define SHARED_RING_SHM
#define SHARED_RING_NOTIFIER
#include "shared_ring.h"

#include <malloc.h>

static int count_message(void *user, const void *data, size_t len) {
    (void)data;
    (void)len;
    ++*SRNG_CAST(int *, user);
    return 0;
}

int quickstart(void);
int quickstart(void) {
    size_t size = shared_ring_region_size(1 << 16, 0);
    void *region = _aligned_malloc(size, 128); /* MSVC has no aligned_alloc */
    shared_ring_producer p;
    shared_ring_consumer c;
    shared_ring_shm shm;
    shared_ring_notifier n;
    shared_ring_options o = shared_ring_default_options();
    int count = 0;
    if (region == SHARED_RING_NULLPTR) return 1;
    shared_ring_format(region, size, 1 << 16, 0);
    shared_ring_attach_producer(&p, region, size, SHARED_RING_NULLPTR);
    shared_ring_attach_consumer(&c, region, size, SHARED_RING_NULLPTR);
    shared_ring_write_str(&p, "hello", SHARED_RING_FOREVER);
    shared_ring_close(&p);
    while (shared_ring_read(&c, count_message, &count, SHARED_RING_FOREVER) >= 0) {
    }
    _aligned_free(region);
    if (shared_ring_notifier_open(&n) == SHARED_RING_OK) {
        shared_ring_notifier_options(&n, SHARED_RING_CONSUMER_END, &o);
        shared_ring_notifier_clear(&n, SHARED_RING_CONSUMER_END);
        shared_ring_notifier_close(&n);
    }
    if (shared_ring_shm_open(&shm, "Local\\shared_ring_quickstart", size, 0) == SHARED_RING_OK)
        shared_ring_shm_close(&shm);
    return count == 1 ? 0 : 1;
}
