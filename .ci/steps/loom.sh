#!/usr/bin/env bash
# Loom models of the lock-free ring, the sharded queue, the batched drain's
# wakeup, and the pool's depot. Own target dir: --cfg loom would otherwise
# invalidate the normal build cache.
set -euo pipefail
export RUSTFLAGS="--cfg loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
cargo test -p kaspar --release --target-dir target/loom \
    --test loom_mailbox --test loom_pool
