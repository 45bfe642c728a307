#!/usr/bin/env bash
# The paper's case study, smoke-sized: a 2-second tick-to-book run over
# loopback UDP (1 s per configuration). Fails if any balance, the book
# check, or the simulation replay check fails; the latency numbers are
# printed, not judged.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo run --release --example tick_to_book -- --secs 2
