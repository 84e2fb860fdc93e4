#!/bin/sh
# The README and docs/ say what the code does:
# - every code block introduced by "<!-- file: PATH -->" in README.md or
#   docs/*.md is PATH byte for byte (the quick starts are code the tests build);
# - every test named in the misuse table (docs/testing.md) exists and runs;
# - every relative link in them points at a file that exists;
# - README.md stays a ten-minute read: at most 1,500 words.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
DOCS="README.md docs/*.md"
for doc in $DOCS; do
    awk -v dir="$tmp" '
        /^<!-- file: .* -->$/ { name = $3; gsub("/", "__", name); want = 1; next }
        want && /^```/ { want = 0; out = dir "/" name; inblock = 1; printf "" > out; next }
        inblock && /^```$/ { inblock = 0; close(out); next }
        inblock { print >> out }
    ' "$doc"
done
count=0
for f in "$tmp"/*; do
    [ -e "$f" ] || { echo "readme: no <!-- file: --> blocks found"; exit 1; }
    path=$(basename "$f" | sed 's|__|/|g')
    if ! cmp -s "$f" "$path"; then
        echo "readme: the block for $path differs from the file:"
        diff "$path" "$f" || true
        exit 1
    fi
    count=$((count + 1))
done
echo "readme: $count code blocks passed, 0 failed"

# Every test named in the misuse table exists and is run.
rows=0
for t in $(awk '/^<!-- misuse-table -->$/ { on = 1; next } on && !/^\|/ { on = 0 }
                on { n = split($0, f, "|"); gsub(/[` ]/, "", f[n - 1]); print f[n - 1] }' \
           docs/testing.md | grep -v -e '^test$' -e '^---$'); do
    # RUN(name) only compiles if the test is defined (some are made by a macro)
    grep -q "RUN($t);" tests/unit.c || {
        echo "readme: misuse table names $t, which tests/unit.c does not define and run"
        exit 1
    }
    rows=$((rows + 1))
done
[ "$rows" -ge 30 ] || { echo "readme: misuse table has only $rows rows"; exit 1; }
echo "readme misuse table: $rows passed, 0 failed"

# Relative links resolve.
links=0
for doc in $DOCS; do
    dir=$(dirname "$doc")
    for target in $(grep -o '](\([^)#:]*\))' "$doc" | sed 's/^](\(.*\))$/\1/'); do
        [ -e "$dir/$target" ] || { echo "readme: $doc links to $target, which does not exist"; exit 1; }
        links=$((links + 1))
    done
done
echo "readme links: $links passed, 0 failed"

words=$(wc -w < README.md)
[ "$words" -le 1500 ] || { echo "readme: README.md has $words words (at most 1500)"; exit 1; }
echo "readme length: 1 passed, 0 failed ($words words)"
