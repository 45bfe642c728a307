#!/usr/bin/env bash
# kaspar-remote with its iceoryx2 back end (`cargo test --workspace` builds
# it without): clippy and rustdoc with the feature, its tests, and the
# round-trip bench in quick mode, gated on the issue's acceptance: the
# round trip through kaspar-remote (`iceoryx2/kaspar`: an `ask` to an
# exported actor, waited on with `Node::wait_polling`) within 1.5x of raw iceoryx2 (`iceoryx2/raw`), p50, same
# run. The trybuild ui cases of kaspar-remote run in the workspace test
# step, not here (KASPAR_REMOTE_UI=skip).
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo clippy -p kaspar-remote --features iceoryx2 --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc -p kaspar-remote --features iceoryx2 --no-deps --quiet

KASPAR_REMOTE_UI=skip cargo test -p kaspar-remote --features iceoryx2

out="${CARGO_TARGET_DIR:-target}/kaspar-bench"
rm -f "$out/remote.jsonl"
cargo bench -p kaspar-remote --features iceoryx2 --bench remote -- --quick

p50() {
    grep "\"case\":\"$1\",\"metric\":\"p50_ns\"" "$out/remote.jsonl" |
        sed -E 's/.*"value":([0-9.eE+-]+).*/\1/'
}
raw=$(p50 iceoryx2/raw)
kaspar=$(p50 iceoryx2/kaspar)
if [ -z "$raw" ] || [ -z "$kaspar" ]; then
    echo "remote: no p50 for iceoryx2/raw or iceoryx2/kaspar in $out/remote.jsonl" >&2
    exit 1
fi
awk -v raw="$raw" -v k="$kaspar" 'BEGIN {
    ratio = k / raw
    printf "remote: p50 iceoryx2/kaspar %.0f ns / iceoryx2/raw %.0f ns = %.2fx (limit 1.5x)\n", k, raw, ratio
    if (ratio > 1.5) {
        print "remote: the round trip through kaspar-remote is more than 1.5x the raw iceoryx2 one" > "/dev/stderr"
        print "remote: (each process busy-polls on one thread, as the raw case does; a machine with fewer than 2 free cores queues them)" > "/dev/stderr"
        exit 1
    }
}'
