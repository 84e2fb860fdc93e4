#!/bin/sh
# make peers [AERON=path]: shared_ring.h against its peers on this machine.
#   - between processes (bench/peers/processes.c): a Unix socket and a pipe
#     always, Aeron's C SPSC ring over the same shared memory when AERON
#     names a checkout of it, and Eclipse iceoryx when its Debian packages
#     are installed (iceoryx, libiceoryx-binding-c-dev: this script starts
#     iox-roudi for the run and stops it after);
#   - between threads (bench/peers/aeron_vs_shared.c), with AERON only.
# Aeron's ring is built in a scratch directory outside this project with
# the fix of upstream PR #2015 applied (aeron_prepare.sh); nothing of
# Aeron's is part of the project.
#   sh bench/peers/peers.sh [AERON-CHECKOUT] [REPS] [SECONDS]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
aeron=${1:-}
reps=${2:-5}
seconds=${3:-0.4}
out=${TMPDIR:-/tmp}/shared_ring_peers.$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
cc=${CC:-cc}
iox_include=$(ls -d /usr/include/iceoryx/v*/ 2>/dev/null | tail -1)
iceoryx=""
if [ -n "$iox_include" ] && [ -f "$iox_include/iceoryx_binding_c/publisher.h" ] &&
    command -v iox-roudi > /dev/null; then
    iceoryx="-DWITH_ICEORYX -I$iox_include"
    iox_libs="-liceoryx_binding_c -lstdc++"
    echo "iceoryx peer: $(basename "$iox_include")"
else
    iox_libs=""
    echo "iceoryx peer: not installed (apt-get install iceoryx libiceoryx-binding-c-dev adds it)"
fi
if [ -n "$aeron" ]; then
    . "$here/aeron_prepare.sh" # sets $work (a fixed copy in $work/c) and $fixed
    (cd "$aeron" && git rev-parse --short HEAD 2>/dev/null | sed 's/^/aeron peer: Aeron commit /') || true
    $cc -std=gnu11 -O3 -g -w -D_GNU_SOURCE -DSHARED_RING_SHM $iceoryx -I"$work/c" \
        -o "$out/processes" "$here/processes.c" "$here/../impl.c" "$fixed" -lpthread $iox_libs
    $cc -std=gnu11 -O3 -g -w -I"$work/c" -o "$out/threads" "$here/aeron_vs_shared.c" \
        "$here/../impl.c" "$fixed" -lpthread
else
    echo "aeron peer: not given (make peers AERON=path-to-an-aeron-checkout adds it)"
    $cc -std=gnu11 -O3 -g -w -D_GNU_SOURCE -DSHARED_RING_SHM -DNO_AERON $iceoryx \
        -o "$out/processes" "$here/processes.c" "$here/../impl.c" -lpthread $iox_libs
fi
roudi=""
if [ -n "$iceoryx" ]; then
    iox-roudi > "$out/roudi.log" 2>&1 &
    roudi=$!
    trap 'kill $roudi 2>/dev/null; wait $roudi 2>/dev/null; rm -rf "$out"' EXIT
    sleep 1
fi
"$out/processes" "$reps" "$seconds"
if [ -n "$roudi" ]; then
    kill "$roudi" 2>/dev/null || true
    wait "$roudi" 2>/dev/null || true
fi
if [ -n "$aeron" ]; then
    echo
    "$out/threads" "$reps" "$seconds"
fi
