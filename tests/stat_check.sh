#!/bin/sh
# tools/shared_ring_stat on a live ring (a producer blocked on a full ring,
# then drained), with --json and --watch (time stamps; messages counted
# while the ring laps); a ring nobody attached to; and on files that are not rings:
# empty, short, zeros, garbage, a header whose capacity does not fit, a
# directory, a missing path, and every fuzz-corpus input. Built with ASan
# and UBSan: any bad read aborts. Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
CC=${CC:-cc}
B=tests/bin
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "  stat: $1"; failed=$((failed + 1)); }

$CC -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Wall -Wextra \
    -Werror -o "$B/asan-shared_ring_stat" tools/shared_ring_stat.c || exit 1
$CC -std=c11 -O2 -o "$B/cross_abi" tests/cross_abi.c || exit 1
STAT=$B/asan-shared_ring_stat

# ---- a live ring ------------------------------------------------------------
ring=$W/ring.bin
"$B/cross_abi" format "$ring"
"$B/cross_abi" produce "$ring" 5000 & producer=$!
i=0
while [ $i -lt 50 ] && ! "$STAT" "$ring" --json | grep -q '"producer_sleeping":true'; do
    sleep 0.1; i=$((i + 1))
done
out=$("$STAT" "$ring" --json)
echo "$out" | grep -q '"layout_version":4,"capacity":65536,"max_message":3000' && ok ||
    bad "header fields of a live ring: $out"
echo "$out" | grep -q '"producer_sleeping":true' && ok || bad "a blocked producer not shown asleep"
echo "$out" | grep -q "\"producer_pid\":$producer,\"producer_alive\":true" && ok ||
    bad "the live producer's pid $producer not shown alive: $out"
pct=$(echo "$out" | sed 's/.*"fill_percent":\([0-9]*\).*/\1/')
[ "$pct" -ge 50 ] && ok || bad "a full ring shown $pct% full"
samples=$(timeout 1 "$STAT" "$ring" --watch 0.2 --json | grep -c '"bytes_per_s":')
[ "$samples" -ge 2 ] && ok || bad "--watch gave $samples samples with rates in 1 s"
"$B/cross_abi" consume "$ring" 5000 > /dev/null || bad "consumer"
wait $producer
"$STAT" "$ring" --json | grep -q "\"producer_pid\":$producer,\"producer_alive\":false" && ok ||
    bad "the exited producer not shown gone"
"$STAT" "$ring" | grep -q '^closed *yes' && ok || bad "closed ring not shown closed"
"$STAT" "$ring" | grep -q '^fill *0 bytes' && ok || bad "drained ring not shown empty"

# ---- a fresh ring: nobody attached ----------------------------------------------
fresh=$W/fresh.bin
"$B/cross_abi" format "$fresh"
[ "$("$STAT" "$fresh" | grep -c 'not attached$')" -eq 2 ] && ok ||
    bad "a ring nobody attached to: sides not shown 'not attached'"
"$STAT" "$fresh" --json | grep -q '"producer_sleeping":null,"consumer_sleeping":null,"producer_sleeps_with":null,"consumer_sleeps_with":null' &&
    ok || bad "a side nobody is attached as has a sleep state or method in the JSON: $("$STAT" "$fresh" --json)"

# ---- the text and the JSON read the sleeping words alike -----------------------
# An attached producer (its process then exits; the word stays) whose
# sleeping word is 2 ("just attached, look at me"): awake in both; 1:
# asleep in both; 0: awake.
"$B/cross_abi" produce "$fresh" 1 & producer=$!
sleep 0.3
for word in 2 1 0; do
    printf "$(printf '\\%03o' $word)\\000\\000\\000" |
        dd of="$fresh" bs=1 seek=512 conv=notrunc 2> /dev/null # producer_sleeping
    text=$("$STAT" "$fresh" | sed -n 's/^producer  *\(asleep\|awake\);.*/\1/p')
    json=$("$STAT" "$fresh" --json | sed 's/.*"producer_sleeping":\([a-z]*\).*/\1/')
    want_text=awake want_json=false
    [ $word = 1 ] && want_text=asleep want_json=true
    [ "$text" = $want_text ] && [ "$json" = $want_json ] && ok ||
        bad "producer_sleeping word $word: text says '$text', JSON '$json' (want $want_text, $want_json)"
done
kill $producer 2> /dev/null; wait $producer 2> /dev/null

# ---- --watch takes seconds above 0, or stops with the usage --------------------
for arg in abc 0 -1 1x ""; do
    "$STAT" "$fresh" --watch "$arg" > /dev/null 2>&1
    rc=$?; [ $rc -eq 2 ] && ok || bad "--watch '$arg' taken (exit $rc)"
done

# ---- --watch: time stamps, and messages counted while the ring laps --------------
lapped=$W/lapped.bin
# 16 MiB: laps every 10-20 ms at this speed, so a follow step the scheduler
# stretched to a few ms (a loaded CI host) still sees every lap
"$B/cross_abi" format "$lapped" 16777216
"$B/cross_abi" consume "$lapped" 3000000 > /dev/null & consumer=$!
"$B/cross_abi" produce "$lapped" 3000000 & producer=$!
sleep 0.2
timeout 2 "$STAT" "$lapped" --watch 0.5 --json > "$W/watch" 2>&1
kill $producer $consumer 2> /dev/null; wait $producer $consumer 2> /dev/null
grep -q '^{"time":"20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-9:]*\.[0-9]*Z",' "$W/watch" && ok ||
    bad "--watch samples carry no UTC time stamp: $(head -c 300 "$W/watch")"
# a sample in which more than a lap (16 MiB) was written, with a message count
if awk -F'"bytes_per_s":' 'NF > 1 { split($2, a, ","); if (a[1] * 0.5 > 16777216 && $2 !~ /"messages_per_s":null/) found = 1 }
                          END { exit !found }' "$W/watch"; then ok
else bad "no sample counted the messages of a ring that lapped: $(tail -c 300 "$W/watch")"; fi

# ---- files that are not rings: a message and exit 1 (2: cannot open), never a crash --
expect() { # WANT_STATUS NAME FILE
    "$STAT" "$3" > "$W/out" 2> "$W/err"
    rc=$?
    if [ $rc -eq "$1" ] && [ -s "$W/err" ]; then ok; else bad "$2: exit $rc, $(cat "$W/err")"; fi
}
: > "$W/empty"; expect 1 "empty file" "$W/empty"
head -c 100 /dev/zero > "$W/short"; expect 1 "short file" "$W/short"
head -c 4096 /dev/zero > "$W/zeros"; expect 1 "zeros" "$W/zeros"
head -c 5000 /dev/urandom > "$W/garbage"; expect 1 "garbage" "$W/garbage"
head -c 2048 "$ring" > "$W/truncated"; expect 1 "a ring cut short (capacity does not fit)" "$W/truncated"
expect 1 "a directory" "$W"
expect 2 "a missing file" "$W/none"
mkfifo "$W/fifo" && ln -s "$W/fifo" "$W/link"
timeout 5 "$STAT" "$W/fifo" > /dev/null 2>&1
rc=$?; [ $rc -eq 1 ] && ok || bad "a FIFO: exit $rc (124: it blocked)"
timeout 5 "$STAT" "$W/link" > /dev/null 2>&1
rc=$?; [ $rc -eq 2 ] && ok || bad "a symbolic link to a FIFO: exit $rc (124: it blocked)"
"$STAT" "$W/zeros" 2>&1 | grep -q "not formatted" && ok || bad "zeros not said to be not formatted"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    name=shared_ring_stat_check_$$
    cp "$ring" "/dev/shm/$name"
    "$STAT" "$name" --json | grep -q '"layout_version":4' && ok || bad "a shm name ($name) not found"
    "$STAT" "/$name" --json | grep -q '"layout_version":4' && ok || bad "a shm name (/$name) not found"
    rm -f "/dev/shm/$name"
fi
corpus=0
for f in tests/fuzz/*/*; do
    "$STAT" "$f" > /dev/null 2>&1
    rc=$?
    if [ $rc -gt 1 ]; then bad "fuzz input $f: exit $rc"; fi
    corpus=$((corpus + 1))
done
[ "$corpus" -gt 100 ] && ok || bad "only $corpus corpus files"
echo "stat: $passed passed, $failed failed ($corpus corpus files read)"
[ "$failed" -eq 0 ]
