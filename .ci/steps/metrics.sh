#!/usr/bin/env bash
# Metrics (kaspar's feature `metrics`, the root package's feature of the
# same name): every actor's counters, queue depth and latency percentiles
# published through the `metrics` facade and scraped from the Prometheus
# exporter's `/metrics` page.
#
# The root package's `metrics` feature is opt-in, and the example, test and
# bench that need it declare `required-features`, so the README's
# `cargo test --workspace` skips them and never compiles kaspar with the
# feature (feature unification would otherwise turn it on for every test of
# the workspace). This step builds them with it:
#   1. clippy (-D warnings) on the suite's library and the three targets;
#   2. kaspar's unit tests of the collector, and its doctests of the API;
#   3. tests/metrics_scrape.rs: a system of a few actors, the exporter on a
#      localhost port, a scrape over HTTP, exact counts checked;
#   4. the guide's chapter (book/src/observing.md) as doctests;
#   5. examples/metrics.rs for 2 seconds on a free localhost port: it
#      fetches its own page and fails if what it drove is not on it.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo clippy --features metrics --lib --test metrics_scrape --example metrics \
    --bench metrics -- -D warnings
cargo test -p kaspar --features metrics --lib system::metrics
cargo test -p kaspar --features metrics --doc system::metrics
cargo test --features metrics --test metrics_scrape
cargo test --features metrics --doc guide::observing

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cargo run --features metrics --example metrics -- "$port" 2
echo "metrics: scraped, counted and checked"
