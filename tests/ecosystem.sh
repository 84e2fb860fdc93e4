#!/bin/sh
# Each way a user takes shared_ring.h into a project, tried from an empty
# directory: vendoring the one header; `make install` then pkg-config;
# CMake with add_subdirectory, with FetchContent, and with find_package after
# `make install` and after `cmake --install`. Each path twice: from a C
# project and from a C++-only one (`project(app CXX)`, no C compiler asked
# for). Prints "N passed, N failed".
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CC=${CC:-cc}
CXX=${CXX:-c++}
passed=0 failed=0

check() { # NAME FUNCTION [ARGS]: run FUNCTION in a fresh directory, in a subshell
    dir="$WORK/$(echo "$1" | tr -c 'a-zA-Z0-9\n' _)"
    mkdir -p "$dir"
    # Not inside the `if`: there `set -e` would be ignored, even in a subshell.
    (cd "$dir" || exit 1; set -e; shift; "$@") > "$dir.log" 2>&1
    if [ $? -eq 0 ]; then
        echo "  $1: ok"
        passed=$((passed + 1))
    else
        echo "  $1: FAILED"
        tail -20 "$dir.log" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
}

# The consumer program every path builds: one file, implementation included.
cat > "$WORK/app.c" <<'EOF'
#define SHARED_RING_IMPLEMENTATION
#include <shared_ring.h>
#include <stdlib.h>
#include <string.h>
static int expect_hi(void *user, const void *data, size_t len) {
    *(int *)user = len == 2 && memcmp(data, "hi", 2) == 0;
    return 0;
}
int main(void) {
    size_t size = shared_ring_region_size(256, 0);
    void *mem = aligned_alloc(128, size);
    shared_ring_producer p;
    shared_ring_consumer c;
    int ok = 0;
    if (shared_ring_format(mem, size, 256, 0) || shared_ring_attach_producer(&p, mem, size, NULL) ||
        shared_ring_attach_consumer(&c, mem, size, NULL) || shared_ring_write_str(&p, "hi", 0))
        return 1;
    return shared_ring_read_some(&c, expect_hi, &ok) == 1 && ok ? 0 : 1;
}
EOF
# The same program in C++ (a static region: no aligned_alloc needed).
cat > "$WORK/app.cpp" <<'EOF'
#define SHARED_RING_IMPLEMENTATION
#include <shared_ring.h>
#include <cstring>
static int expect_hi(void *user, const void *data, size_t len) {
    *static_cast<int *>(user) = len == 2 && std::memcmp(data, "hi", 2) == 0;
    return 0;
}
alignas(128) static unsigned char mem[SHARED_RING_HEADER_SIZE + 256];
int main() {
    shared_ring_producer p;
    shared_ring_consumer c;
    int ok = 0;
    if (shared_ring_format(mem, sizeof mem, 256, 0) ||
        shared_ring_attach_producer(&p, mem, sizeof mem, nullptr) ||
        shared_ring_attach_consumer(&c, mem, sizeof mem, nullptr) ||
        shared_ring_write_str(&p, "hi", 0))
        return 1;
    return shared_ring_read_some(&c, expect_hi, &ok) == 1 && ok ? 0 : 1;
}
EOF
cat > "$WORK/CMakeLists.app" <<'EOF'
cmake_minimum_required(VERSION 3.14)
project(app APP_LANG)
set(CMAKE_C_STANDARD 11)
set(CMAKE_CXX_STANDARD 11)
MODE_LINES
add_executable(app APP_SOURCE)
target_link_libraries(app PRIVATE shared_ring::shared_ring)
EOF

# The app's language for the next check: C (app.c) or CXX (app.cpp only).
APP_LANG=C
app_source() { if [ "$APP_LANG" = CXX ]; then echo app.cpp; else echo app.c; fi; }

cmake_app() { # "CMAKE LINES" [CMAKE ARGS...]: configure, build and run the app
    printf '%b\n' "$1" > lines.cmake
    sed -e '/MODE_LINES/r lines.cmake' -e '/MODE_LINES/d' -e "s/APP_LANG/$APP_LANG/" \
        -e "s/APP_SOURCE/$(app_source)/" "$WORK/CMakeLists.app" > CMakeLists.txt
    shift
    cp "$WORK/$(app_source)" .
    cmake -S . -B build "$@"
    cmake --build build
    ./build/app
}

# Compile the app by hand with the compiler of its language.
compile_app() { # FLAGS...
    cp "$WORK/$(app_source)" .
    if [ "$APP_LANG" = CXX ]; then $CXX -std=c++11 "$@" -o app app.cpp; else $CC -std=c11 "$@" -o app app.c; fi
}

version() { sed -n 's/^#define SHARED_RING_VERSION "\(.*\)"/\1/p' "$REPO/shared_ring.h"; }

drop_in() {
    cp "$REPO/shared_ring.h" .
    compile_app -I.
    [ "$(ls | wc -l)" -eq 3 ] # the header, the source, the program
    ./app
}

install_pkg_config() {
    make -s -C "$REPO" install PREFIX="$PWD/prefix" > /dev/null
    export PKG_CONFIG_PATH="$PWD/prefix/share/pkgconfig"
    [ "$(pkg-config --modversion shared_ring)" = "$(version)" ]
    compile_app $(pkg-config --cflags shared_ring)
    ./app
    make -s -C "$REPO" uninstall PREFIX="$PWD/prefix" > /dev/null
    [ ! -e prefix/include/shared_ring.h ]
}

cmake_install_then_pkg_config() {
    cmake -S "$REPO" -B lib -DSHARED_RING_BUILD_TESTS=OFF -DSHARED_RING_BUILD_EXAMPLES=OFF \
        -DSHARED_RING_BUILD_BENCH=OFF -DSHARED_RING_INSTALL=ON > /dev/null
    cmake --install lib --prefix "$PWD/prefix" > /dev/null
    export PKG_CONFIG_PATH="$PWD/prefix/share/pkgconfig"
    [ "$(pkg-config --variable=includedir shared_ring)" -ef "$PWD/prefix/include" ]
    compile_app $(pkg-config --cflags shared_ring)
    ./app
}

moved_install_then_pkg_config() {
    make -s -C "$REPO" install PREFIX="$PWD/first" > /dev/null
    mv first moved
    export PKG_CONFIG_PATH="$PWD/moved/share/pkgconfig"
    compile_app $(pkg-config --cflags shared_ring)
    ./app
}

cmake_add_subdirectory() {
    cmake_app "add_subdirectory($REPO shared_ring_build)"
}

cmake_fetch_content() {
    # From an archive of the working tree: what a release tarball holds.
    tar -C "$REPO" -czf shared_ring.tar.gz shared_ring.h CMakeLists.txt shared_ring.pc.in cmake LICENSE \
        tests examples bench
    cmake_app "include(FetchContent)\nFetchContent_Declare(shared_ring URL file://$PWD/shared_ring.tar.gz)\nFetchContent_MakeAvailable(shared_ring)"
}

cmake_find_package_make_install() {
    make -s -C "$REPO" install PREFIX="$PWD/prefix" > /dev/null
    cmake_app "find_package(shared_ring $(version) CONFIG REQUIRED)" -DCMAKE_PREFIX_PATH="$PWD/prefix"
}

cmake_find_package_moved_make_install() {
    make -s -C "$REPO" install PREFIX="$PWD/first" > /dev/null
    mv first moved
    cmake_app "find_package(shared_ring $(version) CONFIG REQUIRED)" -DCMAKE_PREFIX_PATH="$PWD/moved"
}

# find_package(shared_ring 0.<minor - 1>) must not accept this 0.<minor>
# (whose rings the older one refuses); no app is built.
older_minor_refused() { # how: make | cmake
    v=$(version)
    older="${v%%.*}.$(( $(echo "$v" | cut -d. -f2) - 1 ))"
    if [ "$1" = make ]; then
        make -s -C "$REPO" install PREFIX="$PWD/prefix" > /dev/null
    else
        cmake -S "$REPO" -B lib -DSHARED_RING_BUILD_TESTS=OFF -DSHARED_RING_BUILD_EXAMPLES=OFF \
            -DSHARED_RING_BUILD_BENCH=OFF -DSHARED_RING_INSTALL=ON > /dev/null
        cmake --install lib --prefix "$PWD/prefix" > /dev/null
    fi
    printf 'cmake_minimum_required(VERSION 3.14)\nproject(probe NONE)\nfind_package(shared_ring %s CONFIG)\nif(shared_ring_FOUND)\n  message(FATAL_ERROR "accepted")\nendif()\nfind_package(shared_ring %s CONFIG REQUIRED)\n' \
        "$older" "$v" > CMakeLists.txt
    cmake -S . -B build -DCMAKE_PREFIX_PATH="$PWD/prefix"
}

# A project that adds the library gets its target, not its tests,
# examples or benchmark.
cmake_add_subdirectory_builds_only_the_app() {
    cmake_app "add_subdirectory($REPO shared_ring_build)"
    ! cmake --build build --target help | grep -q 'shared_ring_unit\|quickstart\|shared_ring_bench'
}

cmake_find_package_cmake_install() {
    cmake -S "$REPO" -B lib -DSHARED_RING_BUILD_TESTS=OFF -DSHARED_RING_BUILD_EXAMPLES=OFF \
        -DSHARED_RING_BUILD_BENCH=OFF -DSHARED_RING_INSTALL=ON > /dev/null
    cmake --install lib --prefix "$PWD/prefix" > /dev/null
    cmake_app "find_package(shared_ring CONFIG REQUIRED)" -DCMAKE_PREFIX_PATH="$PWD/prefix"
}

for APP_LANG in C CXX; do
    check "$APP_LANG: drop-in: only shared_ring.h, copied" drop_in
    check "$APP_LANG: make install, then pkg-config" install_pkg_config
    check "$APP_LANG: cmake --install --prefix, then pkg-config" cmake_install_then_pkg_config
    check "$APP_LANG: make install, prefix moved, then pkg-config" moved_install_then_pkg_config
    check "$APP_LANG: CMake add_subdirectory" cmake_add_subdirectory
    check "$APP_LANG: CMake FetchContent" cmake_fetch_content
    check "$APP_LANG: CMake find_package after make install" cmake_find_package_make_install
    check "$APP_LANG: CMake find_package after cmake --install" cmake_find_package_cmake_install
done
check "CMake find_package after make install, prefix moved" cmake_find_package_moved_make_install
check "CMake add_subdirectory builds no tests, examples or bench" cmake_add_subdirectory_builds_only_the_app
check "find_package of the previous 0.x minor refuses this one (make install)" older_minor_refused make
check "find_package of the previous 0.x minor refuses this one (cmake --install)" older_minor_refused cmake

echo "ecosystem: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
