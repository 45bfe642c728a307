#!/usr/bin/env bash
# The paper's case study, smoke-sized: a 2-second tick-to-book run over
# loopback UDP (1 s per configuration). Fails if any balance (per stream
# too), the book check, or the simulation replay check fails, or if the
# JSON lines lack one of the six streams (a book and a trade stream per
# instrument) of either configuration, or a book stream's three floor
# estimates (Table 11). The latency numbers are printed, not judged.
set -euo pipefail
cd "$(dirname "$0")/../.."

out="${CARGO_TARGET_DIR:-target}/kaspar-bench/tick_to_book.jsonl"
rm -f "$out"
cargo run --release --example tick_to_book -- --secs 2

fail=0
for config in one_thread two_stage; do
    for inst in es nq zn; do
        for stream in book trade; do
            case="${config}_${inst}_${stream}"
            metrics="p50_ns p99_ns"
            if [ "$stream" = book ]; then
                metrics="$metrics floor_ns floor_direct_ns floor_peak_ns"
            fi
            for metric in $metrics; do
                if ! grep -q "\"case\":\"$case\",\"metric\":\"$metric\"" "$out"; then
                    echo "tick_to_book: no $metric for $case in $out" >&2
                    fail=1
                fi
            done
        done
    done
done
exit "$fail"
