#!/bin/sh
# The protocol's models (spin): each must pass as written, and each rule
# reverted on its own (-D...) must make spin find a counterexample, so that
# every rule is shown to be needed. Prints "model: P passed, F failed";
# exits non-zero if F > 0. TRAILS=dir keeps each counterexample's trail.
set -u
cd "$(dirname "$0")"
command -v spin >/dev/null 2>&1 || { echo "model: spin is not installed (apt-get install spin)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

# verify MODEL EXPECT DEFINES...: EXPECT is pass or fail
verify() {
    model=$1 expect=$2
    shift 2
    name="$model${*:+ $*}"
    cp "$model.pml" "$work/" || exit 1
    started=$(date +%s)
    if ! (cd "$work" && spin "$@" -a "$model.pml" >/dev/null &&
          ${CC:-cc} -O2 -w -DSAFETY -DNOREDUCE -DCOLLAPSE -o pan pan.c); then
        echo "model: $name: spin or the compiler failed"; failed=$((failed + 1)); return
    fi
    out=$(cd "$work" && ./pan -m300000 2>&1)
    errors=$(printf '%s\n' "$out" | sed -n 's/.*errors: \([0-9]*\).*/\1/p')
    states=$(printf '%s\n' "$out" | sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p')
    first=$(printf '%s\n' "$out" | sed -n 's/^pan:1: //p' | head -1)
    truncated=$(printf '%s\n' "$out" | grep -c 'max search depth too small')
    secs=$(($(date +%s) - started))
    if [ -z "$errors" ] || [ "$truncated" != 0 ]; then
        echo "model: $name: no complete answer"; failed=$((failed + 1)); return
    fi
    if [ "$expect" = pass ] && [ "$errors" = 0 ]; then
        echo "model: $name: no counterexample in $states states ($secs s)"; passed=$((passed + 1))
    elif [ "$expect" = fail ] && [ "$errors" != 0 ]; then
        echo "model: $name: counterexample, as it must be: $first"; passed=$((passed + 1))
        if [ -n "${TRAILS:-}" ]; then
            mkdir -p "$TRAILS"
            (cd "$work" && spin -t -p "$@" "$model.pml") > "$TRAILS/$model$(echo "$*" | tr -d ' ').trail" 2>&1
        fi
    else
        echo "model: $name: expected $expect, spin said: ${first:-no errors}"; failed=$((failed + 1))
    fi
}

verify lifecycle pass
for rule in OLD_CAPTURE OLD_ORDER OLD_RING OLD_DROP NO_JUDGE OLD_SEEN; do verify lifecycle fail "-D$rule"; done
verify wakeup pass
verify wakeup pass -DFENCELESS
verify wakeup fail -DFENCELESS -DNO_MEMBARRIER
# A sleeper that only naps, to a publisher that neither fences nor is
# reached by its membarrier: no wake-up is owed, so the property is
# bounded delay (a message in memory is taken within a slice), and the
# rule that gives it is the slice: without it the model must fail.
verify wakeup pass -DFENCELESS -DNO_MEMBARRIER -DNAPS
verify wakeup fail -DFENCELESS -DNO_MEMBARRIER -DNAPS -DNO_SLICE
verify wakeup fail -DNO_PUBLISH_FENCE
verify wakeup fail -DNO_RECHECK
verify wakeup fail -DNO_SLEEPER_FENCE
verify wakeup fail -DFENCELESS -DNO_RECHECK
echo "model: $passed passed, $failed failed"
[ "$failed" = 0 ]
