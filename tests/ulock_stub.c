/* Darwin's __ulock_wait/__ulock_wake on Linux, over futex, so that the
   library's macOS wait branch (compiled with -D__APPLE__) runs here: make
   matrix builds the unit tests and tests/ulock_timeouts.c against it. The
   names are Darwin's own; the stub records each timeout it is given.
   Semantics as on Darwin: timeout 0 = none; -1 with errno ETIMEDOUT when
   the timeout passed. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint32_t ulock_stub_last_timeout_us = 12345u; /* 12345: never called */
long ulock_stub_waits;

int __ulock_wait(uint32_t operation, void *addr, uint64_t value, uint32_t timeout_us);
int __ulock_wake(uint32_t operation, void *addr, uint64_t wake_value);

int __ulock_wait(uint32_t operation, void *addr, uint64_t value, uint32_t timeout_us) {
    struct timespec ts;
    long r;
    (void)operation;
    __atomic_store_n(&ulock_stub_last_timeout_us, timeout_us, __ATOMIC_RELAXED);
    __atomic_fetch_add(&ulock_stub_waits, 1, __ATOMIC_RELAXED);
    ts.tv_sec = (time_t)(timeout_us / 1000000u);
    ts.tv_nsec = (long)(timeout_us % 1000000u) * 1000;
    r = syscall(SYS_futex, addr, 0, (uint32_t)value, timeout_us == 0 ? NULL : &ts, NULL, 0);
    if (r == -1 && errno == EAGAIN) return 0; /* value changed: Darwin returns at once */
    return r == -1 ? -1 : 0;
}

int __ulock_wake(uint32_t operation, void *addr, uint64_t wake_value) {
    (void)operation;
    (void)wake_value;
    return (int)syscall(SYS_futex, addr, 1, INT_MAX, NULL, NULL, 0);
}
