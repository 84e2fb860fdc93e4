/* Declarations only: links against impl.c or impl.cpp, so a misspelt
   SHARED_RING_IMPLEMENTATION in either fails the build at link time. */
#include "../../shared_ring.h"
#include "../../shared_ring.h" /* the include guard makes this harmless */

int main(void) { return shared_ring_region_size(1024, 0) == 1024 + SHARED_RING_HEADER_SIZE ? 0 : 1; }
