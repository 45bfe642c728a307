#!/usr/bin/env bash
# Smoke test of the benchmarks: `cargo bench --bench paper -- --quick` runs
# every table we reproduce (Table 5, Table 6, Table 7 + batching, pool) in one
# process. This checks that it runs to the end and writes its outputs; it
# never gates on the timings, which are noise on shared CI machines.
set -euo pipefail
cd "$(dirname "$0")/../.."

out="${CARGO_TARGET_DIR:-target}/kaspar-bench"
rm -f "$out/paper.jsonl" "$out/table5_cdf.svg"

cargo bench --bench paper -- --quick

fail=0
for table in table5 dispatch table7 batching pool; do
    rows=$(grep -c "\"table\":\"$table\"" "$out/paper.jsonl" || true)
    if [ "$rows" -eq 0 ]; then
        echo "bench-smoke: no rows for table '$table' in $out/paper.jsonl" >&2
        fail=1
    else
        echo "bench-smoke: $table: $rows rows"
    fi
done
if ! grep -q '<svg' "$out/table5_cdf.svg" 2>/dev/null; then
    echo "bench-smoke: $out/table5_cdf.svg is missing or not an SVG" >&2
    fail=1
fi
exit "$fail"
