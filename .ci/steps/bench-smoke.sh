#!/usr/bin/env bash
# Smoke test of the benchmarks: `cargo bench --bench paper -- --quick` runs
# every table we reproduce (Table 5, Table 6, Table 7 + batching, pool) in one
# process, and `cargo bench --bench saturation -- --quick` (a few seconds)
# drives one actor from 1-8 producers and asserts that no message is lost.
# This checks that they run to the end and write their outputs; it never
# gates on the timings, which are noise on shared CI machines.
set -euo pipefail
cd "$(dirname "$0")/../.."

out="${CARGO_TARGET_DIR:-target}/kaspar-bench"
rm -f "$out/paper.jsonl" "$out/table5_cdf.svg" "$out/saturation.jsonl"

cargo bench --bench paper -- --quick
cargo bench --bench saturation -- --quick

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
# 7 cases x 4 producer counts x 2 metrics.
rows=$(grep -c '"table":"saturation"' "$out/saturation.jsonl" 2>/dev/null || true)
if [ "${rows:-0}" -ne 56 ]; then
    echo "bench-smoke: expected 56 saturation rows in $out/saturation.jsonl, found ${rows:-0}" >&2
    fail=1
else
    echo "bench-smoke: saturation: $rows rows"
fi
if ! grep -q '<svg' "$out/table5_cdf.svg" 2>/dev/null; then
    echo "bench-smoke: $out/table5_cdf.svg is missing or not an SVG" >&2
    fail=1
fi
exit "$fail"
