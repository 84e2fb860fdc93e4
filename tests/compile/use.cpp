// The public header included from C++ (no _Atomic in public types).
#include "../../shared_ring.h"

int main() {
    shared_ring_options o = shared_ring_default_options();
    return shared_ring_region_size(1024, 0) == 1024 + SHARED_RING_HEADER_SIZE &&
                   o.resume_percent == 50u
               ? 0
               : 1;
}
