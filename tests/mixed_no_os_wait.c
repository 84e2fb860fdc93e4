/* The library built with SHARED_RING_NO_OS_WAIT, beside a default build in
   the same program (tests/mixed_builds.c): SHARED_RING_STATIC keeps the two
   copies apart. */
#define SHARED_RING_STATIC
#define SHARED_RING_NO_OS_WAIT
#define SHARED_RING_IMPLEMENTATION
#include "mixed_builds.h"

const ring_build no_os_wait_build = { "no-os-wait", shared_ring_attach_producer,
                                      shared_ring_attach_consumer, shared_ring_write_bytes,
                                      shared_ring_read, shared_ring_detach_producer };
