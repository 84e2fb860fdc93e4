#!/bin/sh
# Docs that cannot drift from the code:
# - every public function is on the header's API screen and in docs/api.md;
# - every field of shared_ring_options is on the API screen and in
#   docs/api.md's options table;
# - every compile-time option the header reads (#ifndef SHARED_RING_...)
#   is in the header's section 6 and in docs/api.md;
# - every example program is in docs/usage.md, in CMakeLists.txt and in the
#   Makefile's EXAMPLES (which make test builds and runs);
# - the layout version is the code's wherever the docs name it.
# (The result lists of docs/api.md are tied to the header's by
# tests/results.c.)
# Prints "docs: P passed, F failed"; exits non-zero if F > 0.
set -u
cd "$(dirname "$0")/.."
H=shared_ring.h
passed=0 failed=0

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "docs: $1"; }
has_word() { printf '%s\n' "$2" | grep -qw -- "$1"; }

declarations=$(sed -n '1,/^#ifdef SHARED_RING_IMPLEMENTATION/p' $H)
screen=$(awk '/1\. THE API ON ONE SCREEN/ { on = 1 } on && /^   CONTENTS/ { exit } on' $H)
section6=$(awk '/   6\. OPTIONS/ { on = 1 } on && /   7\. LIMITS/ { exit } on' $H)
api=$(cat docs/api.md)

[ -n "$screen" ] || bad "the header has no API screen"
for f in $(printf '%s\n' "$declarations" | grep -o '^SHARED_RING_API [^(]*(' |
           grep -o 'shared_ring_[a-z0-9_]*' | sort -u); do
    if has_word "$f" "$screen"; then ok; else bad "$f is not on the header's API screen"; fi
    if has_word "$f" "$api"; then ok; else bad "$f is not in docs/api.md"; fi
done

fields=$(awk '/^typedef struct shared_ring_options \{/ { on = 1; next }
              on && /^\} shared_ring_options;/ { exit }
              on && /^    [A-Za-z_][A-Za-z0-9_ ]*[ *][a-z_0-9]+;/ {
                  sub(/;.*/, ""); n = split($0, w, /[ *]+/); print w[n] }' $H)
[ -n "$fields" ] || bad "no fields found in shared_ring_options"
for f in $fields; do
    if has_word "$f" "$screen"; then ok; else bad "option $f is not on the header's API screen"; fi
    # a table row whose first cell names the field
    if printf '%s\n' "$api" | awk -F'|' -v f="\`$f\`" 'index($2, f) { found = 1 } END { exit !found }'; then ok
    else bad "option $f is not in docs/api.md's options table"; fi
done

for m in $(grep -o '^#ifndef SHARED_RING_[A-Z0-9_]*' $H | sed 's/#ifndef //' | sort -u); do
    case $m in SHARED_RING_H | SHARED_RING_IMPLEMENTATION_DONE) continue ;; esac
    if has_word "$m" "$section6"; then ok; else bad "$m is not in the header's section 6"; fi
    if has_word "$m" "$api"; then ok; else bad "$m is not in docs/api.md"; fi
done

examples=$(sed -n '/^EXAMPLES = /,/^[^ ]*$/p' Makefile | tr -d '\\' | sed 's/EXAMPLES = //')
for path in examples/*.c; do
    e=$(basename "$path" .c)
    if grep -q "\`$e\.c\`" docs/usage.md; then ok; else bad "examples/$e.c is not in docs/usage.md"; fi
    if grep -qw "$e" CMakeLists.txt; then ok; else bad "examples/$e.c is not in CMakeLists.txt"; fi
    if has_word "$e" "$examples"; then ok; else bad "examples/$e.c is not in the Makefile's EXAMPLES"; fi
done

# The layout version the code formats is the one the manual, the
# revision history, docs/api.md and the stat tool name.
layout=$(sed -n 's/^#define SHARED_RING_LAYOUT_VERSION \([0-9]*\)u$/\1/p' $H)
[ -n "$layout" ] || bad "no SHARED_RING_LAYOUT_VERSION in the header"
if grep -q "^          4    4  format    version     layout version, $layout\$" $H; then ok
else bad "the header's layout table does not say version $layout"; fi
if grep -q "^   [0-9.]*  layout version $layout:" $H; then ok
else bad "the header's revision history does not name layout version $layout"; fi
if grep -q "the region's layout version ($layout)" docs/api.md; then ok
else bad "docs/api.md does not say layout version $layout"; fi
if grep -q "Offsets of layout $layout " tools/shared_ring_stat.c; then ok
else bad "tools/shared_ring_stat.c does not read layout $layout"; fi

# The warning claim: each warning the -Weverything builds turn off is named
# where the README makes the claim.
for w in $(grep -A2 -e '-Weverything' Makefile | grep -o -e '-Wno-[a-z0-9+-]*' | sort -u); do
    case $w in
    -Wno-c++98-compat*) words="C++98-compatibility" ;;
    *) words="-W${w#-Wno-}" ;;
    esac
    if grep -A3 -e 'Weverything' README.md | grep -q -e "$words"; then ok
    else bad "the Makefile's -Weverything builds turn off $w; the README's claim does not say so"; fi
done

# testing.md's count of unit tests is the suite's.
units=$(grep -o 'RUN([a-z_0-9]*)' tests/unit.c | wc -l | tr -d ' ')
if grep -q "| \`make test\` | $units unit tests" docs/testing.md; then ok
else bad "docs/testing.md does not say $units unit tests (tests/unit.c runs $units)"; fi

echo "docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
