# Sourced by peers.sh and instructions.sh with $aeron set to an Aeron
# checkout: copies its C client to a scratch directory outside this project
# ($work/c; $work is a mktemp directory, removed on exit), applies the fix
# of upstream PR #2015 to aeron_spsc_rb.c ($fixed) and refuses a copy that
# is neither unfixed in the known way nor fixed. Nothing of Aeron's is part
# of this project.
src="$aeron/aeron-client/src/main/c"
rb="$src/concurrent/aeron_spsc_rb.c"
[ -f "$rb" ] || { echo "aeron peer: $rb not found" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/shared_ring_aeron_peer.XXXXXX")
# A caller with an EXIT trap of its own that removes $work says so
# (peers.sh); for any other (instructions.sh) this trap removes it.
[ -n "${caller_removes_work:-}" ] || trap 'rm -rf "$work"' EXIT
cp -R "$src" "$work/c"
fixed="$work/c/concurrent/aeron_spsc_rb.c"
# aeron_spsc_rb_claim_capacity ends with its result; the unfixed copy
# returns record_index there, which is 0 (not -1) when neither end had room.
last=$(awk '/aeron_spsc_rb_claim_capacity\(/{f=1} f&&/^}/{print n; exit} f&&/return/{n=$0}' "$fixed" | tr -d ' ')
case "$last" in
    "return(int32_t)record_index;")
        awk '/aeron_spsc_rb_claim_capacity\(/{f=1}
             f&&/return \(int32_t\)record_index;/{last=NR}
             {line[NR]=$0}
             f&&/^}/{f=0}
             END{for(i=1;i<=NR;i++){if(i==last) sub(/return \(int32_t\)record_index;/,"return write_index;",line[i]); print line[i]}}' \
            "$fixed" > "$fixed.new" && mv "$fixed.new" "$fixed"
        echo "aeron peer: applied the PR #2015 fix (claim returns write_index)";;
    "returnwrite_index;")
        echo "aeron peer: this copy already has the PR #2015 fix";;
    *)
        echo "aeron peer: aeron_spsc_rb_claim_capacity ends in '$last': not a version this script knows; refusing" >&2
        exit 2;;
esac
