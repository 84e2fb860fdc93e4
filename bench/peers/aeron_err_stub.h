/* aeron_spsc_rb.c reports bad capacities through Aeron's error module,
   which the peer harnesses do not build: this is the one function it
   calls. Included once by each harness program. */
#ifndef BENCH_AERON_ERR_STUB_H
#define BENCH_AERON_ERR_STUB_H
#include <stdio.h>

void aeron_err_set(int errcode, const char *function, const char *filename, int line_number,
                   const char *format, ...);
void aeron_err_set(int errcode, const char *function, const char *filename, int line_number,
                   const char *format, ...) {
    fprintf(stderr, "aeron error %d in %s (%s:%d): %s\n", errcode, function, filename, line_number,
            format);
}
#endif
