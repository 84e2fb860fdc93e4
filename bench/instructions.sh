#!/bin/sh
# make instructions [AERON=path]: instructions per 64-byte message (a write
# and its share of a read), counted by callgrind in one thread, which no
# machine noise moves. Side by side:
#   - the implementation in the caller's file (everything may inline) and
#     in its own file (as stb-style users build it: the target column);
#   - gcc -O2, gcc -O3 and clang -O2;
#   - a read every message (B = 1) and every 16 (B = 16);
#   - with AERON=path, Aeron's try_claim + memcpy + commit and read in the
#     same loop (bench/peers/aeron_instructions.c), its ring in the loop's
#     file and in its own: each build mode of ours against the same of Aeron;
#   - then claim + commit in place of write_bytes, and the blocking
#     shared_ring_read in place of read_some (own file).
# INSTR_HEADER=path measures another copy of the header.
set -eu
cd "$(dirname "$0")/.."
here=$PWD/bench/peers
OUT=tests/bin/instr
mkdir -p "$OUT"
N=${INSTR_MESSAGES:-1000000}
HEADER=${INSTR_HEADER:-../shared_ring.h}
aeron=${AERON:-}

count() { # PROGRAM: instructions per message in run_loop
    valgrind --tool=callgrind --toggle-collect=run_loop --callgrind-out-file="$OUT/cg.out" \
        "$@" 2>&1 | awk -v n="$N" '/Collected/ { printf "%.1f", $4 / n }'
}

build() { # CC OPT NAME: the two shared_ring builds, and Aeron's when given
    dbg=-g
    [ "$1" = clang ] && dbg=-gdwarf-4 # what this valgrind reads
    flags="-std=c11 $2 $dbg -Wall -Wextra -Werror -DSHARED_RING_HEADER=\"$HEADER\""
    $1 $flags -o "$OUT/$3-inline" bench/instructions.c
    $1 $flags -DSEPARATE_IMPLEMENTATION -c -o "$OUT/$3-loop.o" bench/instructions.c
    $1 $flags -c -o "$OUT/$3-impl.o" bench/impl.c
    $1 -o "$OUT/$3-separate" "$OUT/$3-loop.o" "$OUT/$3-impl.o"
    $1 $flags -DSEPARATE_IMPLEMENTATION -DCLAIM_LOOP -c -o "$OUT/$3-claim.o" bench/instructions.c
    $1 -o "$OUT/$3-claim" "$OUT/$3-claim.o" "$OUT/$3-impl.o"
    $1 $flags -DSEPARATE_IMPLEMENTATION -DBLOCKING_READ -c -o "$OUT/$3-read.o" bench/instructions.c
    $1 -o "$OUT/$3-read" "$OUT/$3-read.o" "$OUT/$3-impl.o"
    if [ -n "$aeron" ]; then
        $1 -std=gnu11 $2 $dbg -w -I"$work/c" -c -o "$OUT/$3-aeron-loop.o" \
            "$here/aeron_instructions.c"
        $1 -std=gnu11 $2 $dbg -w -I"$work/c" -c -o "$OUT/$3-aeron-rb.o" "$fixed"
        $1 -o "$OUT/$3-aeron" "$OUT/$3-aeron-loop.o" "$OUT/$3-aeron-rb.o"
        $1 -std=gnu11 $2 $dbg -w -I"$work/c" -DAERON_SAME_FILE="\"$fixed\"" \
            -o "$OUT/$3-aeron-inline" "$here/aeron_instructions.c"
    fi
}

if [ -n "$aeron" ]; then
    . "$here/aeron_prepare.sh" # sets $work and $fixed
fi

echo "instructions per 64-byte message, write + read (callgrind, $N messages, one thread)"
echo "| compiler | B | ring, caller's file | Aeron, caller's file | ring − Aeron | ring, own file (target) | Aeron, own file | ring − Aeron |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
claims="" reads=""
for v in "gcc -O2" "gcc -O3" "clang -O2"; do
    set -- $v
    name="$1$2"
    build "$1" "$2" "$name"
    for b in 1 16; do
        inline=$(count "$OUT/$name-inline" "$N" 64 "$b")
        separate=$(count "$OUT/$name-separate" "$N" 64 "$b")
        peer="not given" peer_inline="not given" diff="" diff_inline=""
        if [ -n "$aeron" ]; then
            peer=$(count "$OUT/$name-aeron" "$N" 64 "$b")
            peer_inline=$(count "$OUT/$name-aeron-inline" "$N" 64 "$b")
            diff=$(awk -v a="$separate" -v b="$peer" 'BEGIN { printf "%+.1f", a - b }')
            diff_inline=$(awk -v a="$inline" -v b="$peer_inline" 'BEGIN { printf "%+.1f", a - b }')
        fi
        echo "| $1 $2 | $b | $inline | $peer_inline | $diff_inline | $separate | $peer | $diff |"
        claims="$claims| $1 $2 | $b | $(count "$OUT/$name-claim" "$N" 64 "$b") | $separate |
"
        reads="$reads| $1 $2 | $b | $(count "$OUT/$name-read" "$N" 64 "$b") | $separate |
"
    done
done
echo
echo "claim + memcpy + commit in place of write_bytes (own file)"
echo "| compiler | B | claim + commit | write_bytes |"
echo "|---|---:|---:|---:|"
printf '%s' "$claims"
echo
echo "shared_ring_read (blocking; the messages are there) in place of read_some (own file)"
echo "| compiler | B | read | read_some |"
echo "|---|---:|---:|---:|"
printf '%s' "$reads"
