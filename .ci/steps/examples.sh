#!/usr/bin/env bash
# Runs the examples that are not benchmarks, on small inputs: each asserts
# its own result (trading_desk: every approved order reached the gateway;
# ping_pong: every round trip came back; remote_desk: three processes over
# iceoryx2, one killed mid-run, and the journal replays to the live output),
# so a wrong answer fails here.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo run --release --example trading_desk -- 20000
cargo run --release --example ping_pong -- 20000
cargo run --release --example remote_desk | grep "journal replay: identical"
