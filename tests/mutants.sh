#!/bin/sh
# Mutation testing: each mutant reverts one rule of shared_ring.h (a
# one-line search and replace, listed in tests/mutants.txt and, if it
# exists, tests/model/mutants.txt), is applied to a scratch copy of the
# tree, and runs against the fast suites, cheapest first, until one fails
# (a failed check, a crash, or a hang that `timeout` ends). Prints
#   KILLED name: suite (...)    a suite failed: some test specifies the rule
#                               (in brackets: how, the time, failing tests)
#   SURVIVED name               every suite passed: no test does
#   EQUIVALENT name: why        marked so in the list: not run
#   BROKEN name                 the mutant does not build: fix the mutant
# and a last line "mutants: N passed, M failed" (a survivor or a broken
# mutant is a failure). Exits non-zero if M > 0, and at once if any
# mutant's find text no longer matches the header exactly once ("STALE
# name: find text matches N times"): fix the list first. Before the
# mutants, the unmutated header runs through the same suites: one that
# fails there would "kill" every mutant, so the run stops.
#
# usage: sh tests/mutants.sh [options] [NAME...]   (no NAME: every mutant)
#   --list FILE    read FILE instead of the two lists (repeatable)
#   --suites "S.." run these suites, in this order, instead of the default
#   --check        only check the lists and their find texts; run nothing
#   --no-baseline  skip the run of the unmutated header through the suites
#   --smoke        what make test runs: the checks of the lists, STALE
#                  detection on a deliberately bad list, and a few mutants
#                  the first suite kills
#   -v             show the tail of the failing suite's output
# MUTANT_CFLAGS (default -O0: a third of the build time of -O2; every test
# is deterministic or retried) builds the suites, and HARNESS_FAIL_FAST
# stops a mutant's suite at its first failed test.
#
# List format: blocks separated by blank lines; '#' lines are comments.
#   mutant <name>            letters, digits, '_', '-', '.'
#   rule <the rule of the code the mutant reverts, one line>
#   find <text on one line of shared_ring.h; must occur exactly once>
#   replace <the text that replaces it>
#   equivalent <why no test can tell>   (optional: reported, not run)
# Everything after "key " is the value, spaces included.
# Needs perl (the literal replacement) and timeout (coreutils).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
here=$(pwd)
cd "$root" || exit 1

lists= suites= check_only=0 baseline=1 smoke=0 verbose=0
while [ $# -gt 0 ]; do
    case $1 in
    --list) # relative to where the script was started
        case $2 in /*) lists="$lists $2" ;; *) lists="$lists $here/$2" ;; esac
        shift 2 ;;
    --suites) suites=$2; shift 2 ;;
    --check) check_only=1; shift ;;
    --no-baseline) baseline=0; shift ;;
    --smoke) smoke=1; shift ;;
    -v) verbose=1; shift ;;
    --) shift; break ;;
    -*) echo "mutants: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
if [ -z "$lists" ]; then
    lists=tests/mutants.txt
    [ -f tests/model/mutants.txt ] && lists="$lists tests/model/mutants.txt"
fi
CFLAGS=${MUTANT_CFLAGS:--O0}

# ---- the smoke run (make test) -------------------------------------------------
# The machinery must not rot unseen between full runs: the lists parse and
# apply, a find text that matches nothing or twice stops the run, and a few
# mutants the first suite kills at once are reported KILLED.
SMOKE_MUTANTS="fast_read_beyond_capacity deliver_beyond_capacity uncork_stays_indirect"
SMOKE_SUITE=fast_path
if [ "$smoke" = 1 ]; then
    sp=0 sf=0
    pass() { sp=$((sp + 1)); }
    # (a nested run's summary, shown on failure, must not add to make test's count)
    flunk() { sf=$((sf + 1)); echo "mutants smoke: $1" | sed 's/ passed, / passed; /'; }
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/mutants-smoke.XXXXXX") || exit 1
    trap 'rm -rf "$tmp"' EXIT
    if out=$(sh "$0" --check 2>&1); then pass; else flunk "the lists do not apply: $out"; fi
    printf 'mutant absent\nrule none\nfind %s\nreplace x\n' \
        'text that is nowhere in the header' > "$tmp/absent.txt"
    printf 'mutant twice\nrule none\nfind %s\nreplace x\n' 'SRNG_FENCE();' > "$tmp/twice.txt"
    printf 'mutant misspelt\nrule none\nfnid x\nreplace y\n' > "$tmp/misspelt.txt"
    out=$(sh "$0" --check --list "$tmp/absent.txt" 2>&1)
    if [ $? -eq 3 ] && printf '%s\n' "$out" | grep -q '^STALE absent: find text matches 0 times'
    then pass; else flunk "a find text that matches nothing is not reported STALE: $out"; fi
    out=$(sh "$0" --check --list "$tmp/twice.txt" 2>&1)
    if [ $? -eq 3 ] && printf '%s\n' "$out" | grep -Eq '^STALE twice: find text matches ([2-9]|[1-9][0-9]+) '
    then pass; else flunk "a find text that matches twice is not reported STALE: $out"; fi
    if sh "$0" --check --list "$tmp/misspelt.txt" > /dev/null 2>&1
    then flunk "a list with an unknown key is accepted"; else pass; fi
    # shellcheck disable=SC2086
    out=$(sh "$0" --suites "$SMOKE_SUITE" $SMOKE_MUTANTS 2>&1)
    for m in $SMOKE_MUTANTS; do
        if printf '%s\n' "$out" | grep -q "^KILLED $m: $SMOKE_SUITE"; then pass
        else flunk "$m is not killed by $SMOKE_SUITE: $out"; fi
    done
    echo "mutants (smoke): $sp passed, $sf failed"
    [ "$sf" -eq 0 ]
    exit
fi

# The fast suites, in the order that kills soonest (measured over the
# lists: unit kills most; fast_path and fenced-fast_path the inline path's
# fences and bounds, liveness what needs another process, seams (where the
# Makefile can build it) forced races, kernel_lock the LOCKED bit,
# stale_judge a judge racing a rival's move; then
# wakeup_hole and interleave kill a few model mutants. The rest kill
# nothing in the lists today: they are the net for mutants to come, and run
# only for a mutant that gets that far.
default_suites="unit fast_path fenced-fast_path liveness seams realtime kernel_lock stale_judge results fuzz mutate
                stress fenced-stress fast-stress wakeup_hole os_wait clock_fail mixed_builds shm_trust notifier
                crash interleave"

# suite NAME: sets targets (what make builds), cmd (what runs) and secs
# (its timeout: several times its usual time on a loaded machine, so that a
# hang ends and counts as a kill without costing much).
suite() {
    B=tests/bin
    secs=60
    case $1 in
    unit) targets=$B/unit cmd=./$B/unit secs=30 ;;
    liveness | fast_path | fenced-fast_path | os_wait | clock_fail | mixed_builds | kernel_lock | stale_judge | \
        shm_trust | notifier | seams | realtime)
        targets=$B/$1 cmd=./$B/$1 ;;
    results) targets=$B/results cmd="./$B/results shared_ring.h" ;;
    fuzz) targets="$B/fuzz_consumer $B/fuzz_ops $B/fast-fuzz_consumer $B/fast-fuzz_ops"
          cmd="./$B/fuzz_consumer tests/fuzz/consumer/* && ./$B/fuzz_ops tests/fuzz/ops/* &&
               ./$B/fast-fuzz_consumer tests/fuzz/consumer/* && ./$B/fast-fuzz_ops tests/fuzz/ops/*" ;;
    mutate) targets="$B/mutate $B/fast-mutate"
            cmd="./$B/mutate 20000 && ./$B/fast-mutate 20000" ;;
    stress | fenced-stress | fast-stress) targets=$B/$1 cmd="./$B/$1 200000" ;;
    wakeup_hole) targets=$B/wakeup_hole cmd="./$B/wakeup_hole 100000" ;;
    crash) targets=$B/crash cmd="./$B/crash 5" ;;
    interleave) targets=$B/interleave cmd="./$B/interleave -q" secs=600 ;;
    *) echo "mutants: no suite named $1" >&2; exit 2 ;;
    esac
}

work=$(mktemp -d "${TMPDIR:-/tmp}/mutants.XXXXXX") || exit 1
prefetch_pid=
# The next suite's build, started in the background while this suite runs,
# is waited for (a few seconds at most), not killed: make would leave its
# compilers running.
stop_prefetch() {
    if [ -n "$prefetch_pid" ]; then
        wait "$prefetch_pid" 2>/dev/null
        prefetch_pid=
    fi
}
trap 'stop_prefetch; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP

# ---- the lists ------------------------------------------------------------
# Each mutant becomes a directory $work/m/NNN holding its fields as files
# (no quoting of the find and replace texts anywhere).
mkdir "$work/m"
for l in $lists; do [ -f "$l" ] || { echo "mutants: no list $l" >&2; exit 2; }; done
# shellcheck disable=SC2086
awk -v dir="$work/m" '
function fail(why) { printf "mutants: %s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"; bad = 1; exit 1 }
function put(key, value,   f) { f = dir "/" n "/" key; printf "%s", value > f; close(f) }
function end_block() {
    if (!open) return
    if (!("rule" in have) || !("find" in have) || !("replace" in have))
        fail("mutant " name " needs rule, find and replace")
    put("source", src)
    open = 0; delete have
}
FNR == 1 { end_block() }
/^#/ { next }
/^[ \t]*$/ { end_block(); next }
{
    key = $0; sub(/ .*/, "", key)
    value = length($0) > length(key) ? substr($0, length(key) + 2) : ""
    if (key == "mutant") {
        end_block()
        if (value !~ /^[A-Za-z0-9_.-]+$/) fail("bad mutant name \"" value "\"")
        if (value in names) fail("mutant " value " is listed twice")
        names[value] = 1; name = value; open = 1
        n = sprintf("%03d", ++count); system("mkdir \"" dir "/" n "\"")
        src = FILENAME ":" FNR
        put("name", value)
        next
    }
    if (!open) fail("\"" key "\" outside a mutant block")
    if (key != "rule" && key != "find" && key != "replace" && key != "equivalent")
        fail("unknown key \"" key "\"")
    if (key in have) fail(key " given twice for " name)
    if ((key == "find" || key == "rule" || key == "equivalent") && value == "")
        fail(key " of " name " is empty")
    have[key] = 1
    put(key, value)
}
END { if (!bad) end_block(); if (bad) exit 1 }
' $lists || exit 2

# apply HEADER DIR: replace the mutant's find text by its replace text,
# literally; "STALE" and exit 3 unless it occurs exactly once.
apply() {
    perl -e '
        my ($file, $dir) = @ARGV;
        local $/;
        sub slurp { open(my $f, "<", $_[0]) or die "$_[0]: $!"; my $t = <$f>; $t }
        my ($find, $rep, $name) = map { slurp("$dir/$_") } qw(find replace name);
        my $text = slurp($file);
        my ($n, $at, $i) = (0, -1, 0);
        while (($i = index($text, $find, $i)) >= 0) { $n++; $at = $i; $i++ }
        if ($n != 1) { print "STALE $name: find text matches $n times\n"; exit 3 }
        if ($find eq $rep) { print "STALE $name: replace is the find text\n"; exit 3 }
        substr($text, $at, length $find) = $rep;
        open(my $out, ">", $file) or die "$file: $!";
        print $out $text;
        close $out or die "$file: $!";
    ' "$1" "$2"
}

# Select the mutants named on the command line (all if none).
selected=
if [ $# -eq 0 ]; then
    selected=$(ls "$work/m")
else
    for want in "$@"; do
        found=
        for d in "$work"/m/*; do
            [ "$(cat "$d/name")" = "$want" ] && found=$(basename "$d")
        done
        [ -n "$found" ] || { echo "mutants: no mutant named $want" >&2; exit 2; }
        selected="$selected $found"
    done
fi

# Every selected mutant (equivalent ones too: their reason names code that
# must still be there) must apply to the header as it is now.
stale=0
for n in $selected; do
    cp shared_ring.h "$work/check.h"
    apply "$work/check.h" "$work/m/$n" || stale=$((stale + 1))
done
rm -f "$work/check.h"
if [ "$stale" -ne 0 ]; then
    echo "mutants: $stale stale mutants: their find texts must match shared_ring.h exactly once"
    exit 3
fi
if [ "$check_only" = 1 ]; then
    echo "mutants: $(echo $selected | wc -w | tr -d ' ') mutants apply to shared_ring.h"
    exit 0
fi

# ---- the scratch tree -------------------------------------------------------
# What the suites need: the header, the Makefile, the tests and their
# corpora, and docs/ (the docs check reads it).
tree=$work/tree
mkdir "$tree" && cp -R shared_ring.h Makefile tests docs "$tree"/ || exit 1
rm -rf "$tree/tests/bin"
cp shared_ring.h "$work/pristine.h"

[ -n "$suites" ] || suites=$default_suites
# seams only where the Makefile can build it
if printf '%s\n' $suites | grep -qx seams &&
    ! make -C "$tree" -n tests/bin/seams >/dev/null 2>&1; then
    suites=$(printf '%s\n' $suites | grep -vx seams | tr '\n' ' ')
fi
for s in $suites; do suite "$s"; done # an unknown name stops here

# build SUITE: make its binaries in the tree (quietly); 0 if they built.
build() {
    suite "$1"
    # shellcheck disable=SC2086
    make -C "$tree" -s CFLAGS="$CFLAGS" $targets > "$work/build-$1.log" 2>&1
}

# run_suites SUITE...: build and run each suite in turn, the next one's
# build going on in the background meanwhile. Sets killer to the first
# suite that failed ("" if none), how to "", "timeout", "signal N" or
# "build", and failed_tests to the names of its failing tests. A suite that
# fails is run once more: a mutant is killed only by a failure that repeats
# (this machine is shared, and a few tests time what a loaded machine may
# delay); the baseline (tries=3) gets three chances. With keep_going=1 (the
# baseline) a failing suite is added to `failing` and the others still run.
run_suites() {
    killer= how= next_built= failed_tests= failing=
    while [ $# -gt 0 ]; do
        s=$1
        shift
        if [ "$next_built" = "$s" ] && [ -n "$prefetch_pid" ]; then
            wait "$prefetch_pid"
            ok=$?
            prefetch_pid=
        else
            build "$s"
            ok=$?
        fi
        if [ "$ok" -ne 0 ]; then
            killer=$s how=build
            [ "$keep_going" = 1 ] || return
            failing="$failing $s"
            continue
        fi
        next_built=
        if [ $# -gt 0 ]; then
            build "$1" &
            prefetch_pid=$! next_built=$1
        fi
        suite "$s"
        try=0
        while :; do
            try=$((try + 1))
            (
                cd "$tree" || exit 1
                if [ "$fail_fast" = 1 ]; then
                    HARNESS_FAIL_FAST=1
                    export HARNESS_FAIL_FAST
                else
                    unset HARNESS_FAIL_FAST
                fi
                timeout -k 5 "$secs" sh -c "$cmd" < /dev/null > "$work/run.log" 2>&1
            )
            rc=$?
            # a hang (timeout: 124, or 137 after -k) is no flake: no second try
            [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] || [ "$try" -ge "$tries" ] &&
                break
        done
        if [ "$rc" -ne 0 ]; then
            stop_prefetch
            killer=$s
            if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then how=timeout
            elif [ "$rc" -gt 128 ]; then how="signal $((rc - 128))"; fi
            # the harness's "FAIL name" lines, or (a crash before them) the
            # tests its failed checks name ("  file:line: name: ...")
            failed_tests=$(sed -n 's/^FAIL \([A-Za-z0-9_]*\).*/\1/p' "$work/run.log" | head -3 | tr '\n' ' ')
            [ -n "$failed_tests" ] || failed_tests=$(sed -n \
                's/^ *[A-Za-z0-9_./]*\.c:[0-9]*: \([a-z0-9_]*\): .*/\1/p' "$work/run.log" |
                awk '!seen[$0]++' | head -3 | tr '\n' ' ')
            [ "$keep_going" = 1 ] || return
            failing="$failing $s"
            cp "$work/run.log" "$work/baseline-$s.log"
        fi
    done
}

show_log() {
    [ "$verbose" = 1 ] || return 0
    grep -v '^ok' "$1" | tail -n 12 | sed 's/^/    | /'
}

started=$(date +%s)
# A suite the unmutated header fails would "kill" every mutant: it is left
# out of this run, loudly, and counts as a failure of the run.
baseline_failed=0
if [ "$baseline" = 1 ]; then
    tries=3 keep_going=1 fail_fast=0
    # shellcheck disable=SC2086
    run_suites $suites
    for s in $failing; do
        echo "BASELINE $s: fails on the unmutated header: left out of this run"
        if [ -f "$work/baseline-$s.log" ]; then
            grep -v '^ok' "$work/baseline-$s.log" | tail -n 5 | sed 's/^/    | /'
        else
            tail -n 5 "$work/build-$s.log" | sed 's/^/    | /'
        fi
        suites=$(printf '%s\n' $suites | grep -vx "$s" | tr '\n' ' ')
        baseline_failed=$((baseline_failed + 1))
    done
    echo "baseline: the unmutated header passes: $suites" | tr -s ' \n' ' '
    echo
fi

tries=2 keep_going=0 fail_fast=1
killed=0 survived=0 broken=0 equivalent=0
for n in $selected; do
    d=$work/m/$n
    name=$(cat "$d/name")
    if [ -f "$d/equivalent" ]; then
        echo "EQUIVALENT $name: $(cat "$d/equivalent")"
        equivalent=$((equivalent + 1))
        continue
    fi
    cp "$work/pristine.h" "$tree/shared_ring.h"
    apply "$tree/shared_ring.h" "$d" || exit 3
    rm -rf "$tree/tests/bin"
    t0=$(date +%s)
    # shellcheck disable=SC2086
    run_suites $suites
    t=$(($(date +%s) - t0))
    if [ -z "$killer" ]; then
        echo "SURVIVED $name (${t}s; $(cat "$d/source"): $(cat "$d/rule"))"
        survived=$((survived + 1))
    elif [ "$how" = build ]; then
        echo "BROKEN $name: does not build for suite $killer (${t}s)"
        tail -n 5 "$work/build-$killer.log" | sed 's/^/    | /'
        broken=$((broken + 1))
    else
        echo "KILLED $name: $killer${how:+ ($how)} (${t}s${failed_tests:+; ${failed_tests% }})"
        show_log "$work/run.log"
        killed=$((killed + 1))
    fi
done
cp "$work/pristine.h" "$tree/shared_ring.h"

failed=$((survived + broken + baseline_failed))
echo "mutants: $killed passed, $failed failed" \
     "($equivalent equivalent, not run; $(($(date +%s) - started)) s)"
[ "$failed" -eq 0 ]
