#!/usr/bin/env bash
# Whole systems under one seeded scheduler (kaspar's feature `sim`, the
# root package's feature of the same name): `kaspar::sim`.
#
# The root package's `sim` feature is opt-in, and the tests and bench that
# need it declare `required-features`, so `cargo test --workspace` skips
# them and never compiles kaspar with the feature. This step builds them
# with it:
#   1. clippy (-D warnings) on kaspar (all targets) and on the suite's
#      sim tests, bench and the trading desk example, with the feature;
#   2. kaspar's unit tests of the simulator (its generator against
#      SplitMix64's reference values, PCT's change points) and of its
#      actors counting as hosted (an awaited `ask` does not spin for
#      them), its rustdoc example, and the guide's chapter (book/src/simulating-a-system.md)
#      as doctests, the worked failing seed included;
#   3. tests/sim_system.rs (every placement on one thread, same seed same
#      trace, faults, refused waits), tests/sim_bugs.rs (planted bugs
#      found and replayed exactly by both strategies, their fixes passing)
#      tests/sim_shutdown.rs (a shutdown stops actors newest first, one
#      at a time, as a live one does: a pipeline drains, nothing refused)
#      and tests/sim_trading_desk.rs; and the runtime's own delivery,
#      supervision, pool and allocation tests with the feature on, which
#      must behave as without it on every thread that is not a
#      simulator's;
#   4. the seed sweep: the trading desk example for 1,000 seeds without
#      faults and 10,000 with `Faults::some()`, in release (a few seconds);
#   5. kaspar-remote under the simulator (its `sim` feature): network
#      faults, peer death, the planted lost reply;
#   6. benches/sim.rs in quick mode: it runs and prints its table (no
#      timing gate: the numbers depend on the machine's load).
# Everything it needs comes from crates.io through cargo; nothing to
# install.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo clippy -p kaspar --all-targets --features sim -- -D warnings
cargo clippy -p kaspar-suite --features sim --lib --test sim_system --test sim_shutdown \
    --test sim_bugs --test sim_trading_desk --bench sim \
    --example trading_desk -- -D warnings
cargo test -p kaspar --features sim --lib -- system::sim system::hosted_tests
cargo test -p kaspar --features sim --doc sim
cargo test -p kaspar-suite --features sim --test sim_system --test sim_shutdown --test sim_bugs \
    --test sim_trading_desk
cargo test -p kaspar-suite --features sim --test delivery --test supervision \
    --test pool_sched_behaviour --test alloc --test group
cargo test --release -p kaspar-suite --features sim --test sim_trading_desk \
    -- --ignored
cargo clippy -p kaspar-remote --all-targets --features sim -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc -p kaspar-remote --features sim --no-deps --quiet
cargo test -p kaspar-remote --features sim --test sim_net
cargo bench -p kaspar-suite --features sim --bench sim -- --quick
echo "sim: whole-system simulation checked"
