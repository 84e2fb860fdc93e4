#!/bin/sh
# Run each suite given as an argument (a shell command), even after one
# fails, showing its output; then print one line over all of them:
#   make test: N passed, M failed (K suites)
# N and M add up every "X passed, Y failed" line the suites print; a suite
# that exits non-zero counts one more failure (so a crash, or a suite that
# prints no summary, is never lost). Exits non-zero if M > 0.
set -u
passed=0 failed=0 suites=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for suite in "$@"; do
    suites=$((suites + 1))
    sh -c "$suite" > "$log" 2>&1
    rc=$?
    cat "$log"
    counts=$(sed -n 's/.*[^0-9]\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\1 \2/p' "$log" |
             awk '{ p += $1; f += $2 } END { print p + 0, f + 0 }')
    passed=$((passed + ${counts% *}))
    failed=$((failed + ${counts#* }))
    if [ "$rc" -ne 0 ]; then
        echo "suite failed (exit $rc): $suite"
        failed=$((failed + 1))
    fi
done
echo "make test: $passed passed, $failed failed ($suites suites)"
[ "$failed" -eq 0 ]
