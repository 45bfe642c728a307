#!/usr/bin/env bash
# What each of kaspar's observability features costs when compiled in
# (issue 29): the dispatch paths' instructions (callgrind, deterministic),
# the peers tables' kaspar rows (each as a ratio to crossbeam-channel in
# the same run, so that runs of different builds can be set side by side),
# and tick_to_book's socket-to-book latency, for the default build and for
# each feature: `metrics`, `tracing` (compiled in, no subscriber: what a
# service pays before it turns spans on), `console` (with the console
# serving, as `--console` runs it).
#
#   bash benches/feature_costs.sh            # all three parts
#   PARTS=callgrind bash benches/feature_costs.sh
#
# Writes target/kaspar-bench/features.jsonl (table = features; case =
# "<feature>/<what>", metric as the source row's) and prints markdown.
# The flight recorder is not a cargo feature (it is attached at spawn):
# its cost per message is measured by tests and reported in its chapter;
# tracing with a subscriber recording: `cargo bench --features tracing
# --bench tracing`.
set -euo pipefail
cd "$(dirname "$0")/.."

PARTS=${PARTS:-callgrind peers tick_to_book}
out="${CARGO_TARGET_DIR:-target}/kaspar-bench"
mkdir -p "$out"
sets=(default metrics tracing console)
features_of() { [ "$1" = default ] && echo "" || echo "$1"; }

for part in $PARTS; do
    for set in "${sets[@]}"; do
        f=$(features_of "$set")
        case "$part" in
        callgrind)
            N=${N:-200000} FEATURES="$f" bash benches/callgrind.sh > /dev/null
            cp "$out/callgrind${f:+-$f}.jsonl" "$out/features-callgrind-$set.jsonl" 2>/dev/null ||
                cp "$out/callgrind.jsonl" "$out/features-callgrind-$set.jsonl"
            ;;
        peers)
            rm -f "$out/peers.jsonl"
            cargo run --quiet --release --manifest-path benches/peers/Cargo.toml \
                ${f:+--features "$f"} -- --quick > /dev/null
            cp "$out/peers.jsonl" "$out/features-peers-$set.jsonl"
            ;;
        tick_to_book)
            rm -f "$out/tick_to_book.jsonl"
            extra=()
            [ "$set" = console ] && extra=(--console 127.0.0.1:0)
            cargo run --quiet --release ${f:+--features "$f"} --example tick_to_book -- \
                --secs 4 --replay off "${extra[@]}" > /dev/null
            cp "$out/tick_to_book.jsonl" "$out/features-tick_to_book-$set.jsonl"
            ;;
        *) echo "feature_costs: unknown part $part" >&2; exit 2 ;;
        esac
        echo "feature_costs: $part with ${set} done" >&2
    done
done

python3 - "$out" "${sets[@]}" <<'PY'
import json, os, sys
out, sets = sys.argv[1], sys.argv[2:]

def rows(part, s):
    path = os.path.join(out, f"features-{part}-{s}.jsonl")
    if not os.path.exists(path):
        return {}
    got = {}
    for line in open(path):
        r = json.loads(line)
        got[(r["case"], r["metric"])] = r["value"]
    return got

picks = {
    "callgrind": [(c, "instructions") for c in
                  ("fast_send", "fast_send_reply", "fast_send_void", "fast_send_intra_group", "tell")],
    "peers": [(c, "time_vs_crossbeam") for c in
              ("kaspar/thread/ask", "kaspar/thread/tell", "kaspar/thread/ping_pong",
               "kaspar/fast_send/ask", "kaspar/group/ping_pong")],
    "tick_to_book": [(c, m) for c in ("one_thread_es_book", "two_stage_es_book")
                     for m in ("p50_ns", "p99_ns")],
}
lines = []
print("| part | case | metric | " + " | ".join(sets) + " |")
print("|---|---|---|" + "---:|" * len(sets))
for part, keys in picks.items():
    data = {s: rows(part, s) for s in sets}
    if not any(data.values()):
        continue
    for case, metric in keys:
        vals = [data[s].get((case, metric)) for s in sets]
        if all(v is None for v in vals):
            continue
        cells = ["" if v is None else (f"{v:.0f}" if v >= 100 else f"{v:.2f}") for v in vals]
        print(f"| {part} | {case} | {metric} | " + " | ".join(cells) + " |")
        for s, v in zip(sets, vals):
            if v is not None:
                lines.append({"table": "features", "case": f"{s}/{part}/{case}",
                              "metric": metric, "value": v})
with open(os.path.join(out, "features.jsonl"), "w") as fh:
    for l in lines:
        fh.write(json.dumps(l) + "\n")
print(f"\nJSON lines: {os.path.join(out, 'features.jsonl')}")
PY
