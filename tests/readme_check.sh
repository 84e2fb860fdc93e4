#!/bin/sh
# Every README code block introduced by "<!-- file: PATH -->" must be PATH
# byte for byte, so the quick start in the README is code the tests build.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v dir="$tmp" '
    /^<!-- file: .* -->$/ { name = $3; gsub("/", "__", name); want = 1; next }
    want && /^```/ { want = 0; out = dir "/" name; inblock = 1; printf "" > out; next }
    inblock && /^```$/ { inblock = 0; close(out); next }
    inblock { print >> out }
' README.md
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
echo "readme: $count passed, 0 failed"

# Every test named in the README's misuse table exists and is run.
rows=0
for t in $(awk '/^<!-- misuse-table -->$/ { on = 1; next } on && !/^\|/ { on = 0 }
                on { n = split($0, f, "|"); gsub(/[` ]/, "", f[n - 1]); print f[n - 1] }' README.md |
           grep -v -e '^test$' -e '^---$'); do
    # RUN(name) only compiles if the test is defined (some are made by a macro)
    grep -q "RUN($t);" tests/unit.c || {
        echo "readme: misuse table names $t, which tests/unit.c does not define and run"
        exit 1
    }
    rows=$((rows + 1))
done
[ "$rows" -ge 30 ] || { echo "readme: misuse table has only $rows rows"; exit 1; }
echo "readme misuse table: $rows passed, 0 failed"
