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
src="$aeron/aeron-client/src/main/c"
rb="$src/concurrent/aeron_spsc_rb.c"
[ -f "$rb" ] || { echo "aeron peer: $rb not found" >&2; exit 2; }
work=${TMPDIR:-/tmp}/shared_ring_aeron_peer.$$
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
cp -R "$src" "$work/c"
fixed="$work/c/concurrent/aeron_spsc_rb.c"
# aeron_spsc_rb_claim_capacity ends with its result; the unfixed copy
# returns record_index there, which is 0 (not -1) when neither end had room.
last=$(awk '/aeron_spsc_rb_claim_capacity\(/{f=1} f&&/^}/{print n; exit} f&&/return/{n=$0}' "$fixed" | tr -d ' ')
case "$last" in
    "return(int32_t)record_index;")
        awk '/aeron_spsc_rb_claim_capacity\(/{f=1}
             f&&/return \(int32_t\)record_index;/{last=NR}
             {line[NR]=$0}
             f&&/^}/{f=0}
             END{for(i=1;i<=NR;i++){if(i==last) sub(/return \(int32_t\)record_index;/,"return write_index;",line[i]); print line[i]}}' \
            "$fixed" > "$fixed.new" && mv "$fixed.new" "$fixed"
        echo "aeron peer: applied the PR #2015 fix (claim returns write_index)";;
    "returnwrite_index;")
        echo "aeron peer: this copy already has the PR #2015 fix";;
    *)
        echo "aeron peer: aeron_spsc_rb_claim_capacity ends in '$last': not a version this script knows; refusing" >&2
        exit 2;;
esac
${CC:-cc} -std=gnu11 -O3 -g -w -I"$work/c" -o "$work/aeron_vs_shared" "$here/aeron_vs_shared.c" \
    "$fixed" -lpthread
(cd "$aeron" && git rev-parse --short HEAD 2>/dev/null | sed 's/^/aeron peer: Aeron commit /') || true
"$work/aeron_vs_shared" "${2:-5}" "${3:-0.4}"
