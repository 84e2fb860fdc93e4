#!/bin/sh
# make peers [AERON=path]: shared_ring.h against its peers on this machine.
#   - between processes (bench/peers/processes.c): a Unix socket and a pipe
#     always, Aeron's C SPSC ring over the same shared memory when AERON
#     names a checkout of it, and Eclipse iceoryx when its Debian packages
#     are installed (iceoryx, libiceoryx-binding-c-dev: this script starts
#     iox-roudi for the run and stops it after);
#   - between threads (bench/peers/aeron_vs_shared.c), with AERON only;
#   - with AERON, band (bench/peers/band.c): each side its own program set
#     up as users do (prepare, attach_*_wait with region_fd), a consumer
#     that reads every word in place, 1 MiB and 8 MiB rings, 64 B - 64 KiB
#     with the 512 B - 3 KiB band in detail.
# Aeron's ring is built in a scratch directory outside this project with
# the fix of upstream PR #2015 applied (aeron_prepare.sh); nothing of
# Aeron's is part of the project.
#   sh bench/peers/peers.sh [AERON-CHECKOUT] [REPS] [SECONDS]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
aeron=${1:-}
reps=${2:-5}
seconds=${3:-0.4}
# Everything this run leaves goes in the EXIT trap: the build directory,
# Aeron's copy ($work, from aeron_prepare.sh) and RouDi. Under set -e a
# failing command in the trap ends it early (a kill of a RouDi already
# stopped made the script exit 1 and keep $out), so each one is guarded.
out=$(mktemp -d "${TMPDIR:-/tmp}/shared_ring_peers.XXXXXX")
roudi=""
work=""
cleanup() {
    if [ -n "$roudi" ]; then
        kill "$roudi" 2>/dev/null || :
        wait "$roudi" 2>/dev/null || :
        roudi=""
    fi
    rm -rf "$out" ${work:+"$work"} || :
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
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
    caller_removes_work=1
    . "$here/aeron_prepare.sh" # sets $work (a fixed copy in $work/c) and $fixed
    (cd "$aeron" && git rev-parse --short HEAD 2>/dev/null | sed 's/^/aeron peer: Aeron commit /') || true
    $cc -std=gnu11 -O3 -g -w -D_GNU_SOURCE -DSHARED_RING_SHM $iceoryx -I"$work/c" \
        -o "$out/processes" "$here/processes.c" "$here/../impl.c" "$fixed" -lpthread $iox_libs
    $cc -std=gnu11 -O3 -g -w -I"$work/c" -o "$out/threads" "$here/aeron_vs_shared.c" \
        "$here/../impl.c" "$fixed" -lpthread
    $cc -std=gnu11 -O3 -g -w -D_GNU_SOURCE -DSHARED_RING_SHM -I"$work/c" -o "$out/band" \
        "$here/band.c" "$here/../impl.c" "$fixed" -lpthread
else
    echo "aeron peer: not given (make peers AERON=path-to-an-aeron-checkout adds it)"
    $cc -std=gnu11 -O3 -g -w -D_GNU_SOURCE -DSHARED_RING_SHM -DNO_AERON $iceoryx \
        -o "$out/processes" "$here/processes.c" "$here/../impl.c" -lpthread $iox_libs
fi
if [ -n "$iceoryx" ]; then
    iox-roudi > "$out/roudi.log" 2>&1 &
    roudi=$!
    sleep 1
fi
"$out/processes" "$reps" "$seconds"
if [ -n "$roudi" ]; then
    # RouDi stops at SIGTERM; its applications told it when they ended
    # (processes.c exits them with exit(), not _exit()), so it has none to
    # kill and removes its own files
    kill "$roudi" 2>/dev/null || :
    wait "$roudi" 2>/dev/null || :
    roudi=""
fi
if [ -n "$aeron" ]; then
    echo
    "$out/threads" "$reps" "$seconds"
    echo
    "$out/band" "$reps" "$seconds"
fi
