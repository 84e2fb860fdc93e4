/* The one translation unit that emits the implementation (C11). */
#define SHARED_RING_IMPLEMENTATION
#include "../../shared_ring.h"
