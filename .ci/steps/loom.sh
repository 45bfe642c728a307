#!/usr/bin/env bash
# Loom models of the lock-free ring, the sharded queue, the batched drain's
# wakeup, the pool's depot, the actor lock's owner/bump protocol, and ask's
# reply slot (wake-up, drop race, recycling). Own target dir: --cfg loom
# would otherwise invalidate the normal build cache.
set -euo pipefail
cd "$(dirname "$0")/../.."
export RUSTFLAGS="--cfg loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
cargo test -p kaspar --release --target-dir target/loom \
    --test loom_mailbox --test loom_pool --test loom_lock --test loom_ask
