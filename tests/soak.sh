#!/bin/sh
# make soak: the unit, liveness and interleaving suites, ROUNDS times each,
# each round beside a second suite that loads the other core (the stress
# test between processes), as a loaded CI machine runs them. A timing
# margin or a lifecycle race that holds only on a quiet machine shows here.
# Prints "soak: P passed, F failed"; exits non-zero if F > 0.
set -u
cd "$(dirname "$0")/.."
rounds=${1:-20}
passed=0 failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
i=0
while [ "$i" -lt "$rounds" ]; do
    i=$((i + 1))
    ./tests/bin/stress 2000000 >/dev/null 2>&1 &
    load=$!
    for suite in unit liveness interleave; do
        if ./tests/bin/$suite > "$log" 2>&1; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            echo "soak: round $i: $suite failed:"
            grep -v '^ok' "$log" | tail -20
        fi
    done
    wait "$load" || { failed=$((failed + 1)); echo "soak: round $i: the loading stress run failed"; }
done
echo "soak: $passed passed, $failed failed ($rounds rounds)"
[ "$failed" -eq 0 ]
