#!/usr/bin/env bash
# Tracing (kaspar's feature `tracing`, kaspar-remote's and the root
# package's of the same name): a span per handled message, with its cause
# as parent or link, across fast_send, queues, groups and kaspar-remote
# frames.
#
# The root package's `tracing` feature is opt-in and the test that needs
# it declares `required-features`, so the README's `cargo test --workspace`
# never compiles kaspar with the feature (as for `metrics`). This step
# builds it with it:
#   1. clippy (-D warnings) on kaspar and kaspar-remote with the feature,
#      and on the suite's test, bench and guide chapter that use it;
#   2. kaspar's unit tests of the trace module and kaspar-remote's of the
#      frame (the trace context after the header: written, read, refused
#      when malformed);
#   3. tests/tracing_causality.rs: a three-hop chain feed -> strategy ->
#      gateway (inline, queued, over the loopback transport) rebuilt from
#      the recorded spans, and every delivery kind's fields;
#   4. the guide's chapter (book/src/tracing.md) as doctests;
#   5. the rustdoc of both crates with the feature;
#   6. benches/tracing.rs, quick: it asserts one span per message under a
#      recording registry and none under a filter that turns them away
#      (its timings are printed, never gated on).
# Nothing to install: the crates come from the lock file.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo clippy -p kaspar -p kaspar-remote --features tracing --all-targets -- -D warnings
cargo clippy --features tracing --lib --test tracing_causality --bench tracing -- -D warnings
cargo test -p kaspar --features tracing --lib actor::trace
cargo test -p kaspar-remote --features tracing --lib frame
cargo test --features tracing --test tracing_causality
cargo test --features tracing --doc guide::tracing
RUSTDOCFLAGS="-D warnings" cargo doc -p kaspar -p kaspar-remote --features tracing --no-deps --quiet
cargo bench --features tracing --bench tracing -- --quick
echo "tracing: spans, causality and frames checked"
