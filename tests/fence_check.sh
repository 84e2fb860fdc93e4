#!/bin/sh
# x86-64's full fence must be a locked or, never mfence (Clang 14's mfence made a
# 64-byte message between processes 8x slower, docs/benchmarks.md). Checked for
# every compiler that can build an x86-64 object here: $CC and clang as
# themselves, and clang in MSVC mode (clang-cl) as C and as C++, whose
# <stdatomic.h> and <atomic> fence with mfence. A configuration is skipped, and
# says so, where its compiler or objdump is missing, the compiler does not
# target x86-64, or objdump cannot read the object (COFF).
#
# usage: sh tests/fence_check.sh CC OUTDIR   (exits 1 on the first failure)
set -u
cc=$1 out=$2

# "lock" may end a line of objdump's output (llvm-objdump), its "or" on the next;
# the "or" must be an instruction, not the "xor" that often follows.
fenced_with_lock_or() {
    objdump -d "$1" | grep -A1 -w lock | grep -Eq '(^|[[:space:]])or[bwlq]?[[:space:]]' &&
        ! objdump -d "$1" | grep -q mfence
}

# check NAME COMPILER FLAGS SOURCE: FLAGS are shell words (eval: quoted -D values work)
check() {
    name="compile test fence-is-a-locked-or ($1)" o=$out/fence.o
    if ! command -v objdump > /dev/null || ! command -v "$2" > /dev/null; then
        echo "$name: skipped (no objdump or no $2)"
        return 0
    fi
    macros=$(eval "$2 $3 -dM -E /dev/null") || { echo "$name failed (the compiler does not run)"; exit 1; }
    if ! printf '%s\n' "$macros" | grep -q '__x86_64__ 1'; then
        echo "$name: skipped (not x86-64)"
        return 0
    fi
    eval "$2 $3 -O2 -c \"\$4\" -o \"\$o\"" || { echo "$name failed (does not build)"; exit 1; }
    if ! objdump -f "$o" 2> /dev/null | grep -q 'x86-64'; then
        echo "$name: skipped (objdump cannot read the object)"
        return 0
    fi
    fenced_with_lock_or "$o" || { echo "$name failed"; exit 1; }
}

msvc="--target=x86_64-pc-windows-msvc -fms-compatibility -fms-extensions -isystem tests/msvc -I."
check "$cc" "${cc%% *}" "$(printf '%s' "$cc" | sed 's/^[^ ]*//') -x c -std=c11" tests/compile/impl.c
check clang clang "-x c -std=c11" tests/compile/impl.c
check "clang, MSVC mode, C" clang "$msvc -x c -std=c11" tests/msvc/quickstart.c
check "clang, MSVC mode, C++" clang "$msvc -x c++ -std=c++17" tests/msvc/quickstart.c
