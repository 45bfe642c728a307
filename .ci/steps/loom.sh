#!/usr/bin/env bash
# Loom models of the lock-free ring, the sharded queue, the segmented queue
# (its installs against a consumer that frees spare blocks), the batched drain's
# wakeup, the pool's depot, the actor lock's owner/bump protocol, ask's
# reply slot (wake-up, drop race, recycling) and the reply ports' push
# (two first routes to one sink racing), and the runtime's state
# machine around them: start's hand-over racing a momentary holder and the
# thread-bound home check (loom_handover), a group's mark and its members'
# entered marks across bump (loom_group_mark), and the deadlock registry
# while a run loop bumps or takes its lock back, with the recheck
# (loom_registry); and the actor pool's scheduling: a pooled actor's
# idle -> scheduled transition under racing producers and close, for every
# mailbox kind (loom_sched_mailbox), the workers' sleep and wake-up
# (loom_sched_idle), and a worker's next-to-run slot, which the pool's
# monitor may steal from (loom_next_slot), and what an actor's activations
# carry from one to the next, handed between two workers (loom_carried; its
# preemption bound is fixed at 2 in the model), and the seats a tokio-hosted
# pool's runners wait in, which a schedule wakes (loom_host_seats). Own
# target dir: --cfg loom would otherwise invalidate
# the normal build cache.
set -euo pipefail
cd "$(dirname "$0")/../.."
export RUSTFLAGS="--cfg loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
# The --cfg loom build has code of its own (the models, and the runtime's
# loom-only paths), which the clippy step never compiles: a lint there
# slipped through once (clippy 1.95's collapsible_match in a model).
cargo clippy -p kaspar --release --target-dir target/loom --tests -- -D warnings
cargo test -p kaspar --release --target-dir target/loom \
    --test loom_mailbox --test loom_pool --test loom_lock --test loom_ask \
    --test loom_handover --test loom_group_mark --test loom_registry \
    --test loom_sched_mailbox --test loom_sched_idle --test loom_next_slot \
    --test loom_carried --test loom_host_seats
