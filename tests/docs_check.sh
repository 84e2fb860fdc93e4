#!/bin/sh
# Docs that cannot drift from the code. shared_ring.h is the reference; the
# README and docs/ may only name what it (or the tests) defines:
# - every public function the header declares is on its API screen
#   (section 1), and every function on the screen is declared;
# - every field of shared_ring_options and every flag is on the API screen,
#   and every flag is named in the flags field's comment;
# - every compile-time option the header tests (#ifdef, #ifndef,
#   defined()) is in section 6, and every option section 6 lists is one
#   the header tests;
# - every shared_ring_*, SHARED_RING_*, srng_* and SRNG_* name in README.md
#   and docs/*.md exists in the header (CMake options in CMakeLists.txt,
#   the inspector in tools/), and every `snake_case` name in backquotes
#   (tests, mutants, fields) exists in the header, tests/, bench/ or tools/;
# - every "section N (Title)" names the header's section N, and every
#   "section 4 (The protocol), "Para"" a paragraph of it;
# - every "FILE.md, "Heading"" in the header, the docs, the models, the
#   tests' sources and bench/ names a heading of docs/FILE.md, and every
#   docs/FILE.md the header, Makefile, examples, bench/ or tools/ name
#   exists;
# - the interleaving scenarios docs/protocol.md's tables name (in italics)
#   are scenarios of tests/interleave.c;
# - every example program is in docs/usage.md, in CMakeLists.txt and in the
#   Makefile's EXAMPLES (which make test builds and runs);
# - the layout version is the code's wherever the docs name it;
# - the README's warning claim and docs/testing.md's unit-test count.
# (The header's result lists are tied to the code by tests/results.c.)
# Prints "docs: P passed, F failed"; exits non-zero if F > 0.
set -u
cd "$(dirname "$0")/.."
H=shared_ring.h
DOCS="README.md docs/*.md"
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "docs: $1"; }
has_word() { printf '%s\n' "$2" | grep -qw -- "$1"; }
# words FILE...: every identifier in the files, one a line, sorted
words() { cat "$@" | tr -c 'A-Za-z0-9_' '\n' | grep -v '^$' | sort -u; }
# flat FILE: the file on one line, runs of blanks made one space (a
# comment may break a quoted name across lines)
flat() { tr '\n\t' '  ' < "$1" | tr -s ' '; }

declarations=$(sed -n '1,/^#ifdef SHARED_RING_IMPLEMENTATION/p' $H)
manual=$(sed -n '1,/^\*\//p' $H)
screen=$(awk '/1\. THE API ON ONE SCREEN/ { on = 1 } on && /^   CONTENTS/ { exit } on' $H)
section6=$(awk '/   6\. OPTIONS/ { on = 1 } on && /   7\. LIMITS/ { exit } on' $H)
words $H > "$tmp/header"
words $H tests/*.c tests/*.cpp tests/*.h tests/*.sh tests/mutants.txt tests/model/* \
    bench/*.c bench/*.h bench/*.sh bench/peers/* tools/*.c Makefile > "$tmp/code"
ls tests bench tools | sed 's/\.[a-z]*$//' >> "$tmp/code"

# ---- the API screen ---------------------------------------------------------
[ -n "$screen" ] || bad "the header has no API screen"
declared=$(printf '%s\n' "$declarations" | grep -o '^SHARED_RING_API [^(]*(' |
           grep -o 'shared_ring_[a-z0-9_]*' | sort -u)
for f in $declared; do
    if has_word "$f" "$screen"; then ok; else bad "$f is not on the header's API screen"; fi
done
for f in $(printf '%s\n' "$screen" | grep -o 'shared_ring_[a-z0-9_]*(' | tr -d '(' | sort -u); do
    if has_word "$f" "$declared"; then ok; else bad "the API screen lists $f, which the header does not declare"; fi
done

fields=$(awk '/^typedef struct shared_ring_options \{/ { on = 1; next }
              on && /^\} shared_ring_options;/ { exit }
              on && /^    [A-Za-z_][A-Za-z0-9_ ]*[ *][a-z_0-9]+;/ {
                  sub(/;.*/, ""); n = split($0, w, /[ *]+/); print w[n] }' $H)
[ -n "$fields" ] || bad "no fields found in shared_ring_options"
for f in $fields; do
    if has_word "$f" "$screen"; then ok; else bad "option $f is not on the header's API screen"; fi
done

# A flag is the #define that follows a comment beginning "/* flags:".
flags=$(awk '/^\/\* flags:/ { want = 1 } want && /^#define SHARED_RING_/ { print $2; want = 0 }' $H)
flags_comment=$(awk '/^typedef struct shared_ring_options \{/ { on = 1 } on && /uint32_t flags;/ { f = 1 }
                     f { print } f && /\*\// { exit }' $H)
[ -n "$flags" ] || bad "no flags found in the header"
for f in $flags; do
    if has_word "$f" "$screen"; then ok; else bad "flag $f is not on the header's API screen"; fi
    if has_word "$f" "$flags_comment"; then ok; else bad "flag $f is not named in the flags field's comment"; fi
done

# ---- compile-time options: tested by the header <-> listed in section 6 ------
tested=$( (grep -E '^[[:space:]]*#[[:space:]]*(ifdef|ifndef)[[:space:]]+SHARED_RING_' $H |
           grep -o 'SHARED_RING_[A-Z0-9_]*'
           grep -o 'defined(SHARED_RING_[A-Z0-9_]*)' $H | grep -o 'SHARED_RING_[A-Z0-9_]*') |
         grep -v -x -e SHARED_RING_H -e SHARED_RING_IMPLEMENTATION_DONE | sort -u)
[ -n "$tested" ] || bad "no compile-time options found in the header"
for m in $tested; do
    if has_word "$m" "$section6"; then ok; else bad "$m is not in the header's section 6"; fi
done
for m in $(printf '%s\n' "$section6" | grep -o '^   SHARED_RING_[A-Z0-9_]*' | sort -u); do
    if has_word "$m" "$tested"; then ok; else bad "section 6 lists $m, which the header never tests"; fi
done

# ---- names the README and docs use exist ---------------------------------------
for doc in $DOCS; do
    # (a name after a slash is a shared memory name, not an identifier)
    for n in $(sed 's|/[A-Za-z0-9_]*||g' "$doc" |
               grep -o -e 'shared_ring_[a-z0-9_*]*[a-z0-9*]' -e 'SHARED_RING_[A-Z0-9_*]*[A-Z0-9*]' \
                       -e 'srng_[a-z0-9_]*[a-z0-9]' -e 'SRNG_[A-Z0-9_]*[A-Z0-9]' | sort -u); do
        case $n in
        shared_ring_stat)
            if [ -f tools/shared_ring_stat.c ]; then ok; else bad "$doc names $n, which tools/ does not hold"; fi
            continue ;;
        SHARED_RING_BUILD_* | SHARED_RING_INSTALL)
            if grep -qw -- "$n" CMakeLists.txt; then ok; else bad "$doc names $n, which CMakeLists.txt does not define"; fi
            continue ;;
        esac
        case $n in
        *'*'*) re=$(printf '%s' "$n" | sed 's/\*/[A-Za-z0-9_]*/g')
               if grep -qx -- "$re" "$tmp/header"; then ok; else bad "$doc names $n, which matches nothing in the header"; fi ;;
        *) if grep -qxF -- "$n" "$tmp/header"; then ok; else bad "$doc names $n, which the header does not define"; fi ;;
        esac
    done
    for n in $(grep -o '`[a-z][a-z0-9]*\(_[a-z0-9]\{1,\}\)\{1,\}`' "$doc" | tr -d '`' | sort -u); do
        if grep -qxF -- "$n" "$tmp/code"; then ok; else bad "$doc names \`$n\`, which neither the header nor the tests, bench/ or tools/ define"; fi
    done
done

# ---- sections and headings cited exist -------------------------------------------
for doc in $DOCS CHANGELOG.md; do
    flat "$doc" | grep -o 'section [0-9] ([^)]*)\(, "[^"]*"\)\{0,1\}' | sort -u > "$tmp/cites"
    while IFS= read -r cite; do
        n=$(printf '%s\n' "$cite" | sed 's/^section \([0-9]\).*/\1/')
        title=$(printf '%s\n' "$cite" | sed 's/^section [0-9] (\([^)]*\)).*/\1/' | tr '[:lower:]' '[:upper:]')
        real=$(printf '%s\n' "$manual" | grep -E "^   $n\. [A-Z]" | head -1 | sed "s/^   $n\. //")
        case $real in
        "$title"*) ok ;;
        *) bad "$doc cites \"$cite\": the header's section $n is \"$real\"" ;;
        esac
        case $cite in
        *', "'*)
            para=$(printf '%s\n' "$cite" | sed 's/.*, "\([^"]*\)"$/\1/')
            if awk -v n="$n" -v p="   $para." '
                    $0 ~ "^   " n "\\. [A-Z]" { on = 1; next }
                    on && /^   [0-9]\. [A-Z]/ { exit }
                    on && index($0, p) == 1 { found = 1 }
                    END { exit !found }' $H; then ok
            else bad "$doc cites \"$cite\": section $n has no paragraph \"$para\""; fi ;;
        esac
    done < "$tmp/cites"
done

for src in $H $DOCS CHANGELOG.md tests/*.c tests/*.cpp tests/model/* \
           bench/*.c bench/*.h examples/*.c tools/*.c; do
    flat "$src" | grep -o '[A-Za-z]\{1,\}\.md)\{0,1\}, "[^"]*"' | sort -u > "$tmp/heads"
    while IFS= read -r ref; do
        case $ref in
        README.md*) file=README.md ;;
        *) file=docs/${ref%%.md*}.md ;;
        esac
        head=$(printf '%s\n' "$ref" | sed 's/.*, "\([^"]*\)"$/\1/')
        if [ -f "$file" ] && grep -E '^#+ ' "$file" | sed 's/^#* //' | grep -qxF -- "$head"; then ok
        else bad "$src cites $ref: $file has no heading \"$head\""; fi
    done < "$tmp/heads"
done
for src in $H Makefile CMakeLists.txt examples/*.c bench/*.c bench/*.h bench/*.sh bench/peers/* tools/*.c; do
    for file in $(grep -o 'docs/[a-z_]*\.md' "$src" | sort -u); do
        if [ -f "$file" ]; then ok; else bad "$src names $file, which does not exist"; fi
    done
done

# ---- the interleaving scenarios the lifecycle tables name ---------------------------
grep '^|' docs/protocol.md | sed 's/\*\*[^*]*\*\*//g' | grep -o '\*[a-z][^*|]* [^*|]*\*' |
    tr -d '*' | sed 's/…$//' |
    sort -u > "$tmp/scenarios"
[ -s "$tmp/scenarios" ] || bad "docs/protocol.md's tables name no interleaving scenario"
while IFS= read -r s; do
    if grep -qF -- "\"$s" tests/interleave.c; then ok
    else bad "docs/protocol.md names the scenario \"$s\", which tests/interleave.c does not run"; fi
done < "$tmp/scenarios"

# ---- examples ----------------------------------------------------------------------
examples=$(sed -n '/^EXAMPLES = /,/^[^ ]*$/p' Makefile | tr -d '\\' | sed 's/EXAMPLES = //')
for path in examples/*.c; do
    e=$(basename "$path" .c)
    if grep -q "\`$e\.c\`" docs/usage.md; then ok; else bad "examples/$e.c is not in docs/usage.md"; fi
    if grep -qw "$e" CMakeLists.txt; then ok; else bad "examples/$e.c is not in CMakeLists.txt"; fi
    if has_word "$e" "$examples"; then ok; else bad "examples/$e.c is not in the Makefile's EXAMPLES"; fi
done

# ---- the layout version --------------------------------------------------------------
layout=$(sed -n 's/^#define SHARED_RING_LAYOUT_VERSION \([0-9]*\)u$/\1/p' $H)
[ -n "$layout" ] || bad "no SHARED_RING_LAYOUT_VERSION in the header"
if grep -q "^          4    4  format    version     layout version, $layout\$" $H; then ok
else bad "the header's layout table does not say version $layout"; fi
if grep -q "^   [0-9.]*  layout version $layout:" $H; then ok
else bad "the header's revision history does not name layout version $layout"; fi
if grep -q "Offsets of layout $layout " tools/shared_ring_stat.c; then ok
else bad "tools/shared_ring_stat.c does not read layout $layout"; fi
for doc in $DOCS; do
    for v in $(flat "$doc" | grep -o 'layout version [0-9]*' | grep -o '[0-9]*$' | sort -u); do
        if [ "$v" = "$layout" ]; then ok; else bad "$doc says layout version $v; the code's is $layout"; fi
    done
done

# ---- the README's warning claim, testing.md's count ---------------------------------
# Each warning the -Weverything builds turn off is named where the README
# makes the claim.
for w in $(grep -A2 -e '-Weverything' Makefile | grep -o -e '-Wno-[a-z0-9+-]*' | sort -u); do
    case $w in
    -Wno-c++98-compat*) want="C++98-compatibility" ;;
    *) want="-W${w#-Wno-}" ;;
    esac
    if grep -A3 -e 'Weverything' README.md | grep -q -e "$want"; then ok
    else bad "the Makefile's -Weverything builds turn off $w; the README's claim does not say so"; fi
done

units=$(grep -o 'RUN([a-z_0-9]*)' tests/unit.c | wc -l | tr -d ' ')
if grep -q "$units unit tests" docs/testing.md; then ok
else bad "docs/testing.md does not say $units unit tests (tests/unit.c runs $units)"; fi

echo "docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
