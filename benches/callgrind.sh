#!/usr/bin/env bash
# Instructions per operation, counted by valgrind's callgrind: for each case,
# run the bench binary's `--callgrind CASE N` mode twice, with N operations
# and with none, and divide the difference of the two totals by N. Start-up,
# actor threads and shutdown cancel out; what is left is the loop body: one
# operation plus its loop counter (about 3 instructions).
#
#   bash benches/callgrind.sh            # N = 1,000,000
#   N=200000 bash benches/callgrind.sh
#   FEATURES=tracing bash benches/callgrind.sh   # the root package's features
#
# FEATURES (comma-separated) builds the benches with those features of the
# root package, so what a feature adds per operation is counted the same
# way; the JSON rows then carry them (`features`). Without it, the default
# build: the instruction budget's numbers.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-1000000}
FEATURES=${FEATURES:-}
bin() {
    cargo bench --bench "$1" --no-run ${FEATURES:+--features "$FEATURES"} 2>&1 |
        sed -n 's/.*Executable .* (\(.*\))$/\1/p' | tail -1
}
dispatch=$(bin dispatch)
table5=$(bin table5)

ir() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

per_op() {
    local exe=$1 case=$2
    local none many
    none=$(ir "$exe" --callgrind "$case" 0)
    many=$(ir "$exe" --callgrind "$case" "$N")
    awk -v a="$none" -v b="$many" -v n="$N" 'BEGIN { printf "%.1f", (b - a) / n }'
}

out="${CARGO_TARGET_DIR:-target}/kaspar-bench"
mkdir -p "$out"
jsonl="$out/callgrind${FEATURES:+-${FEATURES//,/-}}.jsonl"
: > "$jsonl"

# One row per case: printed as markdown and written as JSON lines
# (table = callgrind, metric = instructions) for scripts. The JSON case
# names are the ones the instruction budget speaks of (issue #15):
# fast_send is dispatch without a reply, fast_send_reply with one.
row() {
    local exe=$1 bench_case=$2 name=$3 n
    n=$(per_op "$exe" "$bench_case")
    echo "| $name | $n |"
    printf '{"table":"callgrind","case":"%s","metric":"instructions","value":%s,"unit":"instructions","features":"%s"}\n' \
        "$name" "$n" "$FEATURES" >> "$jsonl"
}

echo "valgrind $(valgrind --version | sed 's/valgrind-//'), N = $N, features: ${FEATURES:-default}"
echo
echo "| case | instructions per op |"
echo "|---|---:|"
row "$dispatch" direct_call direct_call
row "$dispatch" virtual_predicted virtual_predicted
row "$dispatch" virtual_unpredicted virtual_unpredicted
row "$dispatch" lock_call_unlock lock_call_unlock
row "$dispatch" fast_send_no_reply fast_send
row "$dispatch" fast_send fast_send_reply
row "$dispatch" fast_send_void fast_send_void
row "$dispatch" fast_send_recipient fast_send_recipient
row "$table5" fast_send_intra_group fast_send_intra_group
row "$dispatch" tell tell
row "$dispatch" fast_send_pooled fast_send_pooled
row "$dispatch" pool_ping_pong pool_ping_pong
row "$dispatch" pool_tell pool_tell
echo
echo "JSON lines: $jsonl"
