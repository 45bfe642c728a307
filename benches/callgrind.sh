#!/usr/bin/env bash
# Instructions per operation, counted by valgrind's callgrind: for each case,
# run the bench binary's `--callgrind CASE N` mode twice, with N operations
# and with none, and divide the difference of the two totals by N. Start-up,
# actor threads and shutdown cancel out; what is left is the loop body: one
# operation plus its loop counter (about 3 instructions).
#
#   bash benches/callgrind.sh            # N = 1,000,000
#   N=200000 bash benches/callgrind.sh
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-1000000}
bin() {
    cargo bench --bench "$1" --no-run 2>&1 |
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

echo "valgrind $(valgrind --version | sed 's/valgrind-//'), N = $N"
echo
echo "| case | instructions per op |"
echo "|---|---:|"
for case in direct_call virtual_predicted virtual_unpredicted lock_call_unlock \
    fast_send_no_reply fast_send fast_send_recipient; do
    echo "| $case | $(per_op "$dispatch" "$case") |"
done
echo "| fast_send_intra_group | $(per_op "$table5" fast_send_intra_group) |"
