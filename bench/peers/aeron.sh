#!/bin/sh
# Compare shared_ring.h with Aeron's C SPSC ring buffer on this machine.
#   sh bench/peers/aeron.sh PATH-TO-AERON-CHECKOUT [REPS] [SECONDS]
# Builds Aeron's aeron_spsc_rb.c from the checkout you name, in a scratch
# directory outside this project (nothing of Aeron's is part of it), with
# the fix of upstream PR #2015 applied: before it, a claim that fits neither
# at the end nor at the start of the buffer overwrites unread records. A
# copy that is neither unfixed in the known way nor fixed is refused.
# Without a path it says so and exits 0 (so scripts can call it blindly).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
aeron=${1:-}
if [ -z "$aeron" ]; then
    echo "aeron peer: skipped (give the path of an Aeron checkout: sh bench/peers/aeron.sh PATH)"
    exit 0
fi
. "$here/aeron_prepare.sh" # sets $work (a fixed copy in $work/c) and $fixed
${CC:-cc} -std=gnu11 -O3 -g -w -I"$work/c" -o "$work/aeron_vs_shared" "$here/aeron_vs_shared.c" \
    "$here/../impl.c" "$fixed" -lpthread
(cd "$aeron" && git rev-parse --short HEAD 2>/dev/null | sed 's/^/aeron peer: Aeron commit /') || true
"$work/aeron_vs_shared" "${2:-5}" "${3:-0.4}"
