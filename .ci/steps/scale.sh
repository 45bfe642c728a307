#!/usr/bin/env bash
# Smoke test of the scale bench: `cargo bench --bench scale -- --quick`
# spawns 1,000 own-thread actors, 10,000 and then 100,000 pooled ones (each
# case in a child process), sends each one message, shuts down, and
# panics unless every message was handled once and every actor stopped
# once. Checks that scale.jsonl has every case and metric; timings and
# memory never gate (they are reported against the targets in the
# bench's output and in book/src/threads-groups-pool.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

out="${CARGO_TARGET_DIR:-target}/kaspar-bench"
rm -f "$out/scale.jsonl"

cargo bench --bench scale -- --quick

fail=0
for row in thread/spawn:ns_per_actor thread/spawn:bytes_per_actor \
    pool/spawn:ns_per_actor pool/spawn:bytes_per_actor pool/spawn:state_bytes \
    pool/100k:spawn_s pool/100k:send_s pool/100k:rss_mib pool/100k:shutdown_s; do
    case=${row%%:*}
    metric=${row#*:}
    if ! grep -q "\"table\":\"scale\",\"case\":\"$case\",\"metric\":\"$metric\"" "$out/scale.jsonl"; then
        echo "scale: no $metric row for $case in $out/scale.jsonl" >&2
        fail=1
    fi
done
exit "$fail"
