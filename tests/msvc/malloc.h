/* Stand-in for the MSVC C library's <malloc.h> (see string.h here). */
#ifndef SRNG_STANDIN_MALLOC_H
#define SRNG_STANDIN_MALLOC_H
#include <stddef.h>
void *__cdecl _aligned_malloc(size_t size, size_t alignment);
void __cdecl _aligned_free(void *block);
#endif
