// The implementation compiled as C++ (std::atomic instead of <stdatomic.h>).
#define SHARED_RING_IMPLEMENTATION
#include "../../shared_ring.h"
