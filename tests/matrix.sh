#!/bin/sh
# make matrix: build and run the test suite on every standard, compiler,
# architecture and C library this machine has tools for. Each row prints
# PASS, FAIL or SKIP (with the reason). Exits non-zero if any row failed,
# or, with MATRIX_REQUIRE_ALL=1 (CI), if any row other than macOS skipped.
#
# Rows: C11/C17/C2x x gcc/clang and C++11/17/20 x g++/clang++ (strict
# warnings on the header and implementation, then unit + stress + crash);
# i386, aarch64, armhf, riscv64 (static, under qemu-user where foreign);
# Windows x86_64 (mingw-w64, under wine; WaitOnAddress and the Sleep
# fallback); i386 and armhf with a 64-bit time_t (futex timeouts); the macOS
# wait branch on a __ulock_wait stub; musl; 32-bit <-> 64-bit processes sharing one mapping; a
# target without lock-free 64-bit atomics must fail to compile; MSVC mode
# (clang as MSVC, compile only).
set -u
cd "$(dirname "$0")/.."

OUT=tests/bin/matrix
mkdir -p "$OUT"
STRICT="-Wall -Wextra -Wpedantic -Wconversion -Wshadow -Werror"
WARN="-Wall -Wextra -Wpedantic -Werror"
STRESS=${MATRIX_STRESS_MESSAGES:-200000}
CRASH=${MATRIX_CRASH_ROUNDS:-10}
REQUIRE_ALL=${MATRIX_REQUIRE_ALL:-0}
ROW_TIMEOUT=${MATRIX_ROW_TIMEOUT:-900}
passed=0 failed=0 skipped=0 unexpected_skips=0

have() { command -v "$1" >/dev/null 2>&1; }

# cross NAME ARCH: split ARCH (label:triple:runner) into $label, $triple,
# $runner; record a SKIP for row NAME and fail if the tools are missing.
cross() {
    label=${2%%:*} rest=${2#*:}
    triple=${rest%%:*} runner=${rest#*:}
    if ! have "$triple-gcc"; then skip "$1" "$triple-gcc not installed"; return 1; fi
    if [ -n "$runner" ] && ! have "$runner"; then skip "$1" "$runner not installed"; return 1; fi
}

pass() { printf '%-44s PASS  %s\n' "$1" "$2"; passed=$((passed + 1)); }
skip() {
    printf '%-44s SKIP  %s\n' "$1" "$2"
    skipped=$((skipped + 1))
    case "$1" in macos*) ;; *) unexpected_skips=$((unexpected_skips + 1)) ;; esac
}
fail() {
    printf '%-44s FAIL  %s\n' "$1" "$2"
    sed 's/^/      /' "$OUT/log" | tail -25
    failed=$((failed + 1))
}

# row NAME DETAIL COMMAND...: run COMMAND (a shell string) and record it.
row() {
    name=$1 detail=$2
    shift 2
    # A row that hangs fails after ROW_TIMEOUT seconds instead of stalling the matrix.
    if timeout -k 10 "$ROW_TIMEOUT" sh -c "$*" > "$OUT/log" 2>&1; then
        pass "$name" "$detail"
    else
        fail "$name" "$detail"
    fi
}

suite() { # RUNNER DIR [STRESS_MODE]: run unit, stress and crash built in DIR
    echo "$1 $2/unit && $1 $2/stress $STRESS ${3:-all} && $1 $2/crash $CRASH"
}

# ---- standards and compilers ------------------------------------------------------
for cc in gcc clang; do
    for std in c11 c17 c2x; do
        name="$cc -std=$std"
        if ! have "$cc"; then skip "$name" "$cc not installed"; continue; fi
        d="$OUT/$cc-$std"
        mkdir -p "$d"
        row "$name" "strict header+impl; unit, stress $STRESS, crash $CRASH" "
            $cc -std=$std $STRICT -Wstrict-prototypes -c -o $d/impl.o tests/compile/impl.c &&
            $cc -std=$std $STRICT -Wstrict-prototypes -o $d/use tests/compile/use.c $d/impl.o && $d/use &&
            for t in unit stress crash; do
                $cc -std=$std -O2 $WARN -o $d/\$t tests/\$t.c -lpthread || exit 1
            done && $(suite '' "$d")"
    done
done
# C++: g++ with the cast and pointer warnings game engines use, clang++
# with -Weverything minus the list documented in the header (section 6).
CXX_STRICT="$STRICT -Wold-style-cast -Wuseless-cast -Wzero-as-null-pointer-constant -Wcast-qual"
CLANG_EVERYTHING="-Weverything -Wno-c++98-compat -Wno-c++98-compat-pedantic -Wno-padded -Werror"
for cxx in g++ clang++; do
    for std in c++11 c++17 c++20; do
        name="$cxx -std=$std"
        if ! have "$cxx"; then skip "$name" "$cxx not installed"; continue; fi
        d="$OUT/$cxx-$std"
        mkdir -p "$d"
        flags=$CXX_STRICT
        [ "$cxx" = clang++ ] && flags=$CLANG_EVERYTHING
        row "$name" "header+impl as C++ (${flags%% *} ...); C tests linked to it" "
            $cxx -std=$std $flags -c -o $d/impl.o tests/compile/impl.cpp &&
            $cxx -std=$std $flags -o $d/use tests/compile/use.cpp $d/impl.o && $d/use &&
            for t in unit stress crash; do
                gcc -std=c11 -O2 $WARN -DTESTS_EXTERNAL_IMPLEMENTATION -c -o $d/\$t.o tests/\$t.c &&
                $cxx -o $d/\$t $d/\$t.o $d/impl.o -lpthread || exit 1
            done && $(suite '' "$d")"
    done
done

# ---- architectures (static binaries; qemu-user for foreign ones) -------------------
# A kernel built without 32-bit x86 support cannot run i686 binaries: they
# run under qemu-i386 then (the row says which).
I686_RUNNER=""
if have i686-linux-gnu-gcc; then
    printf 'int main(void) { return 0; }\n' > "$OUT/i686_probe.c"
    if i686-linux-gnu-gcc -static -o "$OUT/i686_probe" "$OUT/i686_probe.c" 2>/dev/null &&
        ! "$OUT/i686_probe" 2>/dev/null && have qemu-i386; then
        I686_RUNNER=qemu-i386
    fi
fi

for arch in i686:i686-linux-gnu:$I686_RUNNER aarch64:aarch64-linux-gnu:qemu-aarch64 \
            armhf:arm-linux-gnueabihf:qemu-arm riscv64:riscv64-linux-gnu:qemu-riscv64; do
    label=${arch%%:*} triple=${arch#*:}
    name="linux $label (${triple%%:*})"
    cross "$name" "$arch" || continue
    d="$OUT/$label"
    mkdir -p "$d"
    row "$name" "${runner:-native}: unit, stress $STRESS, crash $CRASH, os_wait, kernel_lock, fast_path" "
        for t in unit stress crash os_wait kernel_lock; do
            $triple-gcc -std=c11 -O2 -static $WARN -o $d/\$t tests/\$t.c -lpthread || exit 1
        done &&
        $triple-gcc -std=c11 -O2 -static $WARN -o $d/fast_path tests/fast_path.c tests/impl.c \
            -lpthread &&
        $(suite "$runner" "$d") && $runner $d/os_wait && $runner $d/kernel_lock &&
        $runner $d/fast_path"
done

# ---- 32-bit targets with a 64-bit time_t (Debian's time64 transition) ------------
# libc's struct timespec then differs from the one the classic futex call
# takes: the futex waits must pass the kernel its own layout.
for arch in i686:i686-linux-gnu:$I686_RUNNER armhf:arm-linux-gnueabihf:qemu-arm; do
    name="linux ${arch%%:*} -D_TIME_BITS=64"
    cross "$name" "$arch" || continue
    d="$OUT/$label-time64"
    mkdir -p "$d"
    row "$name" "${runner:-native}: unit, os_wait (futex timeouts)" "
        for t in unit os_wait; do
            $triple-gcc -std=c11 -O2 -static $WARN -D_TIME_BITS=64 -D_FILE_OFFSET_BITS=64 \
                -o $d/\$t tests/\$t.c -lpthread || exit 1
        done && $runner $d/unit && $runner $d/os_wait | tee $d/os_wait.out &&
        grep -q 'time_t is 64 bits' $d/os_wait.out"
done

# ---- Windows: mingw-w64 under wine -----------------------------------------------
WINE=""
for w in wine64 /usr/lib/wine/wine64 wine; do if have "$w"; then WINE=$w; break; fi; done
# Each program started its own wineserver, which exits a moment after its
# last client; a program started in that moment had its connection reset
# ("recvmsg: Connection reset by peer", a row failed with no test failing).
# So: make the prefix once, then keep one persistent server up for every
# Windows row and stop it after them.
# A server left by a run that was killed is stopped first (else -w waits for it forever), and
# this run's is stopped however the script ends.
winesrv=""
stop_wineserver() {
    [ -z "$winesrv" ] || WINEPREFIX="$PWD/$OUT/wineprefix" "$winesrv" -k 2>/dev/null || :
}
if [ -n "$WINE" ] && have x86_64-w64-mingw32-gcc; then
    winesrv=$(dirname "$(command -v "$WINE")")/wineserver
    have "$winesrv" || winesrv=wineserver
    stop_wineserver
    trap stop_wineserver EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    (export WINEDEBUG=-all WINEPREFIX="$PWD/$OUT/wineprefix" &&
        "$WINE" wineboot -i > /dev/null 2>&1 && timeout 120 "$winesrv" -w &&
        "$winesrv" -p) || :
fi
for v in 0x0A00:WaitOnAddress 0x0601:Sleep; do
    winnt=${v%%:*} method=${v#*:}
    name="windows x86_64 ($method)"
    if ! have x86_64-w64-mingw32-gcc; then skip "$name" "x86_64-w64-mingw32-gcc not installed"; continue; fi
    if [ -z "$WINE" ]; then skip "$name" "wine not installed"; continue; fi
    d="$OUT/win-$method"
    mkdir -p "$d"
    row "$name" "wine: unit (waits use $method), stress threads $STRESS (also through the inline fast path), peers in processes" "
        export WINEDEBUG=-all WINEPREFIX=\$PWD/$OUT/wineprefix &&
        for t in unit stress win_peers; do
            x86_64-w64-mingw32-gcc -std=c11 -O2 -static $WARN -D_WIN32_WINNT=$winnt \
                -o $d/\$t.exe tests/\$t.c -lsynchronization -lpthread || exit 1
        done &&
        x86_64-w64-mingw32-gcc -std=c11 -O2 -static $WARN -D_WIN32_WINNT=$winnt \
            -DTEST_IMPLEMENTATION_ELSEWHERE -o $d/fast-stress.exe tests/stress.c tests/impl.c \
            -lsynchronization -lpthread &&
        $WINE $d/fast-stress.exe $STRESS &&
        $WINE $d/unit.exe > $d/unit.out 2>&1; rc=\$?; cat $d/unit.out;
        [ \$rc -eq 0 ] && grep -q 'waits use $method' $d/unit.out &&
        $WINE $d/stress.exe $STRESS && $WINE $d/win_peers.exe"
done
stop_wineserver

# ---- MSVC mode: clang as MSVC, compile only -------------------------------------
# No MSVC here: clang compiles the header, its implementation and the SHM
# helpers as MSVC would see them (_MSC_VER 1930, Microsoft extensions and
# compatibility, the x64 MSVC ABI) against stand-in CRT and Windows
# declarations (tests/msvc/); clang's own headers give stdatomic and stdint.
# C with the strict set, C++ with -Weverything; WaitOnAddress, the Sleep
# fallback and no OS waits. Nothing is linked or run.
name="msvc mode (clang, x86_64-pc-windows-msvc)"
if have clang && have clang++; then
    MSVC="--target=x86_64-pc-windows-msvc -fms-compatibility -fms-extensions \
          -fms-compatibility-version=19.30 -isystem tests/msvc -I. -Werror -fsyntax-only"
    row "$name" "compile only: C11 strict and C++17 -Weverything, 3 wait variants" "
        for v in -D_WIN32_WINNT=0x0A00 -D_WIN32_WINNT=0x0601 -DSHARED_RING_NO_OS_WAIT; do
            clang $MSVC \$v -std=c11 $STRICT -Wstrict-prototypes tests/msvc/quickstart.c &&
            clang++ $MSVC \$v -x c++ -std=c++17 -Weverything -Wno-c++98-compat \
                -Wno-c++98-compat-pedantic -Wno-padded tests/msvc/quickstart.c || exit 1
        done"
else
    skip "$name" "clang not installed"
fi

# ---- musl ----------------------------------------------------------------------
name="linux x86_64 musl"
if have musl-gcc; then
    d="$OUT/musl"
    mkdir -p "$d"
    row "$name" "musl-gcc -static: unit, stress $STRESS, crash $CRASH, kernel_lock, fast_path" "
        for t in unit stress crash kernel_lock; do
            musl-gcc -std=c11 -O2 -static $WARN -o $d/\$t tests/\$t.c -lpthread || exit 1
        done &&
        musl-gcc -std=c11 -O2 -static $WARN -o $d/fast_path tests/fast_path.c tests/impl.c -lpthread &&
        $(suite '' "$d") && $d/kernel_lock && $d/fast_path"
else
    skip "$name" "musl-gcc not installed"
fi

# ---- 32-bit and 64-bit processes on one mapping ---------------------------------
name="cross-ABI i686 <-> x86_64 processes"
if have i686-linux-gnu-gcc; then
    d="$OUT/cross"
    mkdir -p "$d"
    row "$name" "file-backed mapping, both directions, 200000 messages each${I686_RUNNER:+ (32-bit under $I686_RUNNER)}" "
        gcc -std=c11 -O2 $WARN -o $d/cross64 tests/cross_abi.c &&
        i686-linux-gnu-gcc -std=c11 -O2 -static $WARN -o $d/cross32 tests/cross_abi.c &&
        run() { bits=\$1; shift; if [ \$bits = 32 ]; then $I686_RUNNER $d/cross32 \"\$@\"; else $d/cross64 \"\$@\"; fi; } &&
        for pair in '32 64' '64 32'; do
            set -- \$pair
            run \$2 format $d/ring.bin || exit 1
            run \$2 consume $d/ring.bin 200000 & c=\$!
            run \$1 produce $d/ring.bin 200000 || { kill \$c; exit 1; }
            wait \$c || exit 1
        done"
else
    skip "$name" "i686-linux-gnu-gcc not installed"
fi

# ---- no lock-free 64-bit atomics: a clear compile-time error ----------------------
name="i486 (no lock-free 64-bit atomics)"
if have i686-linux-gnu-gcc; then
    row "$name" "must fail to compile with a clear #error" "
        ! i686-linux-gnu-gcc -std=c11 -march=i486 -c -o /dev/null tests/compile/impl.c 2> $OUT/i486.err &&
        grep -q 'needs lock-free 64-bit atomics' $OUT/i486.err"
else
    skip "$name" "i686-linux-gnu-gcc not installed"
fi

# ---- macOS -------------------------------------------------------------------------
# No macOS machine here: the macOS wait branch is compiled on Linux with
# -D__APPLE__ against a futex-backed stub of __ulock_wait/__ulock_wake
# (tests/ulock_stub.c), and the unit and timeout tests run through it.
name="macos wait branch (ulock stub on linux)"
d="$OUT/ulock"
mkdir -p "$d"
row "$name" "unit + ulock_timeouts through __ulock_wait" "
    for t in unit ulock_timeouts; do
        gcc -std=c11 -O2 $WARN -D__APPLE__ -o $d/\$t tests/\$t.c tests/ulock_stub.c -lpthread || exit 1
    done && $d/unit | tee $d/unit.out && grep -q 'waits use ulock' $d/unit.out && $d/ulock_timeouts"
skip "macos (real)" "no macOS toolchain or machine here"

echo "matrix: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] || exit 1
if [ "$REQUIRE_ALL" = 1 ] && [ "$unexpected_skips" -ne 0 ]; then
    echo "matrix: $unexpected_skips rows skipped, but MATRIX_REQUIRE_ALL=1"
    exit 1
fi
exit 0
