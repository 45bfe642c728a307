#!/usr/bin/env bash
# The peers comparison (its own crate, outside the workspace, so that
# `cargo test` never builds tokio and the frameworks): builds it, runs the
# quick tables and the quick Savina suite (each checks its own results and
# fails on a wrong count), and checks that peers.jsonl has the cases the
# README names. Timings never gate.
set -euo pipefail
cd "$(dirname "$0")/../.."

manifest=benches/peers/Cargo.toml
out=target/kaspar-bench
rm -f "$out/peers.jsonl" "$out/savina.jsonl"

cargo run --release --manifest-path "$manifest" -- --quick
cargo run --release --manifest-path "$manifest" -- savina --quick

fail=0
for case in kaspar/thread/ask kaspar/spin/ask kaspar/fast_send/ask \
    kaspar/thread/tell kaspar/thread_compact/tell kaspar/group/ping_pong kaspar/thread/ping_pong \
    crossbeam/threads/ask crossbeam/threads/tell crossbeam/threads/ping_pong \
    std_mpsc/threads/ask tokio/current_thread/ask tokio/multi_thread/ask \
    kaspar/pool/ask kaspar/pool/tell kaspar/pool/ping_pong kaspar/pool_segmented/tell \
    kaspar/pool_await_current_thread/ask kaspar/pool_await_multi_thread/ask \
    kaspar/pool_hosted_current_thread/ask kaspar/pool_hosted_multi_thread/ask \
    kaspar/idle100/cpu ask/core_to_core tell/core_to_core ping_pong/core_to_core; do
    if ! grep -q "\"case\":\"$case\"" "$out/peers.jsonl"; then
        echo "peers: no rows for $case in $out/peers.jsonl" >&2
        fail=1
    fi
done
for bench in ping_pong counting thread_ring fork_join chameneos; do
    if ! grep -q "\"case\":\"$bench/kaspar/" "$out/savina.jsonl"; then
        echo "peers: no kaspar rows for Savina $bench in $out/savina.jsonl" >&2
        fail=1
    fi
    if ! grep -q "\"case\":\"$bench/core_to_core\"" "$out/savina.jsonl"; then
        echo "peers: no core-to-core round trip for Savina $bench in $out/savina.jsonl" >&2
        fail=1
    fi
    if ! grep -q "\"case\":\"$bench/kaspar/pool\"" "$out/savina.jsonl"; then
        echo "peers: no kaspar/pool row for Savina $bench in $out/savina.jsonl" >&2
        fail=1
    fi
done
exit "$fail"
