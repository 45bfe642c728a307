#!/usr/bin/env bash
# kaspar-remote with its iceoryx2 back end (`cargo test --workspace` builds
# it too, through the root package's dev-dependency): clippy and rustdoc
# with the feature, its tests, and the round-trip bench in quick mode. The
# bench's `iceoryx2/kaspar` case is an `ask` to an exported actor, waited
# on with `Node::wait_polling`, against raw iceoryx2 (`iceoryx2/raw`), p50,
# same run; the step prints the verdict against the issue's 1.5x and fails
# past a regression guard (below). The trybuild ui cases of kaspar-remote
# run in the workspace test step, not here (KASPAR_REMOTE_UI=skip).
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo clippy -p kaspar-remote --features iceoryx2 --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc -p kaspar-remote --features iceoryx2 --no-deps --quiet
# Private items too (with the simulated network), so a broken intra-doc
# link in an internal module fails, as the runtime's do in .ci/run.
RUSTDOCFLAGS="-D warnings" cargo doc -p kaspar-remote --features iceoryx2,sim --no-deps \
    --document-private-items --quiet

KASPAR_REMOTE_UI=skip cargo test -p kaspar-remote --features iceoryx2

out="${CARGO_TARGET_DIR:-target}/kaspar-bench"

p50() {
    grep "\"case\":\"$1\",\"metric\":\"p50_ns\"" "$out/remote.jsonl" |
        sed -E 's/.*"value":([0-9.eE+-]+).*/\1/'
}

# The issue's target is 1.5x; the 2-core dev VM measures 1.4x-1.7x (about
# 0.3-0.9 us of kaspar-remote's own work on a 0.6-1.3 us raw round trip,
# the order-shaped message's postcard encoding included; the book's remote
# chapter has the runs). A shared CI machine moves more, so the gate is a
# regression guard at 2.5x; the verdict against 1.5x is printed.
#
# One attempt can miss the guard on a busy machine without any regression:
# a CI run measured iceoryx2/kaspar at 3.98 us beside 1.79 us for
# iceoryx2/kaspar_auth, the same path plus a MAC, in the same interleaved
# runs. So a miss measures the two cases again (up to three attempts in
# all, each printed); the step fails only if every attempt misses. A real
# regression misses all three.
limit="${KASPAR_REMOTE_ICEORYX2_LIMIT:-2.5}"
attempt=1
while :; do
    rm -f "$out/remote.jsonl"
    if [ "$attempt" -eq 1 ]; then
        cargo bench -p kaspar-remote --features iceoryx2 --bench remote -- --quick
    else
        echo "remote: attempt $attempt of 3, iceoryx2/raw and iceoryx2/kaspar only"
        cargo bench -p kaspar-remote --features iceoryx2 --bench remote -- --quick \
            iceoryx2/raw iceoryx2/kaspar
    fi
    raw=$(p50 iceoryx2/raw)
    kaspar=$(p50 iceoryx2/kaspar)
    if [ -z "$raw" ] || [ -z "$kaspar" ]; then
        echo "remote: no p50 for iceoryx2/raw or iceoryx2/kaspar in $out/remote.jsonl" >&2
        exit 1
    fi
    if awk -v raw="$raw" -v k="$kaspar" -v limit="$limit" -v attempt="$attempt" 'BEGIN {
        ratio = k / raw
        printf "remote: attempt %d: p50 iceoryx2/kaspar %.0f ns / iceoryx2/raw %.0f ns = %.2fx (target 1.5x: %s; guard %sx)\n", attempt, k, raw, ratio, (ratio <= 1.5 ? "met" : "missed"), limit
        exit !(ratio <= limit)
    }'; then
        break
    fi
    if [ "$attempt" -ge 3 ]; then
        echo "remote: the round trip through kaspar-remote is more than the guard times the raw iceoryx2 one in all three attempts" >&2
        exit 1
    fi
    attempt=$((attempt + 1))
done
