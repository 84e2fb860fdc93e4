#!/bin/sh
# band_ab: two versions of shared_ring.h in band (bench/peers/band.c), paired. Builds band once
# with this tree's header (new) and once with OLD (a header file, e.g. from
# `git show REV:shared_ring.h > old.h`), both aligned alike (-falign-functions=64
# -falign-loops=64: unaligned, Aeron's own rate moved 17 % with our code size), then runs one
# repetition of each in turn, REPS times, the first build alternating. Per ring, size and
# machine state (a pair counts as fast or slow when all four state measurements agree) it
# prints the medians [p10-p90] (pairs) of new / old for `shared` and `shared-poll`, and of
# shared / aeron in each build. A band run that fails stops the script with its output.
#   sh bench/peers/band_ab.sh AERON-CHECKOUT OLD [REPS] [RING_KIB,...] [SIZE,...]
set -eu
[ $# -ge 2 ] || { echo "usage: sh bench/peers/band_ab.sh AERON-CHECKOUT OLD [REPS] [RING_KIB,...] [SIZE,...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
aeron=$1
old=$2
reps=${3:-16}
rings=${4:-1024}
sizes=${5:-768,1024,1536,2048}
[ -f "$old" ] || { echo "band_ab: $old: no such header" >&2; exit 2; }
out=$(mktemp -d "${TMPDIR:-/tmp}/shared_ring_band_ab.XXXXXX")
work=""
trap 'rm -rf "$out" ${work:+"$work"}' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
caller_removes_work=1
. "$here/aeron_prepare.sh"
cc=${CC:-cc}
for build in new old; do
    mkdir -p "$out/$build/bench/peers"
    cp "$here/band.c" "$here/aeron_err_stub.h" "$out/$build/bench/peers/"
    cp "$here/../impl.c" "$here/../machine_state.h" "$out/$build/bench/"
done
cp "$here/../../shared_ring.h" "$out/new/"
cp "$old" "$out/old/shared_ring.h"
for build in new old; do
    $cc -std=gnu11 -O3 -w -falign-functions=64 -falign-loops=64 -D_GNU_SOURCE -DSHARED_RING_SHM \
        -I"$work/c" -o "$out/band-$build" "$out/$build/bench/peers/band.c" \
        "$out/$build/bench/impl.c" "$fixed" -lpthread
done
i=0
while [ "$i" -lt "$reps" ]; do
    first=new second=old
    [ $((i % 2)) -eq 0 ] || { first=old second=new; }
    for build in $first $second; do
        if ! BAND_PAIRS=1 "$out/band-$build" 1 0.2 "$rings" "$sizes" > "$out/log" 2> "$out/err"; then
            cat "$out/log" "$out/err" >&2
            echo "band_ab: the $build build's band failed" >&2
            exit 1
        fi
        sed -n "s/^pair /$build $i /p" "$out/err" >> "$out/pairs"
    done
    i=$((i + 1))
done
# pairs: BUILD I RING SIZE REP BEFORE AFTER SHARED POLL AERON
awk '{ k = $2 " " $3 " " $4; b[k] = b[k] " " $6 " " $7; r[k, $1] = $8 " " $9 " " $10
       ring[k] = $3; size[k] = $4 }
     END {
         for (k in size) {
             if (!((k, "new") in r) || !((k, "old") in r)) continue
             n = split(b[k], s, " "); fast = slow = 1
             for (j = 1; j <= n; j++) { if (s[j] > 150) fast = 0; else slow = 0 }
             state = fast ? "fast" : slow ? "slow" : "mixed"
             split(r[k, "new"], nw, " "); split(r[k, "old"], od, " ")
             g = state " " ring[k] " " size[k]
             print g, "new/old-shared", nw[1] / od[1]
             print g, "new/old-poll", nw[2] / od[2]
             print g, "old-shared/aeron", od[1] / od[3]
             print g, "new-shared/aeron", nw[1] / nw[3]
         }
     }' "$out/pairs" | sort -k1,1 -k2,2n -k3,3n -k4,4 -k5,5n |
    awk 'function flush() { if (n) printf "%s %5d KiB %6d %-17s %.2f [%.2f-%.2f] (%d)\n", g1, g2,
                                      g3, g4, v[int(0.5 * (n - 1) + 1.5)],
                                      v[int(0.1 * (n - 1) + 1.5)], v[int(0.9 * (n - 1) + 1.5)], n
                            n = 0 }
         { if ($1 != g1 || $2 != g2 || $3 != g3 || $4 != g4) { flush(); g1 = $1; g2 = $2; g3 = $3; g4 = $4 }
           v[++n] = $5 }
         END { flush() }'
