# shared_ring.h - build, test and benchmark.
#   make test    unit, stress, crash, compile, example, fuzz-corpus tests (< 3 min)
#   make check   sanitizers (TSan, ASan+UBSan), valgrind, 1000-kill crash loop
#   make fuzz    libFuzzer on each harness for FUZZ_SECONDS (needs clang)
#   make stress  10^8 messages between threads (TSan), 10^7 between processes
#   make soak    unit, liveness and interleaving suites 20 times beside a
#                loading stress run (SOAK_ROUNDS=n)
#   make model   the protocol's spin models, and each rule reverted
#   make mutants each rule of the header reverted must fail a test (tests/mutants.sh)
#   make matrix  every standard, compiler, architecture and libc we have tools for
#   make bench   build and run the benchmark (the project's main job)
#   make instructions [AERON=path]   callgrind: instructions per 64-byte
#                message, one thread: implementation in the caller's file and
#                in its own, gcc/clang, a read per 1 and per 16 messages, and
#                Aeron's ring in the same loop (INSTR_HEADER=path: another header)
#   make peers [AERON=path]   between processes: a Unix socket, a pipe and
#                (with AERON) Aeron's C SPSC ring over shared memory; between
#                threads: Aeron's ring (PEERS_REPS, PEERS_SECONDS)
#   make alone   each side's calls timed alone, one thread, against the same
#                copy written inline (64 B and 256 B)
#   make install PREFIX=/usr/local [DESTDIR=...]   header, pkg-config, CMake package
#   make uninstall, make clean
# Honours CC, CXX, CFLAGS, CXXFLAGS, LDFLAGS, PREFIX, DESTDIR.

CC       ?= cc
CXX      ?= c++
CFLAGS   ?= -O2 -g
CXXFLAGS ?= -O2 -g
WARN      = -Wall -Wextra -Wpedantic -Werror
STRICT    = $(WARN) -Wconversion -Wshadow -Wstrict-prototypes
LIBS      = -lpthread

# How much the stress and crash tests run, per build flavour.
STRESS_MESSAGES      ?= 10000000
FENCED_STRESS_MESSAGES ?= 1000000
FAST_STRESS_MESSAGES ?= 1000000
HOLE_MESSAGES        ?= 2000000
CRASH_ROUNDS         ?= 50
TSAN_STRESS_MESSAGES ?= 200000
TSAN_CRASH_ROUNDS    ?= 20
ASAN_STRESS_MESSAGES ?= 1000000
ASAN_CRASH_ROUNDS    ?= 50
CRASH_LOOP_ROUNDS    ?= 1000
MUTATE_CALLS         ?= 200000
FUZZ_SECONDS         ?= 60
FUZZ_CC              ?= clang
# make stress: three thread modes and three process modes
STRESS_THREAD_MESSAGES  ?= 34000000
STRESS_PROCESS_MESSAGES ?= 3400000
FUZZ_TARGETS = consumer ops

B  = tests/bin
EB = examples/bin
HDR = shared_ring.h
TEST_HDRS = $(HDR) tests/harness.h tests/message_check.h
EXAMPLES = quickstart_threads quickstart_processes two_threads shm_producer shm_consumer \
           memfd_ring game_loop logger epoll_loop many_producers named_loop audio_thread
PREFIX ?= /usr/local
DESTDIR ?=
INCLUDEDIR = $(PREFIX)/include
PKGCONFIGDIR = $(PREFIX)/share/pkgconfig
CMAKEDIR = $(PREFIX)/share/cmake/shared_ring
VERSION = $(shell sed -n 's/^\#define SHARED_RING_VERSION "\(.*\)"/\1/p' shared_ring.h)

.PHONY: all test check bench examples run-examples install uninstall clean tsan asan \
        compile-tests readme-check ecosystem-tests model soak \
        fuzz fuzz-replay asan-fuzz-replay crash-loop memcheck stress matrix instructions peers alone

all: $(B)/unit $(B)/stress $(B)/crash $(addprefix $(EB)/,$(EXAMPLES)) bench/bench $(B)/alone tools/shared_ring_stat

# The inspector: look at a live ring in a file (or /dev/shm/NAME) from outside.
tools/shared_ring_stat: tools/shared_ring_stat.c $(HDR)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -o $@ $<

$(B) $(EB):
	mkdir -p $@

# ---- tests -----------------------------------------------------------------
$(B)/%: tests/%.c $(TEST_HDRS) tests/fuzz_main.h | $(B)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -o $@ $< $(LDFLAGS) $(LIBS)

# The implementation in its own file, as stb-style users build it: calls
# from the test go through the header's inline fast path.
FAST_TESTS = $(addprefix $(B)/fast-,fuzz_consumer fuzz_ops mutate stress results crash)
$(B)/fast_path: tests/fast_path.c tests/impl.c $(TEST_HDRS) | $(B)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -o $@ tests/fast_path.c tests/impl.c $(LDFLAGS) $(LIBS)
# the same with every publish fenced, as to a consumer in another process
$(B)/fenced-fast_path: tests/fast_path.c tests/impl.c $(TEST_HDRS) | $(B)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -DSHARED_RING_NO_MEMBARRIER -o $@ tests/fast_path.c tests/impl.c \
	    $(LDFLAGS) $(LIBS)
# Every call a call (SHARED_RING_NO_INLINE): the implementation's own functions, also in the
# cases the inline fast path takes everywhere else.
$(B)/noinline-unit: tests/unit.c $(TEST_HDRS) | $(B)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -DSHARED_RING_NO_INLINE -o $@ tests/unit.c $(LDFLAGS) $(LIBS)
$(B)/fast-%: tests/%.c tests/impl.c $(TEST_HDRS) tests/fuzz_main.h | $(B)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -DTEST_IMPLEMENTATION_ELSEWHERE -o $@ $< tests/impl.c \
	    $(LDFLAGS) $(LIBS)
$(B)/asan-fast-%: tests/%.c tests/impl.c $(TEST_HDRS) tests/fuzz_main.h | $(B)
	$(CC) -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all $(WARN) \
	    -DTEST_IMPLEMENTATION_ELSEWHERE -o $@ $< tests/impl.c $(LDFLAGS) $(LIBS)

# A C++ engine's alignas(32) command stream built in place with aligned
# claims, under UBSan's alignment check (a misaligned command aborts).
$(B)/ubsan-aligned_commands: tests/aligned_commands.cpp $(HDR) | $(B)
	$(CXX) -std=c++17 -O1 -g -fsanitize=undefined -fno-sanitize-recover=all $(WARN) -o $@ $< \
	    $(LDFLAGS) $(LIBS)

# The notifier with pipes, as POSIX systems without eventfd make it.
$(B)/notifier-pipes: tests/notifier.c $(TEST_HDRS) | $(B)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -DSHARED_RING_NOTIFIER_PIPES -o $@ $< $(LDFLAGS) $(LIBS)

# -Wno-tsan: TSan does not model atomic_thread_fence. Data races are
# judged by the release/acquire pairs, which it does model; the fences only
# order the sleep/wake handshake (stores of positions against loads of the
# sleeping words), which TSan has no way to check either way.
$(B)/tsan-%: tests/%.c $(TEST_HDRS) tests/fuzz_main.h | $(B)
	$(CC) -std=c11 -O1 -g -fsanitize=thread $(WARN) -Wno-tsan -o $@ $< $(LIBS)

# The same stress test with fences on every publish (the non-Linux path).
$(B)/fenced-stress: tests/stress.c $(TEST_HDRS) | $(B)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -DSHARED_RING_NO_MEMBARRIER -o $@ $< $(LDFLAGS) $(LIBS)

$(B)/asan-%: tests/%.c $(TEST_HDRS) | $(B)
	$(CC) -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
	    -fno-omit-frame-pointer $(WARN) -o $@ $< $(LIBS)

# Forced interleavings: the test build with a scheduling point at each
# lifecycle control word (tests/interleave.c defines them).
$(B)/interleave: tests/interleave.c $(TEST_HDRS) | $(B)
	$(CC) -std=gnu11 $(CFLAGS) $(WARN) -o $@ $< $(LDFLAGS) $(LIBS)

# Two builds of the library in one program: default and NO_OS_WAIT.
$(B)/mixed_builds: tests/mixed_builds.c tests/mixed_no_os_wait.c tests/mixed_builds.h $(TEST_HDRS) | $(B)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -o $@ tests/mixed_builds.c tests/mixed_no_os_wait.c $(LIBS)
$(B)/asan-mixed_builds: tests/mixed_builds.c tests/mixed_no_os_wait.c tests/mixed_builds.h $(TEST_HDRS) | $(B)
	$(CC) -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
	    $(WARN) -o $@ tests/mixed_builds.c tests/mixed_no_os_wait.c $(LIBS)

# The macOS wait branch, compiled on Linux against a stub of __ulock_wait.
$(B)/ulock-%: tests/%.c tests/ulock_stub.c $(TEST_HDRS) | $(B)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -D__APPLE__ -o $@ $< tests/ulock_stub.c $(LIBS)

# Compile tests: the header as C11 and C++17 with warnings as errors, the
# implementation as C and as C++, each program calling a function so that a
# misspelt SHARED_RING_IMPLEMENTATION fails to link.
$(B)/compile-c: tests/compile/use.c tests/compile/impl.c $(HDR) | $(B)
	$(CC) -std=c11 $(CFLAGS) $(STRICT) -o $@ tests/compile/use.c tests/compile/impl.c
# -O3 inlines more, and gcc's maybe-uninitialized looks further
$(B)/compile-c-O3: tests/compile/use.c tests/compile/impl.c $(HDR) | $(B)
	$(CC) -std=c11 -O3 -DSHARED_RING_SHM -DSHARED_RING_NOTIFIER -D_GNU_SOURCE $(STRICT) -o $@ \
	    tests/compile/use.c tests/compile/impl.c
$(B)/compile-c-gnu: tests/compile/use.c tests/compile/impl.c $(HDR) | $(B)
	$(CC) -std=gnu11 $(CFLAGS) $(STRICT) -o $@ tests/compile/use.c tests/compile/impl.c
$(B)/compile-cpp: tests/compile/use.cpp tests/compile/impl.cpp $(HDR) | $(B)
	$(CXX) -std=c++17 $(CXXFLAGS) $(WARN) -Wconversion -Wshadow -o $@ \
	    tests/compile/use.cpp tests/compile/impl.cpp
$(B)/compile-cpp-uses-c-impl: tests/compile/use.cpp tests/compile/impl.c $(HDR) | $(B)
	$(CC) -std=c11 $(CFLAGS) $(STRICT) -c -o $(B)/impl-c.o tests/compile/impl.c
	$(CXX) -std=c++17 $(CXXFLAGS) $(WARN) -o $@ tests/compile/use.cpp $(B)/impl-c.o
$(B)/compile-static: tests/compile/static_twice.c $(HDR) | $(B)
	$(CC) -std=c11 $(CFLAGS) $(STRICT) -o $@ $<
# What game engines build with: the whole header, implementation included,
# under g++'s strictest cast and pointer warnings, and clang++ -Weverything
# minus CLANG_EVERYTHING_EXCEPT (documented in the header's section 6).
CXX_STRICT = -Wall -Wextra -Wpedantic -Wold-style-cast -Wuseless-cast \
             -Wzero-as-null-pointer-constant -Wcast-qual -Wconversion -Wshadow -Werror
CLANG_EVERYTHING_EXCEPT = -Wno-c++98-compat -Wno-c++98-compat-pedantic -Wno-padded
$(B)/compile-cpp-strict: tests/compile/use.cpp tests/compile/impl.cpp $(HDR) | $(B)
	g++ -std=c++11 -O2 $(CXX_STRICT) -o $@ tests/compile/use.cpp tests/compile/impl.cpp
$(B)/compile-cpp-everything: tests/compile/use.cpp tests/compile/impl.cpp $(HDR) | $(B)
	clang++ -std=c++17 -O2 -Weverything $(CLANG_EVERYTHING_EXCEPT) -Werror -o $@ \
	    tests/compile/use.cpp tests/compile/impl.cpp
# Stats read right after the call, optimizer watching: no "may be used uninitialized".
$(B)/compile-stats-c: tests/compile/stats_use.c $(HDR) | $(B)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $<
$(B)/compile-stats-cpp: tests/compile/stats_use.c $(HDR) | $(B)
	$(CXX) -x c++ -std=c++17 -O2 -Wall -Wextra -Werror -o $@ $<

# C11 under clang -Weverything, the helpers included: the README's claim.
$(B)/compile-c-everything: tests/compile/use.c tests/compile/impl.c $(HDR) | $(B)
	clang -std=c11 -O2 -D_GNU_SOURCE -DSHARED_RING_SHM -DSHARED_RING_NOTIFIER -Weverything \
	    -Wno-padded -Werror -o $@ tests/compile/use.c tests/compile/impl.c

# The shared memory helpers (SHARED_RING_SHM) under the same strict flags.
$(B)/compile-shm-c: tests/compile/use.c tests/compile/impl.c $(HDR) | $(B)
	$(CC) -std=c11 -D_GNU_SOURCE -DSHARED_RING_SHM -DSHARED_RING_NOTIFIER $(CFLAGS) $(STRICT) -o $@ \
	    tests/compile/use.c tests/compile/impl.c
$(B)/compile-shm-cpp-strict: tests/compile/use.cpp tests/compile/impl.cpp $(HDR) | $(B)
	g++ -std=c++11 -O2 -DSHARED_RING_SHM -DSHARED_RING_NOTIFIER $(CXX_STRICT) -o $@ \
	    tests/compile/use.cpp tests/compile/impl.cpp
$(B)/compile-shm-cpp-everything: tests/compile/use.cpp tests/compile/impl.cpp $(HDR) | $(B)
	clang++ -std=c++17 -O2 -DSHARED_RING_SHM -DSHARED_RING_NOTIFIER -Weverything \
	    $(CLANG_EVERYTHING_EXCEPT) -Werror -o $@ \
	    tests/compile/use.cpp tests/compile/impl.cpp

# The helpers without OS waits (no <errno.h> from the wait section).
$(B)/compile-shm-no-os-wait: tests/compile/use.c tests/compile/impl.c $(HDR) | $(B)
	$(CC) -std=c11 -D_GNU_SOURCE -DSHARED_RING_SHM -DSHARED_RING_NO_OS_WAIT $(CFLAGS) $(STRICT) -o $@ \
	    tests/compile/use.c tests/compile/impl.c

COMPILE_TESTS = compile-c compile-c-O3 compile-c-gnu compile-c-everything compile-cpp \
                compile-cpp-uses-c-impl compile-static \
                compile-cpp-strict compile-cpp-everything compile-stats-c compile-stats-cpp \
                compile-shm-c compile-shm-cpp-strict compile-shm-cpp-everything compile-shm-no-os-wait

compile-tests: $(addprefix $(B)/,$(COMPILE_TESTS))
	@for t in $(COMPILE_TESTS); do ./$(B)/$$t || { echo "compile test $$t failed"; exit 1; }; done
	@# strict C11 hides ftruncate: the SHM helpers stop with an #error naming the define
	@! $(CC) -std=c11 -DSHARED_RING_SHM -fsyntax-only tests/compile/impl.c 2> $(B)/shm-strict.err && \
	    grep -q '#error.*_GNU_SOURCE' $(B)/shm-strict.err || \
	    { echo "compile test shm-strict-names-the-define failed"; exit 1; }
	@sh tests/fence_check.sh "$(CC)" $(B)
	@echo "compile: $(words $(COMPILE_TESTS) shm-strict fence-cc fence-clang fence-msvc-c fence-msvc-c++) passed, 0 failed"

# The README's code blocks must be the example files, byte for byte.
readme-check:
	@sh tests/readme_check.sh

# ---- fuzzing ---------------------------------------------------------------
# Without -DFUZZING a harness is a program that replays the files it is given.
$(B)/libfuzzer-%: tests/fuzz_%.c $(TEST_HDRS) tests/fuzz_main.h | $(B)
	$(FUZZ_CC) -std=c11 -O1 -g -DFUZZING -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -o $@ $<

fuzz-replay: $(addprefix $(B)/fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do ./$(B)/fuzz_$$t tests/fuzz/$$t/* || exit 1; done

asan-fuzz-replay: $(addprefix $(B)/asan-fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do ./$(B)/asan-fuzz_$$t tests/fuzz/$$t/* || exit 1; done

# Each harness runs FUZZ_SECONDS on a scratch copy of its seed corpus.
# fast-consumer: the consumer harness with the implementation in its own
# file, so the header's inline fast path reads what the fuzzer writes.
$(B)/libfuzzer-fast-consumer: tests/fuzz_consumer.c tests/impl.c $(TEST_HDRS) tests/fuzz_main.h | $(B)
	$(FUZZ_CC) -std=c11 -O1 -g -DFUZZING -DTEST_IMPLEMENTATION_ELSEWHERE \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ \
	    tests/fuzz_consumer.c tests/impl.c

fuzz: $(addprefix $(B)/libfuzzer-,$(FUZZ_TARGETS) fast-consumer)
	@for t in $(FUZZ_TARGETS) fast-consumer; do \
	    rm -rf $(B)/fuzz-work/$$t && mkdir -p $(B)/fuzz-work/$$t && \
	    cp tests/fuzz/$${t#fast-}/* $(B)/fuzz-work/$$t/ && \
	    ./$(B)/libfuzzer-$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	        -artifact_prefix=$(B)/fuzz-work/$$t- $(B)/fuzz-work/$$t \
	        > $(B)/fuzz-work/$$t.log 2>&1 || { tail -40 $(B)/fuzz-work/$$t.log; echo "fuzz $$t: FAILED"; exit 1; }; \
	    echo "fuzz $$t: $$(grep -o 'number_of_executed_units: [0-9]*' $(B)/fuzz-work/$$t.log | grep -o '[0-9]*') executions in $(FUZZ_SECONDS) s, no crash"; \
	done

# ---- crash loop, valgrind, long stress ----------------------------------------
crash-loop: $(B)/crash
	./$(B)/crash $(CRASH_LOOP_ROUNDS)

memcheck: $(B)/unit
	valgrind -q --error-exitcode=1 --leak-check=full ./$(B)/unit

stress: $(B)/tsan-stress $(B)/stress
	./$(B)/tsan-stress $(STRESS_THREAD_MESSAGES) threads
	./$(B)/stress $(STRESS_PROCESS_MESSAGES) processes

# ---- portability matrix (see tests/matrix.sh) -------------------------------------
matrix:
	sh tests/matrix.sh

# ---- examples --------------------------------------------------------------
$(EB)/%: examples/%.c $(HDR) $(wildcard examples/*.h) | $(EB)
	$(CC) -std=c11 $(CFLAGS) $(WARN) -I. -o $@ $< $(LDFLAGS) $(LIBS)

examples: $(addprefix $(EB)/,$(EXAMPLES))

# Every example runs; the two shm programs run together, as two processes.
RUN_ALONE = $(filter-out shm_producer shm_consumer named_loop,$(EXAMPLES))
run-examples: examples
	@for e in $(RUN_ALONE); do \
	    ./$(EB)/$$e > $(EB)/$$e.log 2>&1 || { cat $(EB)/$$e.log; echo "example $$e failed"; exit 1; }; \
	done
	@./$(EB)/logger 200 300 > $(EB)/logger-300.log 2>&1 || \
	    { tail -3 $(EB)/logger-300.log; echo "example logger with 300 threads failed"; exit 1; }
	@echo "examples: $(words $(RUN_ALONE)) passed, 0 failed (and the logger with 300 threads)"
	@sh tests/shm_examples.sh $(EB)

# ---- install ---------------------------------------------------------------------
install: shared_ring.pc.in cmake/shared_ringConfig.cmake.in
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(CMAKEDIR)
	install -m 644 shared_ring.h $(DESTDIR)$(INCLUDEDIR)/shared_ring.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' shared_ring.pc.in \
	    > $(DESTDIR)$(PKGCONFIGDIR)/shared_ring.pc
	rel=$$(realpath -m --relative-to=$(CMAKEDIR) $(INCLUDEDIR) 2>/dev/null || echo ../../../include); \
	sed -e "s|@REL_INCLUDEDIR@|$$rel|g" cmake/shared_ringConfig.cmake.in \
	    > $(DESTDIR)$(CMAKEDIR)/shared_ringConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|g' cmake/shared_ringConfigVersion.cmake.in \
	    > $(DESTDIR)$(CMAKEDIR)/shared_ringConfigVersion.cmake

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/shared_ring.h $(DESTDIR)$(PKGCONFIGDIR)/shared_ring.pc
	rm -f $(DESTDIR)$(CMAKEDIR)/shared_ringConfig.cmake $(DESTDIR)$(CMAKEDIR)/shared_ringConfigVersion.cmake
	-rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null

# Drop-in, install, pkg-config and CMake (add_subdirectory, FetchContent,
# find_package), each from an empty directory.
ecosystem-tests:
	sh tests/ecosystem.sh

# The unit, liveness and interleaving suites SOAK_ROUNDS times, each round
# beside a stress run that loads the other core.
SOAK_ROUNDS ?= 20
soak: $(B)/unit $(B)/liveness $(B)/interleave $(B)/stress
	sh tests/soak.sh $(SOAK_ROUNDS)

# The protocol's Promela models (spin): each passes, each rule reverted fails.
model:
	sh tests/model/check.sh

# Mutation testing: each rule of shared_ring.h reverted on its own
# (tests/mutants.txt, tests/model/mutants.txt) must fail a fast suite.
# Not in CI (~11 min); make test runs a smoke of it.
.PHONY: mutants
mutants:
	sh tests/mutants.sh

# ---- the suites -------------------------------------------------------------
OS_TESTS = $(B)/os_wait $(B)/clock_fail $(B)/mixed_builds $(B)/ulock-ulock_timeouts $(B)/ulock-unit
# Every suite runs even when one fails; tests/suites.sh ends with one line,
# "make test: N passed, M failed", and fails if M > 0.
test: $(B)/unit $(B)/noinline-unit $(B)/seams $(B)/realtime $(B)/results $(B)/stress $(B)/fenced-stress $(B)/crash $(B)/liveness $(B)/mutate \
      $(B)/wakeup_hole $(B)/shm_trust $(B)/kernel_lock $(B)/stale_judge $(B)/notifier $(B)/notifier-pipes \
      $(B)/interleave $(FAST_TESTS) $(B)/fast_path $(B)/fenced-fast_path $(B)/ubsan-aligned_commands \
      $(OS_TESTS) \
      $(addprefix $(B)/,$(COMPILE_TESTS)) $(addprefix $(B)/fuzz_,$(FUZZ_TARGETS)) examples \
      bench/bench
	@sh tests/suites.sh \
	    "./$(B)/unit" \
	    "./$(B)/noinline-unit" \
	    "./$(B)/seams" \
	    "./$(B)/realtime" \
	    "./$(B)/results shared_ring.h" \
	    "./$(B)/mutate $(MUTATE_CALLS)" \
	    "./$(B)/os_wait" \
	    "./$(B)/clock_fail" \
	    "./$(B)/mixed_builds" \
	    "./$(B)/ulock-ulock_timeouts" \
	    "./$(B)/ulock-unit" \
	    "./$(B)/stress $(STRESS_MESSAGES)" \
	    "./$(B)/fenced-stress $(FENCED_STRESS_MESSAGES)" \
	    "./$(B)/wakeup_hole $(HOLE_MESSAGES)" \
	    "./$(B)/crash $(CRASH_ROUNDS)" \
	    "./$(B)/liveness" \
	    "./$(B)/interleave" \
	    "sh tests/model/check.sh" \
	    "sh tests/mutants.sh --smoke" \
	    "./$(B)/shm_trust" \
	    "./$(B)/kernel_lock" \
	    "./$(B)/stale_judge" \
	    "./$(B)/notifier" \
	    "./$(B)/notifier-pipes" \
	    "./$(B)/fast_path" \
	    "./$(B)/fenced-fast_path" \
	    "./$(B)/ubsan-aligned_commands" \
	    "./$(B)/fast-results shared_ring.h" \
	    "./$(B)/fast-mutate $(MUTATE_CALLS)" \
	    "./$(B)/fast-stress $(FAST_STRESS_MESSAGES)" \
	    "./$(B)/fast-crash $(CRASH_ROUNDS)" \
	    "sh -c './$(B)/fast-fuzz_consumer tests/fuzz/consumer/* && ./$(B)/fast-fuzz_ops tests/fuzz/ops/*'" \
	    "$(MAKE) --no-print-directory compile-tests" \
	    "$(MAKE) --no-print-directory fuzz-replay" \
	    "$(MAKE) --no-print-directory run-examples" \
	    "$(MAKE) --no-print-directory readme-check" \
	    "$(MAKE) --no-print-directory ecosystem-tests" \
	    "sh tests/docs_check.sh" \
	    "sh tests/stat_check.sh" \
	    "sh tests/bench_smoke.sh bench/bench"

tsan: $(B)/tsan-unit $(B)/tsan-stress $(B)/tsan-crash
	./$(B)/tsan-unit
	./$(B)/tsan-stress $(TSAN_STRESS_MESSAGES)
	./$(B)/tsan-crash $(TSAN_CRASH_ROUNDS)

asan: $(B)/asan-unit $(B)/asan-stress $(B)/asan-crash $(B)/asan-mixed_builds $(B)/asan-os_wait \
      $(B)/asan-mutate $(B)/asan-liveness $(B)/asan-kernel_lock \
      $(B)/asan-fast-mutate $(B)/asan-fast-fuzz_consumer
	./$(B)/asan-unit
	./$(B)/asan-fast-mutate $(MUTATE_CALLS)
	./$(B)/asan-fast-fuzz_consumer tests/fuzz/consumer/*
	./$(B)/asan-liveness
	./$(B)/asan-kernel_lock
	for seed in 1 2 3 4 5; do ./$(B)/asan-mutate $(MUTATE_CALLS) $$seed || exit 1; done
	./$(B)/asan-mixed_builds
	./$(B)/asan-os_wait
	./$(B)/asan-stress $(ASAN_STRESS_MESSAGES)
	./$(B)/asan-crash $(ASAN_CRASH_ROUNDS)

check: tsan asan asan-fuzz-replay memcheck crash-loop

# ---- benchmark ---------------------------------------------------------------
# The implementation in its own file, as users build it (bench/impl.c).
bench/bench: bench/bench.c bench/impl.c bench/machine_state.h $(HDR)
	$(CC) -std=c11 -O3 -g $(WARN) -o $@ bench/bench.c bench/impl.c $(LDFLAGS) $(LIBS) -lm

bench: bench/bench
	./bench/bench

# Exact instruction counts (valgrind), which do not drift with machine noise.
INSTR_HEADER ?= ../shared_ring.h
INSTR_MESSAGES ?= 1000000
instructions: bench/instructions.c bench/impl.c $(HDR) | $(B)
	AERON="$(AERON)" INSTR_MESSAGES=$(INSTR_MESSAGES) INSTR_HEADER="$(INSTR_HEADER)" \
	    sh bench/instructions.sh

PEERS_REPS ?= 5
PEERS_SECONDS ?= 0.4
peers:
	sh bench/peers/peers.sh "$(AERON)" $(PEERS_REPS) $(PEERS_SECONDS)

$(B)/alone: bench/alone.c $(HDR) | $(B)
	$(CC) -std=c11 -O3 -g $(WARN) -o $@ bench/alone.c $(LDFLAGS) $(LIBS)

alone: $(B)/alone
	./$(B)/alone 64
	./$(B)/alone 256

clean:
	rm -rf $(B) $(EB) bench/bench tools/shared_ring_stat
