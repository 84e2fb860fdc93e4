/* Stand-in for the MSVC C library's <time.h> (see string.h here). */
#ifndef SRNG_STANDIN_TIME_H
#define SRNG_STANDIN_TIME_H
typedef long long time_t;
struct timespec {
    time_t tv_sec;
    long tv_nsec;
};
#define TIME_UTC 1
time_t __cdecl _time64(time_t *t);
static __inline time_t __cdecl time(time_t *t) { return _time64(t); }
int __cdecl _timespec64_get(struct timespec *ts, int base);
static __inline int __cdecl timespec_get(struct timespec *ts, int base) {
    return _timespec64_get(ts, base);
}
#endif
