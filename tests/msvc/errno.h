/* Stand-in for the MSVC C library's <errno.h> (see string.h here). */
#ifndef SRNG_STANDIN_ERRNO_H
#define SRNG_STANDIN_ERRNO_H
int *__cdecl _errno(void);
#define errno (*_errno())
#define ENOENT 2
#define EINTR 4
#define EAGAIN 11
#define EINVAL 22
#define ETIMEDOUT 138
#endif
