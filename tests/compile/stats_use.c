/* Stats used the plain way, with the implementation in view of the
   optimizer: `shared_ring_stats st; shared_ring_producer_stats(p, &st);`
   then reading st must not warn "may be used uninitialized" (every path of
   the stats functions writes *out). Built as C and as C++ with -O2 -Wall
   -Wextra -Werror; run, it checks the counters too. */
#define SHARED_RING_IMPLEMENTATION
#include "../../shared_ring.h"

#include <stdlib.h>

static unsigned long long use(uint64_t v) { return (unsigned long long)v; }

static unsigned long long messages_written(const shared_ring_producer *p) {
    shared_ring_stats st;
    shared_ring_producer_stats(p, &st);
    return use(st.messages);
}

static unsigned long long messages_read(const shared_ring_consumer *c) {
    shared_ring_stats st;
    shared_ring_consumer_stats(c, &st);
    return use(st.messages) + use(st.bytes);
}

static int ignore(void *user, const void *data, size_t len) {
    (void)user;
    (void)data;
    (void)len;
    return 0;
}

int main(void) {
    static unsigned char region[SHARED_RING_HEADER_SIZE + 1024] __attribute__((aligned(128)));
    shared_ring_producer p;
    shared_ring_consumer c;
    if (shared_ring_format(region, sizeof region, 1024, 0) != SHARED_RING_OK) return 1;
    if (shared_ring_attach_producer(&p, region, sizeof region, SHARED_RING_NULLPTR) != 0) return 1;
    if (shared_ring_attach_consumer(&c, region, sizeof region, SHARED_RING_NULLPTR) != 0) return 1;
    shared_ring_write_bytes(&p, "abc", 3, 0);
    shared_ring_read_some(&c, ignore, SHARED_RING_NULLPTR);
    /* and on an error path: a zeroed handle */
    memset(&p, 0, sizeof p);
    return messages_written(&p) == 0 && messages_read(&c) == 1 + 3 ? EXIT_SUCCESS : EXIT_FAILURE;
}
