#!/bin/sh
# The benchmark runs to its end, checks every message it moved and draws
# its chart: a short run of every variant (no timing is judged here; speed
# is the benchmark's own output). Each check prints PASS or FAIL, then
# "bench smoke: N passed, M failed".
#   sh tests/bench_smoke.sh BENCH-BINARY
set -u
bench=${1:-bench/bench}
out=$(mktemp) svg=$(mktemp) json=$(mktemp)
trap 'rm -f "$out" "$svg" "$json"' EXIT
passed=0 failed=0
check() { # name, then a command that must succeed
    name=$1
    shift
    if "$@" > /dev/null 2>&1; then
        passed=$((passed + 1))
    else
        echo "FAIL bench smoke: $name"
        failed=$((failed + 1))
    fi
}
short="--quick --sizes 64,4096 --reps 1 --seconds 0.05"
check "every variant runs and every message passes its check" \
    sh -c "$bench $short --svg $svg > $out"
for v in shared-buffer shared-string shared-corked pipe-buffer pipe-string limit ceiling \
    many-rings mutex-queue shared-process shared-claim process-claim shared-claim64; do
    check "the rate table has a row for $v" grep -q "^| $v | [0-9]" "$out"
done
check "the chart has one line per variant" test "$(grep -c '<polyline' "$svg")" -eq 13
check "the fan-in table reaches 1,000 rings" grep -q '^| 1000 | [0-9]' "$out"
check "the fan-in wake-up table has the 129-ring row" grep -q '^| 129 | [0-9]' "$out"
check "the per-state table pairs the ring with the ceiling" grep -q '^| shared-buffer ÷ ceiling | fast |' "$out"
check "json mode prints one object per line" \
    sh -c "$bench $short --variants shared-buffer,fan-in --json > $json && grep -q '\"variant\": \"fan-in\"' $json && ! grep -v '^{' $json"
# make peers' processes harness, without Aeron (a socket and a pipe)
peers=$(mktemp)
check "the processes harness builds without Aeron" \
    ${CC:-cc} -std=gnu11 -O2 -w -D_GNU_SOURCE -DSHARED_RING_SHM -DNO_AERON -o "$peers" \
    bench/peers/processes.c bench/impl.c -lpthread
check "the processes harness checks every message and prints its ratios" \
    sh -c "$peers 1 0.02 > $out && grep -q '^| shared-poll ÷ shared | [0-9]' $out && grep -q '^| shared ÷ pipe | [0-9]' $out && grep -q '^| shared-poll | [0-9]* | [0-9]' $out"
rm -f "$peers"
echo "bench smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
