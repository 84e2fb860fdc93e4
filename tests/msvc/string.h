/* Stand-in for the MSVC C library's <string.h>: only what shared_ring.h
   uses, with the library's signatures. For the MSVC-mode compile check
   (tests/matrix.sh); nothing here is linked or run. */
#ifndef SRNG_STANDIN_STRING_H
#define SRNG_STANDIN_STRING_H
#include <stddef.h>
void *__cdecl memcpy(void *dst, const void *src, size_t n);
void *__cdecl memset(void *dst, int c, size_t n);
void *__cdecl memchr(const void *s, int c, size_t n);
int __cdecl memcmp(const void *a, const void *b, size_t n);
size_t __cdecl strlen(const char *s);
char *__cdecl strchr(const char *s, int c);
char *__cdecl strrchr(const char *s, int c);
char *__cdecl strstr(const char *s, const char *sub);
#endif
