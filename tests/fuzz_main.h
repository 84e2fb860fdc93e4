/* Shared by the fuzz targets. Under libFuzzer (-fsanitize=fuzzer) the
   fuzzer supplies main(); otherwise FUZZ_REPLAY_MAIN is a main() that runs
   the target once on each file named on the command line, so the seed
   corpus is a regression test without clang's fuzzer runtime. */
#ifndef TESTS_FUZZ_MAIN_H
#define TESTS_FUZZ_MAIN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef FUZZING
#define FUZZ_REPLAY_MAIN
#else
#define FUZZ_REPLAY_MAIN                                                          \
    int main(int argc, char **argv) {                                             \
        int i, replayed = 0;                                                      \
        for (i = 1; i < argc; i++) {                                              \
            static uint8_t buf[1 << 20];                                          \
            size_t n;                                                             \
            FILE *f = fopen(argv[i], "rb");                                       \
            if (f == NULL) {                                                      \
                perror(argv[i]);                                                  \
                return 1;                                                         \
            }                                                                     \
            n = fread(buf, 1, sizeof buf, f);                                     \
            fclose(f);                                                            \
            LLVMFuzzerTestOneInput(buf, n);                                       \
            replayed++;                                                           \
        }                                                                         \
        printf("%s: %d passed, 0 failed (corpus replayed)\n", argv[0], replayed); \
        return replayed > 0 ? 0 : 1;                                              \
    }
#endif

#endif
