#!/usr/bin/env bash
# Runs the examples that are not benchmarks, on small inputs: each asserts
# its own result (trading_desk: every approved order reached the gateway;
# ping_pong: every round trip came back), so a wrong answer fails here.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo run --release --example trading_desk -- 20000
cargo run --release --example ping_pong -- 20000
