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
